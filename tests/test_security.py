"""The security baseline: who can reach the cluster, what its pods may do, and the checks
that stay open (each with a reason, in security/ and in docs/design/security.md)."""

from __future__ import annotations

import re

import pytest
import yaml
from conftest import project_run
from support.security import DAEMONSET, EXPORTER, JOB, PLUGIN, check_open_checks_documented, check_pods, open_checks, workloads

from components.cluster.kubeconfig import entra_kubeconfig
from tools.azure_mocks import AKS_ENTRA_SERVER_ID, MOCK_CLIENT
from tools.mock_engine import ProgramRun, Secret
from tools.render import kubernetes_objects, manifest
from tools.stack_files import ROOT, stacks

AKS = "azure-native:containerservice:ManagedCluster"
ROLE = "azure-native:authorization:RoleAssignment"
K8S_PROVIDER = "pulumi:providers:kubernetes"
NETPOL = "kubernetes:networking.k8s.io/v1:NetworkPolicy"
ENTRA = {"mode": "entra"}
AKS_RBAC_CLUSTER_ADMIN = "b1ff04bb-8a4e-4dc4-8eb5-8693973ce19b"


def cluster(run: ProgramRun) -> dict:
    return run.one(AKS).inputs


# --------------------------------------------------------------------------- access


def test_the_guides_cluster_keeps_local_accounts_and_kubernetes_rbac(dev: ProgramRun):
    aks = cluster(dev)
    assert aks["enableRBAC"] is True
    assert aks["disableLocalAccounts"] is False
    assert "aadProfile" not in aks and "apiServerAccessProfile" not in aks
    assert dev.of_type(ROLE) == []


def test_entra_access_turns_local_accounts_off_and_authorizes_with_azure_rbac(program):
    group = "0d9f7c3a-5b1e-4f2a-9c8d-7e6f5a4b3c2d"
    aks = cluster(program(access={**ENTRA, "adminGroupObjectIds": [group]}))
    assert aks["disableLocalAccounts"] is True
    assert aks["aadProfile"] == {"managed": True, "enableAzureRBAC": True, "adminGroupObjectIDs": [group]}


@pytest.mark.parametrize("deployer", ["ServicePrincipal", "User"])
def test_the_identity_running_pulumi_up_becomes_cluster_admin_before_any_kubernetes_object(program, deployer):
    run = program(access={**ENTRA, "deployerType": deployer})
    role = run.one(ROLE)
    assert role.inputs["principalId"] == MOCK_CLIENT["objectId"]
    assert role.inputs["principalType"] == deployer, "Azure refuses a principalType that does not match"
    assert role.inputs["scope"] == "gpu-cluster-aks-id", "the cluster's ID (as the mocks name it): scoped to this cluster only"
    assert role.inputs["roleDefinitionId"] == (
        f"/subscriptions/{MOCK_CLIENT['subscriptionId']}/providers/Microsoft.Authorization/roleDefinitions/{AKS_RBAC_CLUSTER_ADMIN}"
    )
    # Every Kubernetes object waits for it; the provider does not hang on it (test_grant_replacement.py).
    objects = [r for r in run.resources if r.type.startswith("kubernetes:") and r.type != K8S_PROVIDER]
    assert objects and all(role.urn in r.dependencies for r in objects)
    assert role.urn not in run.one(K8S_PROVIDER).dependencies


def test_no_role_assignment_when_the_deployer_is_in_an_admin_group(program):
    run = program(access={**ENTRA, "deployerType": "none", "adminGroupObjectIds": ["0d9f7c3a-5b1e-4f2a-9c8d-7e6f5a4b3c2d"]})
    assert run.of_type(ROLE) == []


def test_an_entra_kubeconfig_signs_in_with_the_az_login_not_a_device_code(program):
    run = program(access=ENTRA)
    out = run.outputs["kubeconfig"]
    assert out.secret
    user = yaml.safe_load(out.value)["users"][0]["user"]["exec"]
    assert user["command"] == "kubelogin"
    assert user["args"] == ["get-token", "--login", "azurecli", "--server-id", AKS_ENTRA_SERVER_ID]
    assert isinstance(run.one(K8S_PROVIDER).inputs["kubeconfig"], Secret)


def test_the_kubeconfig_rewrite_leaves_token_users_alone():
    token = "apiVersion: v1\nkind: Config\nusers:\n- name: u\n  user:\n    token: abc\n"
    assert yaml.safe_load(entra_kubeconfig(token)) == yaml.safe_load(token)


def test_authorized_ip_ranges_reach_the_api_server_profile(program):
    aks = cluster(program(access={"authorizedIpRanges": ["203.0.113.0/24"]}))
    assert aks["apiServerAccessProfile"] == {"authorizedIPRanges": ["203.0.113.0/24"]}


# --------------------------------------------------------------------------- network


