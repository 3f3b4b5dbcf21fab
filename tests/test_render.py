"""`make render`: the offline desired state a user can read, diff and kubectl-apply."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import yaml
from conftest import FIXTURE_STACKS, run_cached

from components.proof.mnist_job import ProofScript
from tools import render
from tools.mock_engine import ProgramRun
from tools.stack_files import stacks


def cached_runs(monkeypatch, **shape: Any) -> None:
    """render.main's runs, each the session's run of the same inputs (conftest's run_cached), with
    `shape` over the stack's config: main runs `run_program(stack, overrides=..., preview=True)`,
    with the stack's own file where it names one, as run_cached runs it."""

    def run(stack: str, overrides: dict[str, Any], preview: bool, stack_file: Path | None = None) -> ProgramRun:
        return run_cached(stack, preview=preview, stack_file=stack_file, **{**overrides, **shape})[0]

    monkeypatch.setattr(render, "run_program", run)


def test_render_writes_manifests_resources_and_outputs(tmp_path: Path, monkeypatch, capsys):
    # `make render` itself runs in CI, for every stack there is (.ci/run); here its main(), in
    # this process, on the tests' own dev stack (tests/fixtures/stacks/).
    cached_runs(monkeypatch)
    assert render.main(["--stack", "dev", "--out", str(tmp_path)]) == 0
    done = capsys.readouterr()
    manifests = list(yaml.safe_load_all((tmp_path / "manifests.yaml").read_text()))
    assert [(m["kind"], m["metadata"]["name"]) for m in manifests] == [
        ("Namespace", "gpu-resources"),
        ("Namespace", "gpu-workloads"),
        ("NetworkPolicy", "dcgm-exporter-scrapes-only"),
        ("NetworkPolicy", "nvidia-device-plugin-deny-all"),
        ("NetworkPolicy", "mnist-proof-egress"),
        ("ConfigMap", ProofScript(120, 0.9).config_map_name),
        ("Service", "dcgm-exporter"),
        ("DaemonSet", "dcgm-exporter"),
        ("DaemonSet", "nvidia-device-plugin-daemonset"),
        ("Job", "mnist-proof"),
    ], "namespaces first, so kubectl apply -f works in one pass"
    resources = json.loads((tmp_path / "resources.json").read_text())
    assert {"urn", "type", "name", "parent", "provider", "dependencies", "options", "inputs"} <= set(resources[0])
    assert json.loads((tmp_path / "outputs.json").read_text())["kubeconfig"] == "[secret]"
    assert "GPU pool: gpu Standard_NC6, 1 node, taints sku=gpu:NoSchedule" in done.out
    assert "retired by Azure on 2023-09-06" in done.out


def test_the_summary_ends_with_what_would_stop_pulumi_up_and_strict_exits_3_on_it(tmp_path: Path, monkeypatch, capsys):
    cached_runs(monkeypatch)
    # The dev stack's retired size would stop `up`: said last, and a CI gate's --strict fails on it.
    assert render.main(["--stack", "dev", "--out", str(tmp_path)]) == 0
    out = render.unfold(capsys.readouterr().out).splitlines()
    stopping = [w for w in out if w.startswith("  - ") and w.endswith("(a deployment stops here)")]
    assert len(stopping) == 1 and "retired by Azure" in stopping[0]
    assert out[-1] == "would stop `pulumi up`: 1 of the warnings"
    assert render.main(["--stack", "dev", "--out", str(tmp_path), "--strict"]) == render.STRICT_EXIT == 3
    # A current size: nothing would stop it, and --strict passes.
    cached_runs(monkeypatch, gpuPool={"vmSize": "Standard_NC4as_T4_v3"})
    assert render.main(["--stack", "dev", "--out", str(tmp_path), "--strict"]) == 0
    assert capsys.readouterr().out.splitlines()[-1] == "would stop `pulumi up`: nothing"


def test_manifests_carry_no_pulumi_internals_and_are_kubectl_shaped(tmp_path: Path):
    run = run_cached("dev")[0]
    render.write(run, tmp_path)
    for doc in yaml.safe_load_all((tmp_path / "manifests.yaml").read_text()):
        assert list(doc)[:3] == ["apiVersion", "kind", "metadata"]
        assert set(doc) <= set(render.MANIFEST_KEYS)


def test_a_config_error_is_one_line_and_exit_status_1(monkeypatch, capsys):
    real = render.run_program
    monkeypatch.setattr(
        render, "run_program", lambda stack, overrides, **kw: real(stack, overrides={**overrides, "gpuPool": {"minCount": 2}}, **kw)
    )
    assert render.main(["--stack", "dev", "--out", "unused"]) == 1
    err = capsys.readouterr().err
    assert (
        err
        == "error: invalid config aks-gpu:gpuPool: minCount is set without maxCount; set both to turn the cluster autoscaler on, or neither for a fixed nodeCount\n"
    )


def test_an_unknown_stack_is_reported(capsys):
    assert render.main(["--stack", "nosuchstack"]) == 2
    assert "Pulumi.nosuchstack.yaml" in capsys.readouterr().err


def test_the_arm_rendering_puts_inputs_where_arm_expects_them():
    template = render.arm_template(run_cached("prod")[0])
    by_type = {r["type"]: r for r in template["resources"]}
    aks = by_type["Microsoft.ContainerService/managedClusters"]
    assert aks["apiVersion"] == render.sdk_api_version("azure-native:containerservice:ManagedCluster")
    assert {"location", "sku", "identity", "properties"} <= set(aks)
    assert aks["properties"]["disableLocalAccounts"] is True
    assert not {"resourceGroupName", "resourceName", "location"} & set(aks["properties"])
    assert by_type["Microsoft.ContainerService/managedClusters/agentPools"]["name"] == "aks-gpu-prod/gpu"


def test_the_managed_gpu_pool_is_summarised_and_rendered_as_its_rest_body():
    run = run_cached("dev", preview=False, gpuPool={"dedicatedVhd": True, "vmSize": "Standard_NC4as_T4_v3"})[0]
    [pool] = [r for r in render.arm_template(run)["resources"] if r["type"].endswith("/agentPools")]
    assert (pool["apiVersion"], pool["name"]) == ("2026-08-01", "aks-gpu-dev/gpu")
    assert pool["properties"]["gpuProfile"] == {"driver": "Install", "nvidia": {"managementMode": "Managed"}}
    line = "GPU pool: gpu Standard_NC4as_T4_v3, 1 node, taints sku=gpu:NoSchedule (AKS-managed GPU stack, agentPools API 2026-08-01)"
    assert line in render.unfold(render.summary(run, render.ROOT / "build"))


# Every shape a stack can have: the entry point, one pool or several, each GPU stack.
T4, A100 = "Standard_NC4as_T4_v3", "Standard_NC24ads_A100_v4"
ENTRY_POINTS = {"new cluster": {}, "existing cluster": {"existingCluster": {"resourceGroupName": "team-rg", "name": "team-aks"}}}
POOL_SHAPES = {
    "one device-plugin pool": {"gpuPool": {"vmSize": T4}},
    "one aks-managed pool": {"gpuPool": {"vmSize": T4, "management": "aks-managed"}},
    "one gpu-operator pool": {"gpuPool": {"vmSize": T4, "management": "gpu-operator"}},
    "several pools, device-plugin and aks-managed": {
        "gpuPool": None,
        "gpuPools": {
            "t4": {"vmSize": T4, "spot": True, "minCount": 0, "maxCount": 2},
            "a100": {"vmSize": A100, "management": "aks-managed", "migProfile": "MIG1g"},
        },
    },
    "several gpu-operator pools": {
        "gpuPool": None,
        "gpuPools": {"a": {"vmSize": T4, "management": "gpu-operator"}, "b": {"vmSize": A100, "management": "gpu-operator"}},
    },
}


@pytest.mark.parametrize("shape", POOL_SHAPES)
@pytest.mark.parametrize("entry", ENTRY_POINTS)
def test_make_render_previews_every_mode_of_every_entry_point(entry, shape, tmp_path: Path, monkeypatch, capsys):
    """A preview's unknowns (a new cluster's resourceUID, which the managed pool takes) are
    shown as such, not a crash."""
    overrides: dict[str, Any] = {**ENTRY_POINTS[entry], **POOL_SHAPES[shape]}
    cached_runs(monkeypatch, **overrides)
    assert render.main(["--stack", "dev", "--out", str(tmp_path)]) == 0, capsys.readouterr().err
    out = render.unfold(capsys.readouterr().out)
    pools = overrides.get("gpuPools") or {"gpu": overrides["gpuPool"]}
    assert sorted(line.split()[2] for line in out.splitlines() if line.startswith("GPU pool: ")) == sorted(pools)
    template = json.loads((tmp_path / "azure.json").read_text())
    assert sorted(r["name"].split("/")[-1] for r in template["resources"] if r["type"].endswith("/agentPools")) == sorted(pools)
    resources = json.loads((tmp_path / "resources.json").read_text())
    managed = [r for r in resources if r["type"] == render.MANAGED_POOL_TYPE]
    assert all(
        r["inputs"]["clusterResourceUid"] == (render.UNKNOWN_MASK if entry == "new cluster" else "0123456789abcdef01234567")
        for r in managed
    )
    assert list(yaml.safe_load_all((tmp_path / "manifests.yaml").read_text()))
    assert json.loads((tmp_path / "outputs.json").read_text())["gpuPools"].keys() == pools.keys()


def test_make_render_previews_any_existing_cluster_and_says_what_it_assumed(tmp_path: Path, monkeypatch, capsys):
    """A team's cluster, not the shipped example's: the offline render cannot read it, so it
    answers for it with stated assumptions, whatever its name."""
    team = {"existingCluster": {"resourceGroupName": "ml-rg", "name": "ml-aks"}, "gpuPool": None, "gpuPools": {"t4": {"vmSize": T4}}}
    cached_runs(monkeypatch, **team)
    assert render.main(["--stack", "dev", "--out", str(tmp_path)]) == 0
    out = render.unfold(capsys.readouterr().out)
    assert (
        "offline: cluster ml-rg/ml-aks was not read; assumed: in eastus, Succeeded and running, Kubernetes 1.34.2, Azure CNI Overlay" in out
    )
    assert "set aks-gpu:preflight.clusterFile to a saved `az aks show --output json` to render your cluster" in out
    assert "network: aks-gpu:gpuPools.t4 joins Azure CNI Overlay: maxPods 250" in out
    [pool] = [r for r in json.loads((tmp_path / "azure.json").read_text())["resources"] if r["type"].endswith("/agentPools")]
    assert pool["name"] == "ml-aks/t4"


def test_make_render_reads_a_saved_az_aks_show_and_fits_the_pools_to_its_network(tmp_path: Path, monkeypatch, capsys):
    """tests/fixtures/clusters/ml-aks.json: the az CLI's own JSON (its spelling: vnetSubnetId,
    resourceUid) of a cluster in its own VNet on Azure CNI without overlay, with Entra ID."""
    saved = "tests/fixtures/clusters/ml-aks.json"
    team: dict[str, Any] = {
        "existingCluster": {"resourceGroupName": "ml-platform", "name": "ml-aks"},
        "gpuPool": None,
        "gpuPools": {"t4": {"vmSize": T4}},
        "preflight": {"clusterFile": saved},
    }
    cached_runs(monkeypatch, **team)
    assert render.main(["--stack", "dev", "--out", str(tmp_path)]) == 0
    out = render.unfold(capsys.readouterr().out)
    assert "assumed" not in out, "nothing assumed: the saved description answers"
    assert (
        "offline: cluster ml-platform/ml-aks read from tests/fixtures/clusters/ml-aks.json: in northeurope, Succeeded and "
        "running, Kubernetes 1.33.5, Azure CNI (pods on the node subnet) in its own virtual network, Entra ID; pools: "
        "system (System, 3 x Standard_D4s_v5, maxPods 30, subnet aks-nodes), apps (User, 2 x Standard_D8s_v5, maxPods 30, subnet aks-nodes)"
    ) in out, "the team sees its own cluster's version, network and pools"
    subnet = "/subscriptions/33333333-3333-3333-3333-333333333333/resourceGroups/ml-network/providers/Microsoft.Network/virtualNetworks/ml-vnet/subnets/aks-nodes"
    assert (
        "network: aks-gpu:gpuPools.t4 joins Azure CNI (pods on the node subnet): subnet ml-vnet/aks-nodes (the System pool's), maxPods 30"
        in out
    )
    [pool] = [r for r in json.loads((tmp_path / "azure.json").read_text())["resources"] if r["type"].endswith("/agentPools")]
    assert (pool["properties"]["vnetSubnetID"], pool["properties"]["maxPods"]) == (subnet, 30)
    kubeconfig = yaml.safe_load(run_cached("dev", **team)[0].outputs["kubeconfig"].value)  # the run rendered
    assert kubeconfig["users"][0]["user"]["exec"]["args"][-4:-2] == ["--login", "azurecli"], "Entra ID: kubelogin"


# `make render`'s own exit, every event loop its runs made closed: tests/test_one_line.py, in a
# Python forked from one that made the imports.


def test_every_summary_line_fits_120_columns_and_reads_back_whole(tmp_path: Path, monkeypatch, capsys):
    """Every shipped stack (the tests' copies), and a team's cluster read from its saved az aks
    show (whose subnet IDs and namespaces line ran to 354 columns): nothing over 120, nothing cut."""
    cached_runs(monkeypatch)
    for stack in stacks(FIXTURE_STACKS):
        assert render.main(["--stack", stack, "--out", str(tmp_path / stack)]) == 0
    out = capsys.readouterr().out
    assert max(len(line) for line in out.splitlines()) <= render.WIDTH
    assert (
        "namespaces: this stack creates gpu-resources, gpu-workloads in team-aks and deletes them on destroy; if the cluster has one already"
        in render.unfold(out)
    )
    assert [render.fold(line) for line in ["x" * 300]] == [["x" * 120, "    " + "x" * 116, "    " + "x" * 64]], (
        "an ID alone is split, not cut"
    )


def test_a_mig_pool_says_its_slices_in_its_summary_line(tmp_path: Path):
    run, _ = run_cached("team")
    lines = render.gpu_pool_lines(run)
    assert "GPU pool: a100 Standard_NC24ads_A100_v4, 1 node, MIG 7 slices of 1g.10gb per GPU, taints sku=gpu:NoSchedule" in lines
    assert not [line for line in lines if line.startswith("GPU pool: t4") and "MIG" in line]


def test_the_summary_counts_what_a_first_up_imports_updates_creates_and_replaces_apart():
    """The guide's cluster adopted (its pool, namespace and DaemonSet, each then updated: the
    stack's tag at least), against a stack that adopts nothing; an adoption that would replace
    is refused before the render, so replaces are always none."""
    from support.adoption import guide_as_listed

    first = render.summary(guide_as_listed(True), render.ROOT / "build").splitlines()[0]
    assert first == "aks-gpu ml-prod: 19 resources: 3 imported (3 then updated in place), 16 created, 0 replaced -> build"
    [dev] = render.summary(run_cached("dev")[0], render.ROOT / "build").splitlines()[:1]
    assert dev.endswith(": 0 imported (0 then updated in place), 21 created, 0 replaced -> build")
