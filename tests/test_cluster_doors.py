"""Who may reach the cluster, said by every preview and `make render`: the guide's defaults a new
stack keeps (local accounts, an API server any address may reach, one System node), each with
the key that changes it, and the role the identity that runs `pulumi up` needs where Entra ID
and Azure RBAC decide it, with the `az role assignment create` line at the cluster's scope."""

from __future__ import annotations

import json

import pytest
from conftest import run_cached
from support.guide_example import EXAMPLE, STACK_FILE
from support.plan import plan_infos, planned_by

from components.cluster import access_lines, cluster_facts
from tools import render
from tools.azure_mocks import OfflineReader

CLUSTER_ID = (
    "/subscriptions/33333333-3333-3333-3333-333333333333/resourcegroups/ml-rg/providers/Microsoft.ContainerService/managedClusters/ml-prod"
)
ROLE = "Azure Kubernetes Service RBAC Cluster Admin"
# The dev stack with a size Azure still has, so a deployment gets past preflight.
T4 = {"name": "gpu", "vmSize": "Standard_NC4as_T4_v3", "nodeCount": 1}


def said(lines: list[str], lead: str) -> list[str]:
    return [line for line in lines if line.startswith(lead)]


@pytest.mark.parametrize("preview", [True, False])
def test_a_new_stack_is_told_each_guide_default_it_keeps_with_the_key_that_changes_it(preview):
    plan = planned_by(OfflineReader(), "dev", preview, gpuPool=T4)
    lines = said(plan_infos(plan), "cluster:")
    assert len(lines) == 3
    local, open_, system = lines
    assert "local accounts on" in local and "aks-gpu:access.mode: entra" in local
    assert "answers any address" in open_ and "aks-gpu:access.authorizedIpRanges" in open_
    assert "one System node (Standard_D2s_v5)" in system and "aks-gpu:systemPool.nodeCount" in system


def test_the_render_prints_the_defaults_a_new_stack_keeps():
    summary = render.unfold(render.summary(run_cached("dev")[0], render.ROOT / "build"))
    assert len(said(summary.splitlines(), "cluster: ")) == 3


def test_a_default_the_stack_changes_is_not_said():
    plan = planned_by(
        OfflineReader(),
        "dev",
        systemPool={"nodeCount": 3},
        access={"mode": "entra", "authorizedIpRanges": ["203.0.113.0/24"], "deployerObjectId": "11111111-1111-1111-1111-111111111111"},
    )
    assert [line for line in said(plan_infos(plan), "cluster:") if "guide" in line or "System node" in line] == []


def test_a_created_entra_cluster_says_who_is_granted_the_role_and_what_granting_needs():
    pinned = "11111111-1111-1111-1111-111111111111"
    [line] = said(plan_infos(planned_by(OfflineReader(), "prod", access={"mode": "entra", "deployerObjectId": pinned})), "cluster: Entra")
    assert f"grants object ID {pinned} {ROLE} on the cluster" in line
    assert "Microsoft.Authorization/roleAssignments/write" in line
    group = {"mode": "entra", "deployerType": "none", "adminGroupObjectIds": ["22222222-2222-2222-2222-222222222222"]}
    [line] = said(plan_infos(planned_by(OfflineReader(), "prod", access=group)), "cluster: Entra")
    assert "nothing granted" in line and "aks-gpu:access.adminGroupObjectIds" in line


@pytest.mark.parametrize("preview", [True, False])
def test_an_existing_azure_rbac_cluster_names_the_deployers_role_and_the_az_line_at_its_scope(preview):
    done, _ = run_cached("ml-prod", preview, stack_file=STACK_FILE)
    [line] = said(done.infos, "kubernetes: ml-rg/ml-prod authorizes")
    assert f"needs {ROLE} on it" in line
    assert f'`az role assignment create --role "{ROLE}" --assignee <the identity\'s object ID> --scope {CLUSTER_ID}`' in line
    assert "RBAC Admin and RBAC Writer do not allow" in line


def test_an_existing_cluster_without_entra_id_gets_no_role_line(tmp_path):
    saved = json.loads((EXAMPLE / "cluster.json").read_text())
    saved["aadProfile"] = None
    (tmp_path / "cluster.json").write_text(json.dumps(saved))
    done, _ = run_cached(
        "ml-prod",
        stack_file=STACK_FILE,
        preflight={"clusterFile": str(tmp_path / "cluster.json"), "kubernetesFile": str(EXAMPLE / "kubernetes.json")},
    )
    assert said(done.infos, "kubernetes: ml-rg/ml-prod") == []


def test_an_entra_cluster_with_kubernetes_rbac_says_the_role_comes_from_the_owners_binding():
    saved = json.loads((EXAMPLE / "cluster.json").read_text())
    saved["aadProfile"]["enableAzureRbac"] = False
    found = cluster_facts.parse(saved, "ml-rg")
    assert (found.entra, found.azure_rbac) == (True, False)
    [line] = access_lines.existing_cluster_role(found)
    assert "Kubernetes RBAC" in line and "ClusterRoleBinding" in line and ROLE not in line
