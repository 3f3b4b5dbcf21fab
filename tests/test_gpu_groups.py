"""Capacity groups (`aks-gpu:gpuGroups`, issue #55): a workload that asks for a group lands on
the next size when Azure has none of the first. The config: every rule of a group refused in
one line naming the group's key, before anything is registered."""

from __future__ import annotations

import re
from typing import Any

import pytest
import yaml
from conftest import ROOT, run_cached
from hypothesis import event, given, settings
from hypothesis import strategies as st
from support.arm_schemas import arm_problems
from support.both_modes import declares_the_same_in_both_modes
from support.config import parsed, refused
from support.existing_pools import GPUNP, cluster
from support.generated import LONG_RUN, SETTINGS
from support.kubernetes_schemas import invalid
from support.plan import lines
from support.stack_schema import VALIDATOR

from components.errors import ConfigError
from components.gpu_stack.cluster_objects import DaemonSet, PoolNodes, lands, pool_labels
from components.outputs import INSTANCE_TYPE_LABEL as INSTANCE_TYPE
from components.pools.groups import GROUP_LABEL
from components.proof.job_deadline import duration_seconds
from tools.azure_mocks import AzureMocks
from tools.mock_engine import RecordingMonitor, run_program

T4, T4_8, A10 = "Standard_NC4as_T4_v3", "Standard_NC8as_T4_v3", "Standard_NV36ads_A10_v5"
GB200 = "Standard_ND128isr_NDR_GB200_v6"
POOLS: dict[str, Any] = {
    "t4": {"vmSize": T4, "minCount": 0, "maxCount": 2},
    "t4b": {"vmSize": T4_8, "minCount": 0, "maxCount": 2},
    "a10": {"vmSize": A10, "minCount": 0, "maxCount": 1},
}
GROUPS = {"inference": ["t4", "t4b", "a10"]}
POOL, JOB, DAEMON_SET = "azure-native:containerservice:AgentPool", "kubernetes:batch/v1:Job", "kubernetes:apps/v1:DaemonSet"
# AKS labels each node of a Spot pool so (use-labels.md, "Reserved system labels").
SPOT_LABEL = "kubernetes.azure.com/scalesetpriority"


# --------------------------------------------------------------------------- the config


def test_a_group_keeps_the_teams_order_and_knows_its_pools() -> None:
    cfg = parsed(gpuPools=POOLS, gpuGroups=GROUPS)
    groups = cfg.gpu_groups
    assert groups.groups == {"inference": ("t4", "t4b", "a10")}
    assert [p.name for p in groups.pools_of("inference", cfg.gpu_pools)] == ["t4", "t4b", "a10"]  # not gpuPools' name order
    assert (groups.group_of("a10"), groups.group_of("nope")) == ("inference", None)


def test_a_config_without_groups_has_none() -> None:
    assert not parsed(gpuPools=POOLS).gpu_groups


def test_a_pool_preflight_dropped_is_not_among_its_groups_pools() -> None:
    cfg = parsed(gpuPools=POOLS, gpuGroups=GROUPS)
    kept = [p for p in cfg.gpu_pools if p.name != "t4b"]
    assert [p.name for p in cfg.gpu_groups.pools_of("inference", kept)] == ["t4", "a10"]


def _pools(**changed: dict[str, Any]) -> dict[str, Any]:
    return {**POOLS, **changed}


