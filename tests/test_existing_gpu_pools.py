"""The guide's own reader: a cluster that already has a GPU pool made by hand (`az aks nodepool
add`), used as it is (`gpuPools.<name>.existing: use`) or adopted (`existing: adopt`).
Each behaviour in a preview and in a deployment."""

from __future__ import annotations

import functools
import json

import pytest
from conftest import run_cached
from support import both_modes
from support.config import refused
from support.existing_pools import BOTH, GPUNP, JOB, OURS, POOL, adopted, cluster, pool_lines, run, same_in_both_modes, stopped
from support.kubernetes_objects import guide_daemon_set, listed, namespace
from support.plan import lines, lines_by

from components.errors import ConfigError, PreflightError
from components.pools.existing_pool import UsedPool
from components.pools.gpu_pool import GpuPoolArgs
from tools.azure_mocks import AzureMocks, OfflineReader
from tools.mock_engine import RecordingMonitor, run_program

DAEMONSET = "kubernetes:apps/v1:DaemonSet"


def tolerates(pod_spec, key, value, effect):
    return any(t.get("key") == key and t.get("value") == value and t.get("effect") == effect for t in pod_spec.get("tolerations", []))


# --------------------------------------------------------------------------- use

# A graph is tested in one mode where `same_in_both_modes` shows that a preview's plan and a
# deployment's hand the components the same Args: the program branches on the mode only in its
# plan (tests/support/both_modes.py). The adopting `up` and the single-pool key run both.


# The guide's pool gpunp and one with a taint of its own, both used, side by side: each pool gets
# its own proof Job, and the one device plugin serves both, so one run serves the tests below.
TAINTED = {**GPUNP, "name": "tainted", "nodeTaints": ["nvidia.com/gpu=present:NoExecute"]}


@functools.cache
def used_side_by_side():
    """The team stack using gpunp and `TAINTED`, in a preview (its plan shown to hand a deployment the same Args)."""
    pools = {"gpunp": {"existing": "use"}, "tainted": {"existing": "use"}}
    both_modes.same_in_both_modes(lambda: OfflineReader(cluster=cluster(GPUNP, TAINTED)), "team", gpuPools=pools)
    return run_cached("team", cluster=cluster(GPUNP, TAINTED), gpuPools=pools)[0]


def job_on(done, pool: str):
    [job] = [
        j for j in done.of_type(JOB) if j.inputs["spec"]["template"]["spec"]["nodeSelector"] == {"kubernetes.azure.com/agentpool": pool}
    ]
    return job.inputs["spec"]["template"]["spec"]


@pytest.mark.parametrize("preview", BOTH)
def test_a_used_pool_is_never_registered_so_no_run_of_the_stack_can_change_or_delete_it(preview):
    assert any("gpuPools.gpunp (use)" in line and "never changed" in line for line in pool_lines(preview=preview).infos)
    if preview:
        assert used_side_by_side().of_type(POOL) == []


def test_a_used_pool_gets_a_proof_job_pinned_to_it_that_tolerates_its_own_taints():
    assert len(used_side_by_side().of_type(JOB)) == 2, "one per pool"
    assert tolerates(job_on(used_side_by_side(), "gpunp"), "sku", "gpu", "NoSchedule")


def test_a_used_pool_with_a_taint_of_its_own_is_tolerated_by_the_plugin_and_the_job():
    done = used_side_by_side()
    plugin = next(d for d in done.of_type(DAEMONSET) if "device-plugin" in d.name).inputs["spec"]["template"]["spec"]
    assert tolerates(plugin, "nvidia.com/gpu", "present", "NoExecute")
    assert tolerates(job_on(done, "tainted"), "nvidia.com/gpu", "present", "NoExecute")


@pytest.mark.parametrize("preview", BOTH)
def test_a_used_pool_gets_the_stacks_plugin_and_a_warning_when_what_the_cluster_runs_was_not_read(preview):
    if preview:
        plugin = next(d for d in used_side_by_side().of_type(DAEMONSET) if "device-plugin" in d.name).inputs["spec"]["template"]["spec"]
        assert tolerates(plugin, "sku", "gpu", "NoSchedule")
    [said] = [
        w for w in pool_lines(preview=preview).warnings if w.startswith("aks-gpu:gpuPools.gpunp (use): what the cluster runs was not read")
    ]
    assert "check with `kubectl get namespaces,daemonsets --all-namespaces --show-managed-fields --output json`" in said
    assert said.endswith("(the offline render reads that list saved as preflight.kubernetesFile)")


