"""The day after on a cluster the stack created: a capacity group is added, and the cluster has
the priority expander's ConfigMap already, made by hand (as AKS's blog has admins do for Spot
pools). pulumi-kubernetes creates client-side, so declaring it would stop `up` at AlreadyExists
and a preview would not say so. The owner's ConfigMap is used, never declared, and the plan
says which of the groups' lines it has and lacks; one the stack's state holds stays the stack's;
a first `up` reads nothing. Each in a preview and a deployment: the graph by a run, what is read,
decided and said by the plan the run declares from (support/plan.py)."""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import pytest
from conftest import run_cached
from support.guide_example import EXAMPLE
from support.kubernetes_objects import listed
from support.plan import plan_infos, plan_warnings, planned, planned_by
from support.stack_export import exported, saved
from test_gpu_groups import POOLS

from components.cluster.cluster import GpuClusterArgs
from components.errors import ConfigError, PreflightError
from components.gpu_stack.cluster_objects import SAVE_WITH_CONFIG_MAPS
from components.ownership import stack_state
from components.plan import Plan
from components.pools import priority_config_map, priority_expander
from tools.azure_mocks import AzureMocks, OfflineReader
from tools.mock_engine import ProgramRun, RecordingMonitor, run_program

BOTH = pytest.mark.parametrize("preview", [True, False], ids=["preview", "deployment"])
CLUSTER, CONFIG_MAP = "azure-native:containerservice:ManagedCluster", "kubernetes:core/v1:ConfigMap"
EXPANDER_MAP = "cluster-autoscaler-priority-expander"
GROUPS = {"inference": ["t4", "t4b", "a10"]}
WITH_GROUP = {"gpuPool": None, "gpuPools": POOLS, "gpuGroups": GROUPS}
# The groups' lines and the System pool's, outside every group, on their top level.
OUTSIDE = ("system",)
#: What a preview of the dev stack's created cluster says of its group (the names derived for dev).
CREATED_LINE = priority_expander.created_cluster_line(GROUPS, OUTSIDE, "aks-gpu-dev-rg", "aks-gpu-dev")
OURS = (
    "{40: ['^aks-t4-[0-9]+-vmss$', '^aks-system-[0-9]+-vmss$'], 30: ['^aks-t4b-[0-9]+-vmss$'], 20: ['^aks-a10-[0-9]+-vmss$'], 10: ['.*']}"
)
# The blog's ConfigMap for Spot pools (Azure/AKS website/blog/2025-07-17-Scaling-safely-with-spot-on-aks).
BLOG = "50:\n  - .*spot.*\n10:\n  - .*on-demand.*\n1:\n  - .*catch-all.*\n"
CHECK = "kubectl get configmap -n kube-system cluster-autoscaler-priority-expander -o yaml"


def config_map(name: str, data: dict[str, Any]) -> dict[str, Any]:
    """A kube-system ConfigMap as `kubectl get -o json` lists it, after `kubectl apply`."""
    applied = {"kubectl.kubernetes.io/last-applied-configuration": "{}"}
    return {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {"name": name, "namespace": "kube-system", "annotations": applied},
        "data": data,
    }


# What every namespace has: kube-controller-manager publishes it (rootcacertpublisher).
ROOT_CA = config_map("kube-root-ca.crt", {"ca.crt": "-----BEGIN CERTIFICATE-----"})
OWNERS = config_map(EXPANDER_MAP, {"priorities": BLOG})


def deployed(**overrides: Any) -> ProgramRun:
    """The first `up` of the dev stack with three GPU pools (and `overrides`): shared, read-only."""
    return run_cached("dev", False, gpuPool=None, gpuPools=POOLS, **overrides)[0]