@pytest.mark.parametrize(
    ("groups", "pools", "says"),
    [
        ({"Inference": ["t4", "a10"]}, POOLS, r"gpuGroups\.Inference = 'Inference': a group name must be 1-63 lowercase"),
        ({"-x": ["t4", "a10"]}, POOLS, r"gpuGroups\.-x = '-x': a group name"),
        ({"x" * 64: ["t4", "a10"]}, POOLS, r"gpuGroups\.x{64} = 'x{64}': a group name must be 1-63"),
        ({}, POOLS, r"gpuGroups = \{\}: expected at least one group"),
        ({"inference": ["t4"]}, POOLS, r"gpuGroups\.inference = \[\"t4\"\]: a group lists 2 or more gpuPools names"),
        ({"inference": "t4"}, POOLS, r"gpuGroups\.inference = 't4': expected a list of 2 to 3 gpuPools names"),
        ({"inference": ["t4", "T4"]}, POOLS, r"gpuGroups\.inference\[1\] = 'T4': expected 1-12 lowercase letters"),
        ({"inference": ["t4", "t4"]}, POOLS, r"gpuGroups\.inference = \[\"t4\", \"t4\"\]: 't4' is listed twice"),
        (
            {"inference": ["t4", "l4"]},
            POOLS,
            r"gpuGroups\.inference = .*'l4' is not an entry of aks-gpu:gpuPools; expected one of a10, t4, t4b",
        ),
        ({"a": ["t4", "a10"], "b": ["t4b", "t4"]}, POOLS, r"gpuGroups\.b = .*'t4' is in aks-gpu:gpuGroups\.a already"),
        ({"t4": ["t4b", "a10"]}, POOLS, r"gpuGroups\.t4 = 't4': a group's name is its proof Job's, as a pool's name is its Job's"),
        (
            GROUPS,
            _pools(t4={"vmSize": T4}),
            r"gpuGroups\.inference = 't4': aks-gpu:gpuPools\.t4 has a fixed nodeCount 1: each pool of a group scales from zero",
        ),
        (
            GROUPS,
            _pools(t4={"vmSize": T4, "minCount": 1, "maxCount": 2}),
            r"gpuGroups\.inference = 't4': aks-gpu:gpuPools\.t4 has minCount 1: each pool of a group scales from zero",
        ),
        (
            GROUPS,
            _pools(t4={"vmSize": T4, "minCount": 0, "maxCount": 2, "nodeCount": 1}),
            r"gpuGroups\.inference = 't4': aks-gpu:gpuPools\.t4\.nodeCount = 1: a new pool of a group starts with no node",
        ),
        (
            GROUPS,
            _pools(t4={"vmSize": T4, "nodeCount": 1, "management": "aks-managed"}),
            r"gpuGroups\.inference = 't4': aks-gpu:gpuPools\.t4 is aks-managed, which has no cluster autoscaler during its preview",
        ),
        (
            GROUPS,
            _pools(a10={"vmSize": A10, "minCount": 0, "maxCount": 1, "management": "gpu-operator"}),
            r"gpuGroups\.inference = .*more than one management \(t4: device-plugin, t4b: device-plugin, a10: gpu-operator\)",
        ),
        (
            GROUPS,
            _pools(a10={"vmSize": GB200, "minCount": 0, "maxCount": 1}),
            r"gpuGroups\.inference = .*more than one CPU architecture \(t4: amd64, t4b: amd64, a10: arm64\)",
        ),
        (
            GROUPS,
            _pools(a10={"vmSize": "Standard_NC8ads_L4_v9", "minCount": 0, "maxCount": 1}),
            r"gpuGroups\.inference = 'a10': .*Standard_NC8ads_L4_v9 is not in this program's GPU size catalog, so its CPU architecture and GPU memory",
        ),
    ],
)
def test_a_group_the_pools_cannot_serve_is_refused_in_one_line(groups: Any, pools: dict[str, Any], says: str) -> None:
    refused(r"^invalid config aks-gpu:" + says, gpuPools=pools, gpuGroups=groups)