def test_the_cluster_runs_azure_cni_overlay_with_cilium_policy(dev: ProgramRun):
    net = cluster(dev)["networkProfile"]
    assert {k: net[k] for k in ("networkPlugin", "networkPluginMode", "networkDataplane", "networkPolicy")} == {
        "networkPlugin": "azure",
        "networkPluginMode": "overlay",
        "networkDataplane": "cilium",
        "networkPolicy": "cilium",
    }


def test_calico_enforces_policy_on_the_azure_dataplane(program):
    net = cluster(program(network={"policy": "calico"}))["networkProfile"]
    assert (net["networkDataplane"], net["networkPolicy"]) == ("azure", "calico")


def test_every_pod_the_program_runs_is_selected_by_a_network_policy(dev: ProgramRun):
    policies = {
        (p.inputs["metadata"]["namespace"], tuple(sorted(p.inputs["spec"]["podSelector"]["matchLabels"].items())))
        for p in dev.of_type(NETPOL)
    }
    assert len(workloads(dev)) == 3, "device plugin, DCGM exporter, Job"
    for workload in workloads(dev):
        workload = workload.inputs
        labels = workload["spec"]["template"]["metadata"]["labels"]
        assert (workload["metadata"]["namespace"], tuple(sorted(labels.items()))) in policies, workload["metadata"]["name"]


def test_the_device_plugin_may_not_talk_to_anything_and_the_job_only_to_dns_and_https(dev: ProgramRun):
    by_name = {p.inputs["metadata"]["name"]: p.inputs["spec"] for p in dev.of_type(NETPOL)}
    plugin, job = by_name["nvidia-device-plugin-deny-all"], by_name["mnist-proof-egress"]
    for spec in (plugin, job):
        assert spec["policyTypes"] == ["Ingress", "Egress"] and spec["ingress"] == []
    assert plugin["egress"] == []
    ports = [sorted((p["protocol"], p["port"]) for p in rule["ports"]) for rule in job["egress"]]
    assert ports == [[("TCP", 53), ("UDP", 53)], [("TCP", 443)]]


def test_a_job_without_egress_may_reach_nothing_and_trains_on_digits_it_draws(program):
    run = program(mnistJob={"egress": False})
    [policy] = [p.inputs for p in run.of_type(NETPOL) if p.inputs["metadata"]["name"] == "mnist-proof-egress"]
    assert policy["spec"]["policyTypes"] == ["Ingress", "Egress"]
    assert policy["spec"]["egress"] == [] and policy["spec"]["ingress"] == []
    args = run.one(JOB).inputs["spec"]["template"]["spec"]["containers"][0]["args"]
    assert args[args.index("--data") + 1] == "synthetic"


def test_the_dcgm_exporter_admits_scrapes_from_inside_the_cluster_only_and_calls_nothing(dev: ProgramRun):
    spec = {p.inputs["metadata"]["name"]: p.inputs["spec"] for p in dev.of_type(NETPOL)}["dcgm-exporter-scrapes-only"]
    assert spec["podSelector"]["matchLabels"] == {"app.kubernetes.io/name": "dcgm-exporter"}
    assert spec["ingress"] == [{"from": [{"namespaceSelector": {}}], "ports": [{"port": 9400, "protocol": "TCP"}]}]
    assert spec["egress"] == [], "no ipBlock: nothing outside the cluster reaches it, and it calls nothing"


# --------------------------------------------------------------------------- upgrades, tier


def test_the_tier_reaches_the_cluster_sku(program):
    assert cluster(program(clusterTier="Standard"))["sku"] == {"name": "Base", "tier": "Standard"}


# --------------------------------------------------------------------------- pods


@pytest.mark.parametrize("stack", stacks())
def test_no_pod_gets_an_api_token_escalates_or_keeps_a_capability(stack):
    check_pods(project_run(stack))


def test_the_job_runs_as_a_high_non_root_uid_with_a_writable_tmp_and_its_script_read_only(dev: ProgramRun):
    pod = dev.one(JOB).inputs["spec"]["template"]["spec"]
    assert pod["securityContext"]["runAsNonRoot"] is True and pod["securityContext"]["runAsUser"] >= 10000
    assert pod["containers"][0]["volumeMounts"] == [
        {"name": "scratch", "mountPath": "/tmp"},
        {"name": "proof", "mountPath": "/opt/aks-gpu", "readOnly": True},
    ]
    assert "emptyDir" in pod["volumes"][0]
    assert pod["volumes"][1]["configMap"]["defaultMode"] == 0o444


# Every kind the program writes into a cluster: the device plugin with MIG (its capability), the
# DCGM exporter, a proof Job pinned by tag, their NetworkPolicies, namespaces and ConfigMap.
EVERY_KIND = {
    "gpuPool": {"vmSize": "Standard_NC24ads_A100_v4", "migProfile": "MIG1g"},
    "mnistJob": {"image": "example.azurecr.io/mnist:gpu"},
}