def state_of(run: ProgramRun) -> dict[str, dict[str, Any]]:
    """The state that `up` left, as readStackResourceOutputs answers it: the root Stack with the
    program's outputs, each custom resource's outputs (the mocks echo the inputs)."""
    root = f"urn:pulumi:{run.stack}::{run.project}::pulumi:pulumi:Stack::{run.project}-{run.stack}"
    state = {root: {"type": "pulumi:pulumi:Stack", "outputs": {k: o.value for k, o in run.outputs.items()}}}
    return state | {r.urn: {"type": r.type, "outputs": copy.deepcopy(r.inputs)} for r in run.resources if r.custom}


@pytest.fixture(scope="module")
def without_groups() -> dict[str, dict[str, Any]]:
    """The state of a stack whose cluster was created before any group: it holds the cluster, no ConfigMap."""
    return state_of(deployed())


@pytest.fixture(scope="module")
def with_group() -> dict[str, dict[str, Any]]:
    """The state of a stack that declared its own ConfigMap on its first `up`."""
    return state_of(deployed(gpuGroups=GROUPS))


def day_after(
    state: dict | None, kubernetes: Any, preview: bool, reader: OfflineReader | None = None, **overrides: Any
) -> tuple[ProgramRun, OfflineReader]:
    reader = reader or OfflineReader(stack=state, kubernetes=kubernetes)
    run = run_program("dev", overrides={**WITH_GROUP, **overrides}, monitor=RecordingMonitor(AzureMocks(reader=reader)), preview=preview)
    return run, reader


def planned_day_after(
    state: dict | None, kubernetes: Any, preview: bool, reader: OfflineReader | None = None, **overrides: Any
) -> tuple[Plan, OfflineReader]:
    """The plan `day_after` with the same arguments declares from (support/plan.py): what it
    reads, says and decides (the expander's Args: None where the owner's ConfigMap is used)."""
    reader = reader or OfflineReader(stack=state, kubernetes=kubernetes)
    return planned_by(reader, "dev", preview, **{**WITH_GROUP, **overrides}), reader


def plan_said(plan: Plan) -> list[str]:
    """`said` of the run that declares from `plan`: its warnings, then its lines for the record."""
    return [line for line in [*plan_warnings(plan), *plan_infos(plan)] if line.startswith("gpuGroups:")]


def declares_the_stacks_own(plan: Plan) -> bool:
    """Whether the run declares the stack's ConfigMap: __main__.py makes a CapacityExpander
    of the plan's expander Args, and none without them."""
    return plan.expander is not None


def expander_maps(run: ProgramRun) -> list[Any]:
    return [c for c in run.of_type(CONFIG_MAP) if c.inputs["metadata"]["name"] == EXPANDER_MAP]


def said(run: ProgramRun) -> list[str]:
    return [line for line in [*run.warnings, *run.infos] if line.startswith("gpuGroups:")]


# --------------------------------------------------------------------------- the owner's ConfigMap


def owners_line_said(line: str) -> None:
    """The line on the owner's ConfigMap with none of the groups' lines: one line, naming it the owner's."""
    assert "\n" not in line
    assert line.startswith(
        "gpuGroups: the ConfigMap kube-system/cluster-autoscaler-priority-expander in cluster aks-gpu-dev is its owner's "
        "(this stack's state does not hold it): the stack uses it as it is and declares none"
    )
    assert (
        f"which have none of the groups' lines; for the team's order the owner would add to key priorities, their own entries at or above its top level: {OURS}"
        in line
    )


def test_the_day_after_a_group_is_added_the_owners_configmap_is_used_and_not_declared(without_groups):
    # The graph by a preview's run; a deployment's decision, reads and line by its plan.
    run, reader = day_after(without_groups, listed(ROOT_CA, OWNERS), True)
    assert expander_maps(run) == [] and not run.of_type("aks-gpu:kubernetes:CapacityExpander")
    # The owner's ConfigMap is what the autoscaler reads: the profile still asks for it.
    assert run.one(CLUSTER).inputs["autoScalerProfile"] == {"expander": "priority"}
    (line,) = said(run)
    assert line in run.warnings
    owners_line_said(line)
    assert reader.reads[-2:] == ["user_kubeconfig", "config_map"]
    plan, reader = planned_day_after(without_groups, listed(ROOT_CA, OWNERS), False)
    assert not declares_the_stacks_own(plan) and isinstance(plan.cluster, GpuClusterArgs) and plan.cluster.priority_expander
    (line,) = plan_said(plan)
    assert line in plan_warnings(plan)
    owners_line_said(line)
    assert reader.reads[-2:] == ["user_kubeconfig", "config_map"]