def test_a_group_of_more_pools_than_the_autoscaler_ever_tries_is_refused_in_one_line() -> None:
    """With failures that show only at max-node-provision-time the autoscaler goes back to a
    group's first pools and never tries a fourth (components/catalog/autoscaler_fallback.py)."""
    pools = {**POOLS, "l4": {"vmSize": "Standard_NC16as_T4_v3", "minCount": 0, "maxCount": 1}}
    with pytest.raises(ConfigError) as refusal:
        parsed(gpuPools=pools, gpuGroups={"inference": ["t4", "t4b", "a10", "l4"]})
    said = str(refusal.value)
    assert "\n" not in said
    assert said.startswith('invalid config aks-gpu:gpuGroups.inference = ["t4", "t4b", "a10", "l4"]: 4 pools, ')
    assert "the cluster autoscaler reaches 3 of a group" in said and "max-node-provision-time (15 minutes)" in said
    assert "backs the pool off for 5 minutes, doubling up to 30" in said and "pool 4 is never tried" in said
    assert said.endswith("list at most 3, first choice first")
    assert not VALIDATOR.is_valid({"config": {"aks-gpu:gpuGroups": {"inference": ["t4", "t4b", "a10", "l4"]}}}), "the schema refuses it too"


def test_a_group_of_the_guides_one_pool_is_refused() -> None:
    refused(
        r"^invalid config aks-gpu:gpuGroups with aks-gpu:gpuPool: a group lists gpuPools entries", gpuGroups={"inference": ["gpu", "a10"]}
    )


def test_a_pool_the_stack_only_uses_cannot_be_in_a_group() -> None:
    team = {"resourceGroupName": "team-rg", "name": "team-aks"}
    refused(
        r"^invalid config aks-gpu:gpuGroups\.inference = .*'gpunp' is existing: use, the owner's pool",
        existingCluster=team,
        gpuPools={"gpunp": {"existing": "use"}, "t4": POOLS["t4"]},
        gpuGroups={"inference": ["t4", "gpunp"]},
    )


# --------------------------------------------------------------------------- the names it makes

GUIDE_IMAGE = {"image": "mcr.microsoft.com/azuredocs/samples-tf-mnist-demo:gpu"}
UNAWAITED = {"waitForCompletion": False}
# A DNS subdomain (apimachinery IsDNS1123Subdomain) and a label value (IsValidLabelValue), as
# Kubernetes checks them: a Job's name is both, since the API server copies it into its pods' labels.
SUBDOMAIN = re.compile(r"[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*")
LABEL_VALUE = re.compile(r"(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?")


def _group(length: int) -> str:
    return ("inference" * 8)[:length]


@pytest.mark.parametrize(
    ("length", "job", "name", "spare"),
    [
        (52, {}, "mnist-proof-{group}' (64 characters, over 63)", 51),
        (43, UNAWAITED, "mnist-proof-{group}-<8 hex digits of its spec hash>' (64 characters, over 63)", 42),
        (42, GUIDE_IMAGE, "samples-tf-mnist-demo-{group}' (64 characters, over 63)", 41),
        (63, {**GUIDE_IMAGE, **UNAWAITED}, "samples-tf-mnist-demo-{group}-<8 hex digits of its spec hash>' (94 characters, over 63)", 32),
    ],
)
def test_a_group_whose_proof_jobs_name_would_pass_63_characters_is_refused_in_one_line(
    length: int, job: dict[str, Any], name: str, spare: int
) -> None:
    group = _group(length)
    said = refused(r"^invalid config aks-gpu:gpuGroups\.", gpuPools=POOLS, gpuGroups={group: ["t4", "a10"]}, mnistJob=job)
    assert said.startswith(f"invalid config aks-gpu:gpuGroups.{group} = '{group}': its proof Job would be named '"), said
    assert name.format(group=group) in said and f"name it in at most {spare} characters" in said, said
    assert "Kubernetes copies a Job's name into its pods' job-name label, whose value is at most 63 characters" in said


def test_a_group_whose_proof_jobs_name_is_63_characters_declares_that_job_and_its_result_is_named_after_it() -> None:
    group = _group(51)
    run = run_cached("dev", gpuPool=None, gpuPools=POOLS, gpuGroups={group: ["t4", "a10"]})[0]
    job = run.one(JOB, f"mnist-proof-{group}").inputs["metadata"]["name"]
    assert len(job) == 63
    (watch,) = [w for w in run.of_type("pulumi-python:dynamic/aksgpu:ProofWatch") if w.inputs["poolName"] == group]
    assert watch.inputs["jobName"] == job  # its result's ConfigMap: mnist-proof-<group>-result, 70 of 253