@pytest.mark.parametrize("preview", BOTH)
def test_a_failed_read_does_not_ask_for_a_kubernetes_file_the_stack_sets_already(tmp_path, preview):
    # As a live run with preflight.kubernetesFile set (the offline render's file) whose read of the cluster fails.
    saved = tmp_path / "kubernetes.json"
    kube_proxy = {"kind": "DaemonSet", "metadata": {"name": "kube-proxy", "namespace": "kube-system"}, "spec": {"template": {"spec": {}}}}
    saved.write_text(json.dumps({"kind": "List", "items": [{"kind": "Namespace", "metadata": {"name": "kube-system"}}, kube_proxy]}))

    def unreachable(kubeconfig):
        raise TimeoutError("the cluster's API server did not answer within 30 s")

    reader = OfflineReader(cluster=cluster(GPUNP), kubernetes=unreachable)
    overrides = {"gpuPools": {"gpunp": {"existing": "use"}}, "preflight": {"kubernetesFile": str(saved)}}
    done = lines_by(reader, "team", preview, **overrides)  # what the run says, from its plan
    [said] = [w for w in done.warnings if w.startswith("aks-gpu:gpuPools.gpunp (use): what the cluster runs was not read")]
    assert "kubernetesFile" not in said


def test_a_used_pool_served_by_aks_gets_no_device_plugin_from_the_stack():
    pool = {**GPUNP, "enableAutoScaling": False, "count": 1, "gpuProfile": {"driver": "Install", "nvidia": {"managementMode": "Managed"}}}
    done = run(pool=pool)
    assert not [d for d in done.of_type(DAEMONSET) if "device-plugin" in d.name]
    assert done.outputs["gpuPools"].value["gpunp"]["management"] == "aks-managed (existing pool)"


@pytest.mark.parametrize("preview", BOTH, ids=["preview", "deployment"])
def test_an_owners_untainted_pool_its_own_device_plugin_serves_gets_no_second_one_from_the_stack(preview):
    """The pool's taints are Azure's, none included (`nodeTaints` null): the owner's plugin, which
    tolerates none of the stack's, lands there, so the stack leaves the pool to it; taking the pool
    for one tainted sku=gpu (a pool the stack would create) put the stack's plugin beside it."""
    untainted = {**GPUNP, "nodeTaints": None}
    owners = guide_daemon_set("kube-system")  # the guide's tolerations: nvidia.com/gpu and CriticalAddonsOnly
    reader = OfflineReader(cluster=cluster(untainted), kubernetes=listed(namespace("kube-system"), owners))
    monitor = RecordingMonitor(AzureMocks(reader=reader))
    done = run_program("team", overrides={"gpuPools": {"gpunp": {"existing": "use"}}}, monitor=monitor, preview=preview)
    assert [d.name for d in done.of_type(DAEMONSET)] == []
    assert any(
        i.startswith("kubernetes: gpunp is used as it is, and DaemonSet kube-system/nvidia-device-plugin-daemonset serves")
        for i in done.infos
    )
    assert [j.inputs["metadata"]["name"] for j in done.of_type(JOB)] == ["mnist-proof-gpunp"]  # the proof still runs there


def test_the_cost_lines_say_a_used_pool_is_the_owners_and_the_job_may_scale_it_from_zero():
    done = pool_lines()
    line = next(i for i in done.infos if i.startswith("cost: aks-gpu:gpuPools.gpunp"))
    assert "the owner's pool" in line and "not counted here" in line and "from zero (0-3)" in line


def test_the_cost_lines_name_a_used_pool_beside_the_stacks_own_pools():
    pools = {"a1": {"vmSize": "Standard_NC4as_T4_v3"}, "gpunp": {"existing": "use"}}
    assert [i for i in lines("team", cluster=cluster(GPUNP), gpuPools=pools).infos if i.startswith("cost: aks-gpu:gpuPools.gpunp ")], (
        "the used pool, after one of the stack's"
    )


@pytest.mark.parametrize("member, value", [("vmSize", "Standard_NC4as_T4_v3"), ("nodeCount", 2), ("spot", True)])
def test_a_used_pool_takes_no_other_member_because_they_come_from_azure(member, value):
    message = refused(
        rf"^invalid config aks-gpu:gpuPools\.gpunp\.{member} = .*not with existing: use",
        existingCluster={"resourceGroupName": "team-rg", "name": "team-aks"},
        gpuPools={"gpunp": {"existing": "use", member: value}},
    )
    assert message.endswith("remove it")