def plan_line(owners_priorities: str) -> tuple[str, str]:
    """The plan's line on an owner's ConfigMap with these priorities, and its level."""
    reader = OfflineReader(
        stack=state_of(deployed()), kubernetes=listed(ROOT_CA, config_map(EXPANDER_MAP, {"priorities": owners_priorities}))
    )
    plan = planned_by(reader, "dev", True, **WITH_GROUP)
    assert plan.expander is None and isinstance(plan.cluster, GpuClusterArgs) and plan.cluster.priority_expander
    ((level, line),) = [(m.level, m.text) for m in plan.messages if m.text.startswith("gpuGroups:")]
    return level, line


def test_an_owners_configmap_with_some_of_the_groups_lines_is_said_with_those_it_has_and_those_it_lacks():
    level, line = plan_line("40:\n  - '^aks-t4-[0-9]+-vmss$'\n50:\n  - .*spot.*\n1:\n  - '.*'\n")
    assert level == "warn"
    assert "which have {40: ['^aks-t4-[0-9]+-vmss$'], 1: ['.*']} of the groups' lines" in line
    assert (
        "their own entries at or above its top level: {40: ['^aks-system-[0-9]+-vmss$'], 30: ['^aks-t4b-[0-9]+-vmss$'], "
        "20: ['^aks-a10-[0-9]+-vmss$']};"
    ) in line
    assert "only if theirs has no catch-all" not in line


def test_an_owners_configmap_with_every_line_of_the_groups_is_said_for_the_record():
    level, line = plan_line(priority_expander.priorities(GROUPS, OUTSIDE).yaml() + "\n50:\n  - .*spot.*\n")
    assert level == "info" and line.endswith(
        f"which have every line of the groups' ({OURS}): each group's pools are scaled in the team's order"
    )


@pytest.mark.parametrize(
    ("data", "why"),
    [
        ({"other": "10: ['.*']"}, "it has no priorities key"),
        ({"priorities": ""}, "its priorities are empty"),
        ({"priorities": "50: [.*spot"}, "its priorities are not YAML"),
        ({"priorities": "yes:\n  - .*spot.*\n"}, "its priority True is not an integer"),
        ({"priorities": "50: .*spot.*\n"}, "its priority 50 is not a list of patterns"),
    ],
)
def test_priorities_the_autoscaler_cannot_read_are_said_so_with_every_line_the_owner_would_put_in(data, why):
    owners = priority_config_map.owners_of(config_map(EXPANDER_MAP, data))
    line = priority_config_map.owners_line(priority_expander.priorities(GROUPS, OUTSIDE), "aks-gpu-dev", owners)
    assert f"which it cannot read ({why}): it keeps every option, so each group falls back in random order" in line
    assert line.endswith(f"put in it, their own entries at or above its top level: {OURS} (docs/gpu.md)")


def test_a_priority_written_as_text_is_read_as_the_autoscaler_reads_it():
    """sigs.k8s.io/yaml makes every key JSON text, which Go parses into the map's int keys."""
    owners = priority_config_map.owners_of(config_map(EXPANDER_MAP, {"priorities": "'40':\n  - '^aks-t4-[0-9]+-vmss$'\n"}))
    assert owners == priority_config_map.Owners({40: ("^aks-t4-[0-9]+-vmss$",)})


# --------------------------------------------------------------------------- the stack's own, and none yet