@st.composite
def group_names(draw: st.DrawFn) -> tuple[str, dict[str, Any]]:
    """A group's name of any length a name may have (1-63, a label value's characters), mostly
    near the lengths where a proof Job's name passes 63, and each way the Job is named."""
    length = draw(st.one_of(st.integers(1, 63), st.integers(28, 56)))
    ends = st.sampled_from("abcdefghijklmnopqrstuvwxyz0123456789")
    middle = draw(st.text(alphabet="abcdefghijklmnopqrstuvwxyz0123456789-", min_size=max(length - 2, 0), max_size=max(length - 2, 0)))
    name = draw(ends) + (middle + draw(ends) if length > 1 else "")
    job = draw(st.sampled_from([{}, UNAWAITED, GUIDE_IMAGE, {**GUIDE_IMAGE, **UNAWAITED}]))
    return name, job


def _names_kubernetes_refuses(run: Any) -> list[str]:
    """Every name the run gives a Kubernetes object, and the ConfigMap each watch writes, that
    Kubernetes would refuse."""
    named = [(r.type, r.inputs["metadata"]["name"]) for r in run.resources if r.type.startswith("kubernetes:")]
    named += [
        ("kubernetes:core/v1:ConfigMap", f"{w.inputs['jobName']}-result") for w in run.of_type("pulumi-python:dynamic/aksgpu:ProofWatch")
    ]
    return [
        name
        for kind, name in named
        if not (SUBDOMAIN.fullmatch(name) and len(name) <= 253) or (kind == JOB and not (LABEL_VALUE.fullmatch(name) and len(name) <= 63))
    ]


# The group's two pools alone: a pool outside it would add objects whose names no example changes.
GROUPED = {"t4": POOLS["t4"], "a10": POOLS["a10"]}


@settings(SETTINGS, max_examples=LONG_RUN or 8)
@given(example=group_names())
def test_a_generated_groups_name_is_accepted_with_every_object_named_as_kubernetes_allows_or_refused_in_one_line(
    example: tuple[str, dict[str, Any]],
) -> None:
    group, job = example
    monitor = RecordingMonitor(AzureMocks())
    try:
        run = run_program(
            "dev",
            overrides={"gpuPool": None, "gpuPools": GROUPED, "gpuGroups": {group: ["t4", "a10"]}, "mnistJob": job},
            monitor=monitor,
            preview=True,
        )
    except ConfigError as error:
        said = str(error)
        event("refused")
        assert said.startswith(f"invalid config aks-gpu:gpuGroups.{group} = '{group}': its proof Job would be named") and "\n" not in said
        assert monitor.registrations == []
        return
    event("accepted")
    assert _names_kubernetes_refuses(run) == []


# --------------------------------------------------------------------------- what is declared

# Two groups and a pool of its own on a created cluster: the proof of each group must land on
# its pools and on nothing else (the System pool, the pool in no group, the other group's).
MANY: dict[str, Any] = {
    **POOLS,
    "t4b": {**POOLS["t4b"], "spot": True},
    "b1": {"vmSize": T4, "minCount": 0, "maxCount": 1},
    "b2": {"vmSize": A10, "minCount": 0, "maxCount": 1},
    "solo": {"vmSize": T4, "minCount": 0, "maxCount": 1},
}
MANY_GROUPS = {"inference": ["t4", "t4b", "a10"], "batch": ["b2", "b1"]}


def many() -> Any:
    """The two groups' preview: a deployment declares from the same plan (support/modes.py), so
    its graph, the Jobs' dependencies and deadlines included, is this one."""
    declares_the_same_in_both_modes("dev", gpuPool=None, gpuPools=MANY, gpuGroups=MANY_GROUPS)
    return run_cached("dev", gpuPool=None, gpuPools=MANY, gpuGroups=MANY_GROUPS)[0]