def test_existing_is_refused_without_an_existing_cluster():
    refused(
        r"^invalid config aks-gpu:gpuPools\.gpunp\.existing = 'use': only with aks-gpu:existingCluster",
        gpuPools={"gpunp": {"existing": "use"}},
    )


@pytest.mark.parametrize("preview", BOTH)
def test_a_pool_the_cluster_does_not_have_is_refused_by_name(preview):
    message = stopped(
        r"gpuPools\.gpunp\.existing = use: the cluster has no pool named 'gpunp'", pool={**GPUNP, "name": "other"}, preview=preview
    )
    assert "its pools: system, other" in message


@pytest.mark.parametrize("preview", BOTH)
def test_a_pool_without_an_nvidia_gpu_is_refused_by_name(preview):
    stopped(
        r"its pool gpunp is Standard_D8s_v5, with no GPU: expected an NVIDIA GPU pool",
        pool={**GPUNP, "vmSize": "Standard_D8s_v5"},
        preview=preview,
    )


@pytest.mark.parametrize("preview", BOTH)
def test_using_a_pool_this_stack_created_or_adopted_is_refused_because_the_run_would_delete_it(preview):
    message = stopped(r"carries this stack's tag", pool={**GPUNP, "tags": OURS}, preview=preview)
    assert "pulumi state delete" in message


def test_the_guides_single_gpu_pool_key_can_name_the_owners_pool_too():
    done = run_cached("team", preview=False, cluster=cluster(GPUNP), gpuPools=None, gpuPool={"name": "gpunp", "existing": "use"})[0]
    assert done.of_type(POOL) == []
    assert done.outputs["gpuPools"].value["gpunp"]["management"] == "device-plugin-daemonset (existing pool)"


# --------------------------------------------------------------------------- adopt


@pytest.mark.parametrize("preview", BOTH)
def test_the_adopting_up_imports_the_pool_by_its_arm_id(preview):
    pool = adopted("gpunp") if preview else run("adopt", preview=False).one(POOL)
    assert pool.options["import"] == (
        "/subscriptions/33333333-3333-3333-3333-333333333333/resourceGroups/team-rg/providers/"
        "Microsoft.ContainerService/managedClusters/team-aks/agentPools/gpunp"
    )


@pytest.mark.parametrize("preview", BOTH)
def test_an_adopted_pool_declares_what_azure_has_so_the_import_replaces_nothing(preview):
    inputs = adopted("gpunp").inputs if preview else run("adopt", preview=False).one(POOL).inputs
    assert inputs["vmSize"] == "Standard_NC4as_T4_v3" and inputs["maxPods"] == 250
    assert inputs["nodeTaints"] == ["sku=gpu:NoSchedule"]
    assert inputs["nodeLabels"] == {"team": "ml"} and inputs["availabilityZones"] == ["1", "2"] and inputs["osDiskSizeGB"] == 128
    assert (inputs["enableAutoScaling"], inputs["minCount"], inputs["maxCount"]) == (True, 0, 3)
    assert inputs["upgradeSettings"] == {"maxSurge": "10%"}
    assert inputs["tags"] == {"costcenter": "ml-42", **OURS, "aks-gpu-adopted": "aks-gpu/team"}


def test_an_adopted_pools_zones_are_declared_in_azures_order_so_the_import_changes_nothing():
    pool = run("adopt", pool={**GPUNP, "availabilityZones": ["3", "1"]}).one(POOL)
    assert pool.inputs["availabilityZones"] == ["3", "1"]


def test_an_adopted_pool_is_not_imported_again_once_it_carries_this_stacks_tag():
    assert "import" not in adopted("tagged").options


def test_an_adopted_pool_takes_its_counts_from_the_config_which_aks_changes_in_place():
    inputs = adopted("counts").inputs
    assert (inputs["minCount"], inputs["maxCount"]) == (1, 2)


@pytest.mark.parametrize("preview", BOTH)
@pytest.mark.parametrize(
    "member, value, written, live",
    [
        ("vmSize", "Standard_NC8as_T4_v3", "'Standard_NC8as_T4_v3'", "'Standard_NC4as_T4_v3'"),
        ("maxPods", 110, "110", "250"),
        ("spot", True, "true", "false"),  # as YAML writes them, not Python's True and False
        ("zones", ["1"], r'\["1"\]', r'\["1", "2"\]'),
    ],
)
def test_adopting_with_a_fixed_property_set_otherwise_is_refused_naming_both_values(preview, member, value, written, live):
    message = stopped(
        rf"gpuPools\.gpunp\.{member} = {written}, but the pool gpunp has {live} in Azure", "adopt", entry={member: value}, preview=preview
    )
    assert "would replace it" in message