def test_a_configmap_the_stacks_state_holds_stays_the_stacks_and_the_cluster_is_not_read(with_group):
    # The graph by a deployment's run, against the first `up`'s; a preview's by its plan, against that `up`'s plan.
    first = deployed(gpuGroups=GROUPS)
    theirs = config_map(EXPANDER_MAP, first.one(CONFIG_MAP, EXPANDER_MAP).inputs["data"])
    run, reader = day_after(with_group, listed(ROOT_CA, theirs), False)
    (declared,) = expander_maps(run)
    assert declared.urn == first.one(CONFIG_MAP, EXPANDER_MAP).urn and declared.inputs == first.one(CONFIG_MAP, EXPANDER_MAP).inputs
    assert "config_map" not in reader.reads and said(run) == [CREATED_LINE]
    plan, reader = planned_day_after(with_group, listed(ROOT_CA, theirs), True)
    assert plan.expander is not None and plan.expander == planned("dev", False, **WITH_GROUP).expander
    assert "config_map" not in reader.reads and plan_said(plan) == [CREATED_LINE]


# These three decide, read and say only: by the plan, in each mode (the ConfigMap a plan's
# expander Args declare: test_capacity_expander.py).


@BOTH
def test_on_a_first_up_nothing_of_the_cluster_is_read_and_the_configmap_is_declared(preview):
    plan, reader = planned_day_after(None, listed(ROOT_CA, OWNERS), preview)
    assert declares_the_stacks_own(plan) and {"user_kubeconfig", "config_map"}.isdisjoint(reader.reads)
    assert plan_said(plan) == [CREATED_LINE]


@BOTH
def test_a_created_cluster_without_the_configmap_gets_the_stacks_own(without_groups, preview):
    plan, reader = planned_day_after(without_groups, listed(ROOT_CA), preview)
    assert declares_the_stacks_own(plan) and "config_map" in reader.reads
    assert plan_said(plan) == [CREATED_LINE]
    assert not [w for w in plan_warnings(plan) if "gpuGroups" in w]


@BOTH
def test_another_cluster_name_is_another_cluster_a_first_up_creates_so_nothing_is_read(without_groups, preview):
    plan, reader = planned_day_after(without_groups, listed(ROOT_CA, OWNERS), preview, clusterName="ml-dev")
    assert declares_the_stacks_own(plan) and "config_map" not in reader.reads


def test_the_names_the_day_after_reads_are_the_ones_the_program_registers(with_group):
    cluster = ("aks-gpu-dev-rg", "aks-gpu-dev")
    state = stack_state.read(OfflineReader(stack=with_group), cluster, project="aks-gpu", stack="dev")
    run = deployed(gpuGroups=GROUPS)
    assert state.urn(*stack_state.MANAGED_CLUSTER) == run.one(CLUSTER).urn
    assert state.urn(*stack_state.PRIORITY_CONFIG_MAP) == run.one(CONFIG_MAP, EXPANDER_MAP).urn


# --------------------------------------------------------------------------- a read that fails


REFUSED = [
    ("config_map", "the cluster answered HTTP 403 Forbidden to GET /api/v1/namespaces/kube-system/configmaps/x"),
    ("user_kubeconfig", "AuthorizationFailed: no listClusterUserCredential/action"),
    ("stack_resources", "the stack's state could not be read: backend timeout"),
]