def _pool_nodes(run: Any) -> list[PoolNodes]:
    """Every pool's nodes as the scheduler sees them: AKS's labels (its pool's name, OS, VM size,
    and Spot's priority), the pool's declared nodeLabels, and its declared nodeTaints. The
    labels are complete: AKS sets no other label a proof selects on (use-labels.md, "Reserved
    system labels"), so a label missing here is missing on the node."""
    cluster = run.one("azure-native:containerservice:ManagedCluster").inputs
    system = [
        PoolNodes(p["name"], {**pool_labels(p["name"]), INSTANCE_TYPE: p["vmSize"]}, tuple(p.get("nodeTaints") or ()))
        for p in cluster["agentPoolProfiles"]
    ]
    gpu = []
    for pool in run.of_type(POOL):
        inputs = pool.inputs
        aks = {INSTANCE_TYPE: inputs["vmSize"], **({SPOT_LABEL: "spot"} if inputs.get("scaleSetPriority") == "Spot" else {})}
        gpu.append(
            PoolNodes(
                inputs["agentPoolName"],
                {**pool_labels(inputs["agentPoolName"], inputs.get("nodeLabels")), **aks},
                tuple(inputs["nodeTaints"]),
            )
        )
    return system + gpu


def _pod(job: Any) -> DaemonSet:
    """The Job's pod as the matcher reads a pod template (cluster_objects.lands: every
    NoSchedule/NoExecute taint tolerated as k8s.io/api core/v1 toleration.go ToleratesTaint
    does, the nodeSelector's every label equal, required node affinity met)."""
    spec = job.inputs["spec"]["template"]["spec"]
    affinity = (spec.get("affinity") or {}).get("nodeAffinity", {}).get("requiredDuringSchedulingIgnoredDuringExecution")
    terms = tuple(tuple(t.get("matchExpressions") or ()) for t in affinity["nodeSelectorTerms"]) if affinity else None
    return DaemonSet(
        "gpu-workloads",
        job.inputs["metadata"]["name"],
        node_selector=spec.get("nodeSelector") or {},
        tolerations=tuple(spec.get("tolerations") or ()),
        terms=terms,
    )


def _lands_on(run: Any, job_name: str) -> set[str]:
    """The pools the Job's pod can be scheduled on. A nodeSelector label the pool's nodes lack
    is "maybe" to the matcher (Azure may not tell of a live pool's every label); here the labels
    are complete, so only "yes" lands."""
    pod = _pod(run.one(JOB, job_name))
    return {pool.name for pool in _pool_nodes(run) if lands(pod, pool).answer == "yes"}


@pytest.mark.parametrize(
    ("job", "pools"), [("mnist-proof-inference", {"t4", "t4b", "a10"}), ("mnist-proof-batch", {"b1", "b2"}), ("mnist-proof-solo", {"solo"})]
)
def test_the_proof_of_a_group_lands_on_every_pool_of_it_and_on_no_other(job: str, pools: set[str]) -> None:
    assert _lands_on(many(), job) == pools