def test_adopting_another_stacks_pool_is_refused():
    stopped(
        r"belongs to another stack \(aks-gpu-stack = aks-gpu/prod\)", "adopt", pool={**GPUNP, "tags": {"aks-gpu-stack": "aks-gpu/prod"}}
    )


def test_an_aks_managed_pool_can_be_used_but_not_adopted():
    managed = {**GPUNP, "gpuProfile": {"nvidia": {"managementMode": "Managed"}}}
    stopped(r"AKS-managed GPU nodes .*: use it, or add a new pool", "adopt", pool=managed)


def test_a_windows_pool_is_refused_and_a_system_pool_can_be_used_but_not_adopted():
    stopped(r"runs Windows: the guide's device plugin and proof run on Linux pools", pool={**GPUNP, "osType": "Windows"})
    stopped(r"is a System pool, and this stack's pools are User pools: use it instead", "adopt", pool={**GPUNP, "mode": "System"})
    # Used, it is not refused: the plan hands out a used pool, which registers nothing (UsedPool).
    [used] = same_in_both_modes(pool={**GPUNP, "mode": "System"}).gpu_pools
    assert isinstance(used, UsedPool)


def test_a_stack_pool_named_like_the_owners_says_how_to_use_or_adopt_it():
    with pytest.raises(PreflightError) as error:  # a deployment, from its plan
        lines("team", preview=False, cluster=cluster(GPUNP), gpuPools={"gpunp": {"vmSize": "Standard_NC4as_T4_v3"}})
    done_message = str(error.value)
    assert "pick another pool name, or set aks-gpu:gpuPools.gpunp.existing to use or adopt it" in done_message


@pytest.mark.parametrize("preview", BOTH)
@pytest.mark.parametrize("how", ["use", "adopt"])
def test_a_pool_whose_os_disk_cannot_hold_the_proof_image_is_warned_of(how, preview):
    [warning] = [w for w in pool_lines(how, pool={**GPUNP, "osDiskSizeGB": 8}, preview=preview).warnings if "OS disk" in w]
    assert warning.startswith(
        f"aks-gpu:gpuPools.gpunp ({how}): its nodes' OS disk is 8 GB, and PyTorch 2.9.1 on CUDA 12.8 alone takes about 11 GB"
    )
    assert warning.endswith("or set aks-gpu:mnistJob.enabled to false")


@pytest.mark.parametrize("disk", [None, 0, 11, 128])
def test_a_pool_whose_os_disk_holds_the_proof_image_or_is_sized_by_aks_is_not_warned_of(disk):
    assert [w for w in pool_lines("use", pool={**GPUNP, "osDiskSizeGB": disk}).warnings if "OS disk" in w] == []


def test_no_disk_warning_when_the_proof_job_is_off():
    assert [w for w in pool_lines("use", pool={**GPUNP, "osDiskSizeGB": 8}, mnistJob={"enabled": False}).warnings if "OS disk" in w] == []


# --------------------------------------------------------------------------- what Azure allows, and which pool it is


FIFTY = {f"team-{i}": "x" for i in range(50)}


@pytest.mark.parametrize("preview", BOTH)
def test_adopting_a_pool_with_fifty_tags_is_refused_naming_azures_limit_as_the_stacks_two_marks_would_make_52(preview):
    message = stopped(
        r"the pool gpunp has 50 tags, and adopting it adds the stack's", "adopt", pool={**GPUNP, "tags": FIFTY}, preview=preview
    )
    assert "52 tags, and Azure allows at most 50 on a resource; remove 2 of the pool's tags first, or use it instead" in message
    # It can still be used as it is: the plan hands out a used pool, which registers nothing (UsedPool).
    [used] = same_in_both_modes(pool={**GPUNP, "tags": FIFTY}).gpu_pools
    assert isinstance(used, UsedPool)
    if preview:
        assert len(adopted("fits").inputs["tags"]) == 50  # 48 of the owner's


@pytest.mark.parametrize("preview", BOTH)
def test_a_virtual_machines_pool_without_a_vm_size_is_refused_saying_what_it_is(preview):
    """Not "is , with no GPU": the size of such a pool is in its virtualMachinesProfile."""
    pool = {**GPUNP, "type": "VirtualMachines", "vmSize": None, "virtualMachinesProfile": {"scale": {"manual": [{"size": "Standard_NC4as_T4_v3", "count": 2}]}}}  # fmt: skip
    for how in ("use", "adopt"):
        message = stopped(r"its pool gpunp is a VirtualMachines pool \(virtualMachinesProfile sizes: \"Standard_NC4as_T4_v3\"\) with no vmSize", how, pool=pool, preview=preview)  # fmt: skip
        assert "is , with" not in message and "add a new pool with the size you need, or use one of type VirtualMachineScaleSets" in message