@pytest.mark.parametrize(("read", "answer"), REFUSED, ids=[r for r, _ in REFUSED])
@BOTH
def test_a_configmap_that_cannot_be_read_is_not_known_at_preview_and_stops_a_deployment_in_one_line(without_groups, read, answer, preview):
    reader = OfflineReader(stack=without_groups, kubernetes=listed(ROOT_CA, OWNERS), refuse={read: answer})
    if preview:  # what it says and declares, by its plan
        plan, _ = planned_day_after(None, None, preview, reader)
        (warning,) = [w for w in plan_warnings(plan) if w.startswith("gpuGroups:")]
        assert "already, and whose it is, is not known" in warning and answer.split(":")[0] in warning
        assert warning.endswith(f"a deployment stops here while the read fails; check with `{CHECK}`")
        assert declares_the_stacks_own(plan)  # the plan shown is a first `up`'s
        return
    monitor = RecordingMonitor(AzureMocks(reader=reader))
    with pytest.raises(PreflightError) as error:
        run_program("dev", overrides=WITH_GROUP, monitor=monitor, preview=preview)
    message = str(error.value)
    assert message.startswith("preflight: whether cluster aks-gpu-dev has the ConfigMap kube-system/cluster-autoscaler-priority-expander")
    assert "(AlreadyExists), so nothing was created" in message and CHECK in message and "\n" not in message
    assert monitor.registrations == []


# --------------------------------------------------------------------------- the offline render's saved files


def saved_list(path: Path, *config_maps: dict[str, Any]) -> str:
    """The guide's cluster's saved list (Namespaces, DaemonSets in every namespace), with these ConfigMaps."""
    doc = json.loads((EXAMPLE / "kubernetes.json").read_text())
    doc["items"] += [copy.deepcopy(c) for c in config_maps]
    path.write_text(json.dumps(doc))
    return str(path)


@BOTH
def test_the_offline_render_the_day_after_reads_the_owners_configmap_from_the_saved_files(tmp_path, preview):
    files = {
        "stateFile": saved(tmp_path / "state.json", exported(deployed())),
        "kubernetesFile": saved_list(tmp_path / "kubernetes.json", ROOT_CA, OWNERS),
    }
    # What it reads, decides and says, by the plan `run_program(..., preview=preview)` declares from.
    reader = OfflineReader()
    plan = planned_by(reader, "dev", preview, **{**WITH_GROUP, "preflight": files})
    assert not declares_the_stacks_own(plan) and "is its owner's" in plan_said(plan)[0]
    assert f"offline: what the cluster runs in Kubernetes read from {files['kubernetesFile']}" in reader.notes


def test_a_saved_list_without_configmaps_leaves_the_owners_configmap_not_known(tmp_path):
    files = {"stateFile": saved(tmp_path / "state.json", exported(deployed())), "kubernetesFile": saved_list(tmp_path / "k.json")}
    (warning,) = [
        w
        for w in plan_warnings(planned_by(OfflineReader(), "dev", True, **{**WITH_GROUP, "preflight": files}))
        if w.startswith("gpuGroups:")
    ]
    assert "it lists no ConfigMap in kube-system: saved without them" in warning and SAVE_WITH_CONFIG_MAPS in warning


BROKEN = [
    ("data of numbers", {"data": {"priorities": 10}}, "data is not an object of strings"),
    ("data a list", {"data": ["10: ['.*']"]}, "data is not an object of strings"),
    ("no namespace", {"metadata": {"name": EXPANDER_MAP}}, "metadata.namespace is not a string"),
]


@pytest.mark.parametrize(("how", "change", "why"), BROKEN, ids=[b[0] for b in BROKEN])
@BOTH
def test_a_saved_configmap_of_the_wrong_shape_is_one_line_naming_the_file_before_anything_is_registered(
    tmp_path, how, change, why, preview
):
    files = {
        "stateFile": saved(tmp_path / "state.json", exported(deployed())),
        "kubernetesFile": saved_list(tmp_path / "k.json", OWNERS | change),
    }
    monitor = RecordingMonitor(AzureMocks())
    with pytest.raises(ConfigError) as error:
        run_program("dev", overrides={**WITH_GROUP, "preflight": files}, monitor=monitor, preview=preview)
    message = str(error.value)
    assert message.startswith(f"invalid config aks-gpu:preflight.kubernetesFile = {files['kubernetesFile']}: item ") and why in message
    assert "\n" not in message and monitor.registrations == []