def _template_nodes(run: Any) -> list[PoolNodes]:
    """Each GPU pool at zero nodes as the cluster autoscaler simulates it (kubernetes/autoscaler@55c37cd5
    cloudprovider/azure/azure_template.go processVMSSTemplate, with label prediction, on by
    default: azure_config.go): the scale set's tags (AKS's `aks-managed-poolName`), the generic
    labels (buildGenericLabels: arch, OS, instance type, region, zone, hostname), the predicted
    agentpool, storage and accelerator labels, and NOT the pool's nodeLabels, which upstream never
    reads (azure_scale_set.go TemplateNodeInfo passes empty input labels). Taints: the pool's
    nodeTaints, as AKS passes them in the node group's spec (Azure/AKS#2359), the harder case
    than upstream's none from tags."""
    nodes = []
    for pool in run.of_type(POOL):
        inputs, name = pool.inputs, pool.inputs["agentPoolName"]
        labels = {
            "aks-managed-poolName": name,
            "kubernetes.io/arch": "amd64",
            "kubernetes.io/os": "linux",
            INSTANCE_TYPE: inputs["vmSize"],
            "topology.kubernetes.io/region": "eastus",
            "topology.kubernetes.io/zone": "0",
            "kubernetes.io/hostname": f"aks-{name}-12345678-vmss-asg-1",
            "agentpool": name,
            "kubernetes.azure.com/agentpool": name,
            "kubernetes.azure.com/storageprofile": "managed",
            "accelerator": "nvidia",
            "kubernetes.azure.com/accelerator": "nvidia",
        }
        nodes.append(PoolNodes(name, labels, tuple(inputs["nodeTaints"])))
    return nodes


@pytest.mark.parametrize(("job", "pools"), [("mnist-proof-inference", {"t4", "t4b", "a10"}), ("mnist-proof-batch", {"b1", "b2"})])
def test_the_proof_of_a_group_fits_each_of_its_pools_at_zero_nodes_as_the_autoscaler_builds_them(job: str, pools: set[str]) -> None:
    """A pool with no node scales up only for a pod that fits its template node, which carries
    AKS's agentpool label and not the group's: so the proof selects its pools by that label."""
    run = many()
    pod = _pod(run.one(JOB, job))
    assert {node.name for node in _template_nodes(run) if lands(pod, node).answer == "yes"} == pools


def _docs_workload() -> DaemonSet:
    """docs/gpu.md's workload ("Asking for a group in a workload"), as the page shows it."""
    page = (ROOT / "docs" / "gpu.md").read_text()
    section = page[page.index("### Asking for a group in a workload") :]
    spec = yaml.safe_load(section.split("```yaml\n", 1)[1].split("```", 1)[0])["spec"]
    affinity = spec["affinity"]["nodeAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"]
    return DaemonSet(
        "team",
        "inference-server",
        node_selector=spec.get("nodeSelector") or {},
        tolerations=tuple(spec["tolerations"]),
        terms=tuple(tuple(t["matchExpressions"]) for t in affinity["nodeSelectorTerms"]),
    )


def test_a_workload_that_asks_as_the_docs_say_lands_on_the_groups_pools_only_with_nodes_and_from_zero() -> None:
    """docs/gpu.md's workload: the group's pools by the agentpool label, the guide's toleration and Spot's."""
    run, asked = many(), _docs_workload()
    assert {pool.name for pool in _pool_nodes(run) if lands(asked, pool).answer == "yes"} == {"t4", "t4b", "a10"}
    assert {pool.name for pool in _template_nodes(run) if lands(asked, pool).answer == "yes"} == {"t4", "t4b", "a10"}


def test_each_pool_of_a_group_carries_the_groups_label_and_no_other_pool_a_label() -> None:
    labels = {p.inputs["agentPoolName"]: p.inputs.get("nodeLabels") for p in many().of_type(POOL)}
    assert labels == {
        "t4": {GROUP_LABEL: "inference"},
        "t4b": {GROUP_LABEL: "inference"},
        "a10": {GROUP_LABEL: "inference"},
        "b1": {GROUP_LABEL: "batch"},
        "b2": {GROUP_LABEL: "batch"},
        "solo": None,
    }


def test_a_group_has_one_proof_job_named_after_it_and_its_pools_none_of_their_own() -> None:
    jobs = sorted(j.inputs["metadata"]["name"] for j in many().of_type(JOB))
    assert jobs == ["mnist-proof-batch", "mnist-proof-inference", "mnist-proof-solo"]