def adopted_from(tmp_path, described, preview=True):
    """The team stack adopting gpunp, with `described` saved as its clusterFile and answered for the cluster."""
    path = tmp_path / "cluster.json"
    path.write_text(json.dumps(described))
    monitor = RecordingMonitor(AzureMocks(cluster=described))
    overrides = {"gpuPools": {"gpunp": {"existing": "adopt"}}, "preflight": {"clusterFile": str(path)}}
    return monitor, lambda: run_program("team", overrides=overrides, monitor=monitor, preview=preview)


@pytest.mark.parametrize("preview", BOTH)
@pytest.mark.parametrize(
    "given, says",
    [
        ("/subscriptions/33333333-3333-3333-3333-333333333333/resourceGroups/team-rg/providers/Microsoft.ContainerService/managedClusters/other-aks",
         r"its id names cluster \"other-aks\", but it describes \"team-aks\""),
        ("team-aks", r"its id \"team-aks\" is not a managed cluster's ARM ID"),
        ("/subscriptions/x/resourceGroups/team-rg/providers/Microsoft.Compute/virtualMachines/team-aks", r"its id \".*\" is not a managed cluster's ARM ID"),
    ],
)  # fmt: skip
def test_a_saved_description_whose_id_names_another_cluster_or_no_arm_path_is_refused_naming_the_file(tmp_path, preview, given, says):
    monitor, up = adopted_from(tmp_path, cluster(GPUNP) | {"id": given}, preview)
    with pytest.raises(ConfigError, match=rf"^invalid config aks-gpu:preflight\.clusterFile = \S*/cluster\.json: {says}") as error:
        up()
    assert "\n" not in str(error.value) and monitor.registrations == []


@pytest.mark.parametrize("preview", BOTH)
def test_a_saved_pool_whose_own_id_names_another_cluster_is_refused_naming_the_file(tmp_path, preview):
    other = "/subscriptions/33333333-3333-3333-3333-333333333333/resourceGroups/team-rg/providers/Microsoft.ContainerService/managedClusters/x/agentPools/gpunp"  # fmt: skip
    monitor, up = adopted_from(tmp_path, cluster({**GPUNP, "id": other}), preview)
    with pytest.raises(
        ConfigError, match=r"clusterFile = \S*/cluster\.json: the id of its pool \"gpunp\", \"/subscriptions/.*is not that pool's"
    ):
        up()
    assert monitor.registrations == []


def test_the_adopting_up_imports_the_pool_under_the_cluster_the_config_names_not_the_descriptions_spelling(tmp_path):
    """The description's id agrees in everything but case (ARM's names are not case-sensitive): the ID is the config's.
    The ID the plan hands the pool in both modes (GpuPoolArgs.live.import_id), which the pool imports as it is
    (test_the_adopting_up_imports_the_pool_by_its_arm_id, in a preview and a deployment)."""
    spelt = "/SUBSCRIPTIONS/33333333-3333-3333-3333-333333333333/resourcegroups/TEAM-RG/providers/microsoft.containerservice/managedClusters/team-aks"  # fmt: skip
    assert import_id(adopted_in_both_modes(tmp_path, cluster(GPUNP) | {"id": spelt})) == (
        "/subscriptions/33333333-3333-3333-3333-333333333333/resourceGroups/team-rg/providers/"
        "Microsoft.ContainerService/managedClusters/team-aks/agentPools/gpunp"
    )
    described = {k: v for k, v in cluster(GPUNP).items() if k != "id"}
    assert import_id(adopted_in_both_modes(tmp_path, described)).endswith(
        "/resourceGroups/team-rg/providers/Microsoft.ContainerService/managedClusters/team-aks/agentPools/gpunp"
    )


def import_id(plan):
    [args] = plan.gpu_pools
    assert isinstance(args, GpuPoolArgs) and args.live is not None
    return args.live.import_id


def adopted_in_both_modes(tmp_path, described):
    """`adopted_from(tmp_path, described)`'s plan, once a preview's and a deployment's hand out the same Args."""
    path = tmp_path / "cluster.json"
    path.write_text(json.dumps(described))
    overrides = {"gpuPools": {"gpunp": {"existing": "adopt"}}, "preflight": {"clusterFile": str(path)}}
    return both_modes.same_in_both_modes(lambda: OfflineReader(cluster=described), "team", **overrides)