@pytest.mark.parametrize("stack", [*stacks(), "every kind"])
def test_no_rendered_kubernetes_object_carries_a_checkov_annotation(stack, program):
    """A linter's exemption is no part of a cluster object, least of all of one adopted from its owner:
    Checkov's skips live in security/checkov-kubernetes.yaml."""
    run = program(**EVERY_KIND) if stack == "every kind" else project_run(stack)
    kinds = {manifest(r)["kind"] for r in kubernetes_objects(run)}
    if stack == "every kind":
        assert {"DaemonSet", "Job", "NetworkPolicy", "ConfigMap", "Namespace", "Service"} <= kinds
    for r in kubernetes_objects(run):
        metadata = manifest(r)["metadata"]
        for found in (
            metadata.get("annotations") or {},
            (r.inputs.get("spec", {}).get("template", {}).get("metadata") or {}).get("annotations") or {},
        ):
            assert not [a for a in found if a.startswith("checkov.io/")], f"{manifest(r)['kind']} {metadata['name']}"


def needs(workload) -> set[str]:
    """What of the checks security/checkov-kubernetes.yaml skips this workload's containers would fail."""
    pod = workload.inputs["spec"]["template"]["spec"]
    found = set()
    for container in pod["containers"]:
        ctx, pod_ctx = container.get("securityContext") or {}, pod.get("securityContext") or {}
        if not (ctx.get("runAsNonRoot", pod_ctx.get("runAsNonRoot")) and ctx.get("runAsUser", pod_ctx.get("runAsUser", 0)) >= 10000):
            found.add("root")
        if (ctx.get("capabilities") or {}).get("add"):
            found.add("a capability")
        if not ctx.get("readOnlyRootFilesystem"):
            found.add("a writable root")
        if workload.type == DAEMONSET and not (container.get("livenessProbe") and container.get("readinessProbe")):
            found.add("no probe")
    return found


def test_only_the_device_plugin_and_the_exporter_need_the_checks_checkov_skips(program):
    """The skips hold for every object Checkov scans; this holds them to the two that need them:
    a Job that ran as root, or a new DaemonSet without probes, fails here."""
    run = program(**EVERY_KIND)
    assert {w.inputs["metadata"]["name"]: needs(w) for w in workloads(run)} == {
        PLUGIN: {"root", "no probe", "a capability"},  # the capability with MIG only: test_gpu_stack.py
        EXPORTER: {"root", "a capability", "a writable root"},
        run.one(JOB).inputs["metadata"]["name"]: set(),
    }


def test_every_kubernetes_check_checkov_skips_has_a_reason():
    settings = ROOT / "security" / "checkov-kubernetes.yaml"
    reasons = dict(re.findall(r"^\s*-\s*(CKV_K8S_\d+)\s*#\s*(.+)$", settings.read_text(), re.M))
    assert sorted(reasons) == sorted(yaml.safe_load(settings.read_text())["skip-check"]), "every skip has a reason comment"
    assert all(len(reason) > 20 for reason in reasons.values())


# --------------------------------------------------------------------------- open AKS checks


@pytest.mark.parametrize("stack", stacks())
def test_every_open_aks_check_has_a_reason_and_is_in_the_security_doc(stack):
    check_open_checks_documented(stack)


def test_prod_closes_what_dev_leaves_open_for_the_guides_sake():
    """The shipped samples' own settings, while the project has them (a team that replaced
    the samples deletes them: README, "Making it yours")."""
    if not all((ROOT / "security" / f"checkov-aks-{sample}.yaml").exists() for sample in ("dev", "prod")):
        pytest.skip("the samples' Checkov settings are gone")
    assert set(open_checks("dev")) - set(open_checks("prod")) == {"CKV_AZURE_141", "CKV_AZURE_171"}


def test_the_runners_login_method_wins_over_one_written_into_the_kubeconfig():
    """kubelogin prefers AAD_LOGIN_METHOD over --login (Azure/kubelogin options.go
    UpdateFromEnv), and an exec plugin's env overrides the caller's: the workflows' setting
    (workloadidentity) must reach kubelogin, so a kubeconfig's own value is dropped."""
    kubeconfig = (
        "apiVersion: v1\nkind: Config\nusers:\n- name: u\n  user:\n    exec:\n      command: kubelogin\n"
        "      args: [get-token, --login, devicecode]\n"
        "      env: [{name: AAD_LOGIN_METHOD, value: devicecode}, {name: KEEP, value: 'yes'}]\n"
    )
    exec_ = yaml.safe_load(entra_kubeconfig(kubeconfig))["users"][0]["user"]["exec"]
    assert exec_["env"] == [{"name": "KEEP", "value": "yes"}]
    assert exec_["args"] == ["get-token", "--login", "azurecli"]