def test_the_groups_job_waits_for_every_pool_of_it_and_the_device_plugin_and_for_each_pool_the_autoscaler_gives_up_on() -> None:
    run = many()
    job = run.one(JOB, "mnist-proof-inference")
    pools = {p.inputs["agentPoolName"]: p.urn for p in run.of_type(POOL)}
    plugin = run.one(DAEMON_SET, "nvidia-device-plugin-daemonset").urn
    assert {pools["t4"], pools["t4b"], pools["a10"], plugin} <= set(job.dependencies)
    assert not {pools["b1"], pools["b2"], pools["solo"]} & set(job.dependencies)
    from_zero = run.one(JOB, "mnist-proof-solo")  # a pool of its own, from zero: the longest a pool needs
    # Three pools, each try failing only at max-node-provision-time: the autoscaler tries
    # t4 t4b t4 t4b t4 t4b, then a10 at 5520 s, which still gets a pool's time from zero.
    deadline = job.inputs["spec"]["activeDeadlineSeconds"]
    assert deadline == from_zero.inputs["spec"]["activeDeadlineSeconds"] + 5520
    assert duration_seconds(job.options["customTimeouts"]["create"]) > deadline
    batch = run.one(JOB, "mnist-proof-batch")  # two pools: the second tried at 920 s
    assert batch.inputs["spec"]["activeDeadlineSeconds"] == from_zero.inputs["spec"]["activeDeadlineSeconds"] + 920


def test_the_device_plugin_and_gpu_metrics_reach_every_pool_of_a_group() -> None:
    run = many()
    for name in ("nvidia-device-plugin-daemonset", "dcgm-exporter"):
        spec = run.one(DAEMON_SET, name).inputs["spec"]["template"]["spec"]
        terms = spec["affinity"]["nodeAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"]["nodeSelectorTerms"]
        plugin = DaemonSet(
            "gpu-resources",
            name,
            tolerations=tuple(spec.get("tolerations") or ()),
            terms=tuple(tuple(t["matchExpressions"]) for t in terms),
        )
        reached = {pool.name for pool in _pool_nodes(run) if lands(plugin, pool).answer == "yes"}
        assert {"t4", "t4b", "a10", "b1", "b2"} <= reached, name


def test_the_outputs_list_each_groups_pools_in_order_with_their_sizes_and_its_job() -> None:
    run = many()
    groups = run.outputs["gpuGroups"].value
    assert [(p["name"], p["vmSize"]) for p in groups["inference"]["pools"]] == [("t4", T4), ("t4b", T4_8), ("a10", A10)]
    assert [p["name"] for p in groups["batch"]["pools"]] == ["b2", "b1"]
    assert groups["inference"]["job"]["name"] == "mnist-proof-inference"
    assert "node.kubernetes.io/instance-type" in groups["inference"]["nodesCommand"]
    pools = run.outputs["gpuPools"].value
    assert (pools["t4"].get("group"), "job" in pools["t4"]) == ("inference", False)
    assert (pools["solo"].get("group"), pools["solo"]["job"]["name"]) == (None, "mnist-proof-solo")


def test_a_stack_without_groups_has_no_groups_output() -> None:
    assert "gpuGroups" not in run_cached("dev", gpuPool=None, gpuPools=POOLS)[0].outputs


def test_a_groups_objects_validate_against_azures_schemas_and_kubernetes_openapi() -> None:
    run = many()
    assert arm_problems(run) == []
    assert invalid(run) == []


# --------------------------------------------------------------------------- an adopted pool

TEAM = {"resourceGroupName": "team-rg", "name": "team-aks"}
ADOPTING = {"gpunp": {"existing": "adopt"}, "t4": POOLS["t4"]}


def test_an_adopted_pool_joins_its_group_by_a_label_added_in_place_beside_its_own() -> None:
    said = lines("team", cluster=cluster(GPUNP), gpuPools=ADOPTING, gpuGroups={"inference": ["gpunp", "t4"]})
    (plan,) = [line for line in said.infos if line.startswith("adopt: aks-gpu:gpuPools.gpunp:")]
    assert "nodeLabels" in plan and "aks-gpu.io/gpu-group" in plan and "and replaces nothing:" in plan, plan
    run = run_cached("team", cluster=cluster(GPUNP), gpuPools=ADOPTING, gpuGroups={"inference": ["gpunp", "t4"]})[0]
    adopted = next(p for p in run.of_type(POOL) if p.inputs["agentPoolName"] == "gpunp")
    assert adopted.inputs["nodeLabels"] == {"team": "ml", GROUP_LABEL: "inference"}  # the owner's label kept: an update overwrites them
    assert "nodeLabels" not in adopted.options["replaceOnChanges"]


def test_an_adopted_pool_that_azure_runs_with_a_floor_above_zero_is_refused_for_a_group() -> None:
    fixed = {**GPUNP, "enableAutoScaling": False, "minCount": None, "maxCount": None, "count": 1}
    with pytest.raises(
        ConfigError,
        match=r"^invalid config aks-gpu:gpuGroups\.inference = 'gpunp': aks-gpu:gpuPools\.gpunp has a fixed nodeCount 1 \(as Azure has it\)",
    ):
        lines("team", cluster=cluster(fixed), gpuPools=ADOPTING, gpuGroups={"inference": ["gpunp", "t4"]})


@pytest.mark.parametrize("preview", [True, False], ids=["preview", "deployment"])
def test_a_group_of_an_adopted_pool_that_azure_runs_in_deallocate_mode_is_refused_in_one_line(preview: bool) -> None:
    """Refused for the group only: the same pool in no group, or in Delete mode, is adopted."""
    deallocating = {**GPUNP, "scaleDownMode": "Deallocate"}
    with pytest.raises(ConfigError) as error:
        lines("team", preview, cluster=cluster(deallocating), gpuPools=ADOPTING, gpuGroups={"inference": ["gpunp", "t4"]})
    said = str(error.value)
    assert said.startswith(
        "invalid config aks-gpu:gpuGroups.inference = 'gpunp': aks-gpu:gpuPools.gpunp has scaleDownMode Deallocate (as Azure has it): "
        "the cluster autoscaler does not back such a pool off"
    ), said
    assert "the group would never fall back to its next pool" in said and "--scale-down-mode Delete" in said
    assert "or leave the pool out of the group" in said and "\n" not in said
    alone = lines("team", preview, cluster=cluster(deallocating), gpuPools={"gpunp": {"existing": "adopt"}})
    deleting = lines(
        "team", preview, cluster=cluster({**GPUNP, "scaleDownMode": "Delete"}), gpuPools=ADOPTING, gpuGroups={"inference": ["gpunp", "t4"]}
    )
    for adopted in (alone, deleting):
        assert [line for line in adopted.infos if line.startswith("adopt: aks-gpu:gpuPools.gpunp:")]


# --------------------------------------------------------------------------- the example

EXAMPLE = ROOT / "examples" / "gpu-groups" / "Pulumi.inference.yaml"


def test_the_examples_stack_file_passes_the_schema_and_its_group_lists_a_t4_then_a_larger_t4_then_an_a10() -> None:
    config = yaml.safe_load(EXAMPLE.read_text())
    assert list(VALIDATOR.iter_errors(config)) == []
    pools, groups = config["config"]["aks-gpu:gpuPools"], config["config"]["aks-gpu:gpuGroups"]
    assert [pools[name]["vmSize"] for name in groups["inference"]] == [T4, T4_8, A10]


def test_the_example_declares_its_group_and_one_proof_for_it() -> None:
    run = run_cached("inference", stack_file=EXAMPLE)[0]
    assert {p.inputs["agentPoolName"]: p.inputs["nodeLabels"] for p in run.of_type(POOL)} == dict.fromkeys(
        ("t4", "t4b", "a10"), {GROUP_LABEL: "inference"}
    )
    assert [j.inputs["metadata"]["name"] for j in run.of_type(JOB)] == ["mnist-proof-inference"]
