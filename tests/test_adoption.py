"""What the adopting `up` does to the owner's objects (`existing: adopt`, `devicePlugin.adopt`):
each is declared exactly as the owner has it, or its change is named field by field in the
preview (`adopt:` lines), and nothing of theirs is replaced: a declaration that would replace
is refused in one line before anything is registered. Each in a preview and a deployment."""

from __future__ import annotations

import copy
import json

import pytest
from pulumi_azure_native.containerservice import AgentPoolArgs
from support import both_modes
from support.adoption import saved_list, the_guides
from support.existing_pools import (
    DRAIN,
    FIXED,
    GPUNP,
    OURS,
    OWNERS,
    SPOT,
    SURGE_UNSET,
    adopted,
    pool_lines,
    same_in_both_modes,
    stopped,
)
from support.guide_example import EXAMPLE, STACK_FILE
from support.plan import Lines, lines_by

from components.cluster.cluster_facts import PoolFacts
from components.errors import ConfigError, PreflightError
from components.ownership import adoption
from components.pools import pool_fields as agent_pool_members
from components.pools.existing_pool import UsedPool
from tools.azure_mocks import AzureMocks, OfflineReader
from tools.mock_engine import RecordingMonitor, run_program

POOL = "azure-native:containerservice:AgentPool"
BOTH = [True, False]  # a preview, a deployment


def plan_lines(done, key: str = "aks-gpu:gpuPools.gpunp") -> list[str]:
    return [line for line in done.infos if line.startswith(f"adopt: {key}:")]


# The graph of an adoption is tested in a preview: the program branches on the mode only in its
# plan, and `same_in_both_modes` checks that a deployment's plan hands the components the same
# Args (tests/support/both_modes.py); the plan's lines are checked in both modes, with no run.

# --------------------------------------------------------------------------- the pool


@pytest.mark.parametrize("preview", BOTH)
def test_a_pool_whose_upgrade_settings_leave_the_surge_unset_is_adopted_without_this_programs_no_surge_default(preview):
    """Not maxSurge 0 / maxUnavailable 1 silently: the owner's pool upgrades as it did."""
    assert "upgradeSettings" not in "".join(plan_lines(pool_lines("adopt", pool=SURGE_UNSET, preview=preview)))
    if preview:
        assert adopted("surge").inputs["upgradeSettings"] == {"drainTimeoutInMinutes": 45}
        assert "upgradeSettings" not in adopted("nosettings").inputs


@pytest.mark.parametrize("preview", BOTH)
def test_upgrade_settings_the_config_sets_on_an_adopted_pool_go_over_azures_member_by_member_and_are_named(preview):
    if preview:
        assert adopted("drain").inputs["upgradeSettings"] == {"maxSurge": "10%", "drainTimeoutInMinutes": 60}
    [line] = plan_lines(pool_lines("adopt", entry=DRAIN, preview=preview))
    assert "upgradeSettings.drainTimeoutInMinutes: (none) -> 60" in line and "maxSurge" not in line


def test_a_config_that_makes_the_adopted_pools_upgrade_settings_a_pair_aks_refuses_is_one_line():
    with pytest.raises(Exception, match=r"maxSurge 10% with maxUnavailable 1: both above 0") as error:
        pool_lines("adopt", entry={"upgradeSettings": {"maxUnavailable": "1"}})
    assert "\n" not in str(error.value)


@pytest.mark.parametrize("preview", BOTH)
def test_an_adopted_spot_pool_keeps_its_deallocate_eviction_policy_which_would_replace_it(preview):
    said = pool_lines("adopt", pool=SPOT, preview=preview)
    assert "scaleSet" not in "".join(plan_lines(said)) and "replaces nothing" in plan_lines(said)[0]
    if not preview:
        return
    inputs = adopted("spot").inputs
    assert (inputs["scaleSetPriority"], inputs["scaleSetEvictionPolicy"]) == ("Spot", "Deallocate")
    assert "spotMaxPrice" not in inputs, "the owner's pool has no price cap: none is declared (left to Azure)"


@pytest.mark.parametrize("preview", BOTH)
@pytest.mark.parametrize("pool_type", ["VirtualMachines", "AvailabilitySet"])
def test_a_pool_of_a_type_this_program_does_not_declare_is_refused_in_one_line_not_replaced(preview, pool_type):
    message = stopped(rf"the pool gpunp is type {pool_type}, and this program adopts only VirtualMachineScaleSets pools", "adopt",
                      pool={**GPUNP, "type": pool_type}, preview=preview)  # fmt: skip
    assert "use it instead" in message
    # It can still be used as it is: the plan hands out a used pool, which registers nothing (UsedPool).
    [used] = same_in_both_modes(pool={**GPUNP, "type": pool_type}).gpu_pools
    assert isinstance(used, UsedPool)


@pytest.mark.parametrize("preview", BOTH)
def test_every_member_of_the_live_pool_is_declared_as_it_is_or_named_in_the_preview(preview):
    if preview:
        inputs = adopted("owners").inputs
        for member, value in agent_pool_members.live_inputs(PoolFacts({**OWNERS, "name": "owners"})).items():
            if member not in ("tags", "orchestratorVersion"):
                assert inputs[member] == value, member
        assert inputs["tags"] == {"costcenter": "ml-42", **OURS, "aks-gpu-adopted": "aks-gpu/team"}
    [line] = plan_lines(pool_lines("adopt", pool=OWNERS, preview=preview))
    assert "then updates 2 fields in place and replaces nothing; it leaves artifactStreamingProfile as they are" in line
    assert line.endswith(':\n- tags.aks-gpu-adopted: (none) -> "aks-gpu/team"\n- tags.aks-gpu-stack: (none) -> "aks-gpu/team"')


@pytest.mark.parametrize("preview", BOTH)
def test_the_preview_names_each_field_the_adopting_up_changes_with_both_values(preview):
    [line] = plan_lines(pool_lines("adopt", entry={"minCount": 1, "maxCount": 2}, preview=preview))
    assert line.startswith("adopt: aks-gpu:gpuPools.gpunp: `pulumi up` imports AgentPool gpunp (/subscriptions/")
    assert line.endswith(
        ", then updates 4 fields in place and replaces nothing:\n- maxCount: 3 -> 2\n- minCount: 0 -> 1\n"
        '- tags.aks-gpu-adopted: (none) -> "aks-gpu/team"\n- tags.aks-gpu-stack: (none) -> "aks-gpu/team"'
    )


def test_a_pool_adopted_earlier_gets_no_adoption_line():
    done = pool_lines("adopt", pool={**GPUNP, "tags": {"costcenter": "ml-42", **OURS}})
    assert plan_lines(done) == []


def test_a_fixed_pool_with_the_autoscaler_off_declares_it_off_as_azure_says_it():
    assert adopted("fixed").inputs["enableAutoScaling"] is False
    assert "enableAutoScaling" not in plan_lines(pool_lines("adopt", pool=FIXED))[0]


def test_a_declaration_that_would_change_a_property_aks_fixes_is_refused_naming_both_values():
    facts = PoolFacts({**SPOT, "name": "gpunp"})
    declared = {**agent_pool_members.live_inputs(facts), "scaleSetEvictionPolicy": "Delete"}
    with pytest.raises(PreflightError) as error:
        adoption.pool_plan("aks-gpu:gpuPools.gpunp", facts, "/id", declared, ignored=())
    assert str(error.value).startswith(
        'aks-gpu:gpuPools.gpunp.existing = adopt: the declaration would change scaleSetEvictionPolicy: "Deallocate" -> "Delete" '
        "on the pool gpunp, which AKS fixes when a pool is created: the `up` would replace it"
    )
    assert adoption.pool_plan("k", facts, "/id", declared, ignored=("scaleSetEvictionPolicy",)).changes == ()


def test_the_table_of_agent_pool_inputs_is_azure_natives():
    """Every input the import reads into the state, so none is left out of the declaration."""
    path = {"resource_group_name", "resource_name", "agent_pool_name"}
    sdk = {name for name in AgentPoolArgs.__init__.__code__.co_varnames if not name.startswith("_")} - path - {"self"}
    assert set(agent_pool_members.inputs().values()) == sdk


# --------------------------------------------------------------------------- the guide's device plugin


def guide_lines(listed, preview: bool) -> Lines:
    """What `guide(listed, preview)` says, from its plan (tests/support/plan.py), with no run."""
    azure = OfflineReader(cluster=json.loads((EXAMPLE / "cluster.json").read_text()), kubernetes=listed)
    return lines_by(azure, "ml-prod", preview, STACK_FILE, gpuPools={"gpunp": {"existing": "adopt"}}, devicePlugin={"adopt": True})


@pytest.mark.parametrize("preview", BOTH)
def test_the_guides_daemonset_whose_selector_has_match_expressions_is_refused_as_a_selector_cannot_change(preview):
    listed = saved_list()
    the_guides(listed)["spec"]["selector"]["matchExpressions"] = [{"key": "tier", "operator": "In", "values": ["gpu"]}]
    with pytest.raises(PreflightError) as error:
        guide_lines(listed, preview)
    assert "not the guide's matchLabels {'name': 'nvidia-device-plugin-ds'} alone: a selector cannot change in place" in str(error.value)
    assert "\n" not in str(error.value)


@pytest.mark.parametrize("preview", BOTH)
def test_adopting_the_guides_plugin_names_each_field_the_stacks_spec_changes_and_replaces_nothing(preview):
    done = guide_lines(saved_list(), preview)
    [namespace] = plan_lines(done, "aks-gpu:devicePlugin")[:1]
    assert namespace == (
        "adopt: aks-gpu:devicePlugin: `pulumi up` imports Namespace gpu-resources, then updates 2 fields in place and replaces nothing:\n"
        '- metadata.annotations.aks-gpu-adopted: (none) -> "aks-gpu/ml-prod"\n'
        '- metadata.annotations.aks-gpu-stack: (none) -> "aks-gpu/ml-prod"\n'
        "- restarts: nothing (a namespace runs no pod)"
    )
    daemon_set = plan_lines(done, "aks-gpu:devicePlugin")[1]
    assert daemon_set.startswith("adopt: aks-gpu:devicePlugin: `pulumi up` imports DaemonSet gpu-resources/nvidia-device-plugin-daemonset")
    for change in (
        'spec.template.spec.containers[0].name: "nvidia-device-plugin-daemonset-ctr" -> "nvidia-device-plugin-ctr"',
        'metadata.labels.name: "nvidia-device-plugin-ds" -> (none)',
        '\n- spec.template.spec.tolerations: [{"effect": "NoSchedule", "key": "sku", "operator": "Equal", "value": "gpu"}] -> ',
        'spec.template.spec.securityContext.seccompProfile.type: (none) -> "RuntimeDefault"',
    ):
        assert change in daemon_set
    assert "spec.selector" not in daemon_set and "containers[0].image:" not in daemon_set and "and replaces nothing:\n" in daemon_set


def test_a_live_field_the_stacks_spec_differs_in_is_named_with_both_values():
    listed = saved_list()
    pod = the_guides(listed)["spec"]["template"]["spec"]
    pod["containers"][0]["image"] = "mcr.microsoft.com/oss/nvidia/k8s-device-plugin:v0.14.1"
    pod["priorityClassName"] = "gpu-critical"
    line = plan_lines(guide_lines(copy.deepcopy(listed), True), "aks-gpu:devicePlugin")[1]
    assert 'containers[0].image: "mcr.microsoft.com/oss/nvidia/k8s-device-plugin:v0.14.1" -> "nvcr.io/nvidia/k8s-device-plugin:' in line
    assert 'spec.template.spec.priorityClassName: "gpu-critical" -> "system-node-critical"' in line


def test_a_preview_that_could_not_read_the_cluster_says_the_plugins_changes_are_not_known():
    azure = OfflineReader(cluster=json.loads((EXAMPLE / "cluster.json").read_text()))
    overrides = {"devicePlugin": {"adopt": True}, "preflight": {"clusterFile": "examples/guide-cluster/cluster.json"}}
    done = lines_by(azure, "ml-prod", True, STACK_FILE, **overrides)  # what the run says, from its plan
    assert plan_lines(done, "aks-gpu:devicePlugin") == []
    assert any("what the adopting `up` changes in it is not known" in line for line in done.infos)


def test_a_refused_change_quotes_a_long_value_by_its_start_and_length_in_one_line():
    live = {**GPUNP, "name": "gpunp", "networkProfile": {"nodePublicIPTags": [{"ipTagType": "RoutingPreference", "tag": "x" * 5000}]}}
    facts = PoolFacts(live)
    declared = {**agent_pool_members.live_inputs(facts), "networkProfile": {}}
    with pytest.raises(PreflightError) as error:
        adoption.pool_plan("aks-gpu:gpuPools.gpunp", facts, "/id", declared, ignored=())
    assert "\n" not in str(error.value) and len(str(error.value)) < 1000 and "characters) -> (none)" in str(error.value)


def test_a_change_azure_native_replaces_the_pool_on_is_refused_too():
    live = {**GPUNP, "name": "gpunp", "networkProfile": {"nodePublicIPTags": [{"ipTagType": "RoutingPreference", "tag": "Internet"}]}}
    facts = PoolFacts(live)
    declared = {**agent_pool_members.live_inputs(facts), "networkProfile": {}}
    with pytest.raises(PreflightError, match=r"would change networkProfile\.nodePublicIPTags: \[.*\] -> \(none\)"):
        adoption.pool_plan("aks-gpu:gpuPools.gpunp", facts, "/id", declared, ignored=())


# --------------------------------------------------------------------------- members of the wrong type


def refused_list(tmp_path, listed, preview, **overrides):
    """The guide's stack with `listed` saved as its kubernetesFile and answered for the cluster: the one line it stops with."""
    saved = tmp_path / "kubernetes.json"
    saved.write_text(json.dumps(listed))
    azure = OfflineReader(cluster=json.loads((EXAMPLE / "cluster.json").read_text()), kubernetes=listed)
    monitor = RecordingMonitor(AzureMocks(reader=azure))
    with pytest.raises(ConfigError) as error:
        run_program("ml-prod", overrides={**overrides, "preflight": {"kubernetesFile": str(saved)}}, monitor=monitor, preview=preview, stack_file=STACK_FILE)  # fmt: skip
    assert monitor.registrations == [] and "\n" not in str(error.value)
    assert str(error.value).startswith(f"invalid config aks-gpu:preflight.kubernetesFile = {saved}: item ")
    return str(error.value)


@pytest.mark.parametrize("preview", BOTH)
@pytest.mark.parametrize("member, value", [("args", 5), ("command", {"a": 1}), ("env", "MIG_STRATEGY=mixed"), ("args", [1])])
def test_a_device_plugin_container_whose_args_command_or_env_is_not_a_list_is_one_line_not_a_traceback(tmp_path, preview, member, value):
    listed = saved_list()
    the_guides(listed)["spec"]["template"]["spec"]["containers"][0][member] = value
    message = refused_list(tmp_path, listed, preview)
    assert f"a container's {member} is {json.dumps(value)}, not a list of" in message


@pytest.mark.parametrize("preview", BOTH)
@pytest.mark.parametrize("spec", ["Active", ["finalizers"], 3])
def test_a_namespace_whose_spec_is_not_an_object_is_one_line_not_a_traceback(tmp_path, preview, spec):
    listed = saved_list()
    next(i for i in listed["items"] if i["kind"] == "Namespace" and i["metadata"]["name"] == "gpu-resources")["spec"] = spec
    message = refused_list(tmp_path, listed, preview, gpuPools={"gpunp": {"existing": "adopt"}}, devicePlugin={"adopt": True})
    assert f"spec is {json.dumps(spec)}, not an object" in message


# --------------------------------------------------------------------------- the owner's MIG strategy


def adopting(listed, preview):
    """The guide's stack adopting its pool and plugin from `listed`: (run or error, monitor)."""
    azure = OfflineReader(cluster=json.loads((EXAMPLE / "cluster.json").read_text()), kubernetes=listed)
    monitor = RecordingMonitor(AzureMocks(reader=azure))
    overrides = {"gpuPools": {"gpunp": {"existing": "adopt"}}, "devicePlugin": {"adopt": True}}
    try:
        return run_program("ml-prod", overrides=overrides, monitor=monitor, preview=preview, stack_file=STACK_FILE), monitor
    except PreflightError as error:
        return error, monitor


@pytest.mark.parametrize("preview", BOTH)
@pytest.mark.parametrize(
    "member, value",
    [
        ("env", [{"name": "MIG_STRATEGY", "value": "mixed"}]),
        ("args", ["--mig-strategy=mixed"]),
        ("args", ["-mig-strategy", "mixed"]),  # Go's flags take one dash too
    ],
)
def test_adopting_a_plugin_that_runs_mig_mixed_is_refused_in_one_line_never_declared_single(preview, member, value):
    listed = saved_list()
    the_guides(listed)["spec"]["template"]["spec"]["containers"][0][member] = value
    result, monitor = adopting(listed, preview)
    assert isinstance(result, PreflightError) and monitor.registrations == [] and "\n" not in str(result)
    assert str(result).startswith(
        "preflight: aks-gpu:devicePlugin.adopt = true, but DaemonSet gpu-resources/nvidia-device-plugin-daemonset runs MIG strategy "
        "mixed, and the stack's plugin runs single or none: adopting it would take away the nvidia.com/mig-<slices>g.<memory>gb"
    )
    assert "use the pools as they are (existing: use)" in str(result)


@pytest.mark.parametrize("preview", BOTH)
def test_adopting_a_plugin_that_reads_its_strategy_from_a_config_file_is_refused_as_its_spec_would_drop_it(preview):
    listed = saved_list()
    the_guides(listed)["spec"]["template"]["spec"]["containers"][0]["args"] = ["--config-file=/config/config.yaml"]
    result, monitor = adopting(listed, preview)
    assert isinstance(result, PreflightError) and monitor.registrations == []
    assert "takes its MIG strategy from a config file or a ConfigMap" in str(result)


@pytest.mark.parametrize("preview", BOTH)
def test_the_adopt_line_names_each_changed_item_of_a_long_env_list_by_name_so_no_change_is_cut_out(preview):
    """The owner's env, longer than a quoted value: its MIG_STRATEGY, which the stack's spec takes away, is named whole."""
    listed = saved_list()
    env = [{"name": "FAIL_ON_INIT_ERROR", "value": "true"}, {"name": "MIG_STRATEGY", "value": "single"}, {"name": "PASS_DEVICE_SPECS", "value": "true"}]  # fmt: skip
    the_guides(listed)["spec"]["template"]["spec"]["containers"][0]["env"] = env
    line = plan_lines(guide_lines(listed, preview), "aks-gpu:devicePlugin")[1]
    assert 'containers[0].env[name=MIG_STRATEGY]: {"name": "MIG_STRATEGY", "value": "single"} -> (none)' in line
    assert 'containers[0].env[name=FAIL_ON_INIT_ERROR].value: "true" -> "false"' in line


def test_each_changed_field_of_an_adopted_daemonset_is_one_whole_line():
    """The owner's kubectl annotation, past a thousand characters, is named whole on its line:
    a value cut mid-way could hide the very change that matters."""
    listed = saved_list()
    applied = json.dumps({"apiVersion": "apps/v1", "kind": "DaemonSet", "spec": {"template": {"x": "y" * 1200 + "mixed"}}})
    the_guides(listed)["metadata"]["annotations"] = {"kubectl.kubernetes.io/last-applied-configuration": applied}
    line = plan_lines(guide_lines(listed, True), "aks-gpu:devicePlugin")[1]
    head, *fields = line.split("\n- ")
    changed = [f for f in fields if not f.startswith("restarts: ")]
    assert head.endswith(f"then updates {len(changed)} fields in place and replaces nothing:")
    assert f"metadata.annotations.kubectl.kubernetes.io/last-applied-configuration: {json.dumps(applied)} -> (none)" in changed
    assert all(" -> " in f and "..." not in f for f in changed)


@pytest.mark.parametrize("preview", BOTH)
def test_a_template_change_on_an_adopted_daemonset_says_its_pods_restart(preview):
    """A change under spec.template rolls the pods under RollingUpdate (kubernetes.io, "Perform a
    Rolling Update on a DaemonSet"), the stack's strategy, which the same update sets."""
    line = plan_lines(guide_lines(saved_list(), preview), "aks-gpu:devicePlugin")[1]
    in_template = [f for f in line.split("\n- ")[1:] if f.startswith("spec.template")]
    assert line.split("\n- ")[-1] == (
        f"restarts: {len(in_template)} of these fields are in the pod template (spec.template), so the DaemonSet's pods roll "
        "(updateStrategy RollingUpdate): Kubernetes deletes each node's pod and starts a new one, 1 node at a time"
    )


def test_the_owners_on_delete_strategy_turned_rolling_by_the_adopting_update_says_the_pods_roll_all_the_same():
    listed = saved_list()
    the_guides(listed)["spec"]["updateStrategy"] = {"type": "OnDelete"}
    line = plan_lines(guide_lines(listed, True), "aks-gpu:devicePlugin")[1]
    assert '\n- spec.updateStrategy.type: "OnDelete" -> "RollingUpdate"\n' in line
    assert line.endswith("so the DaemonSet's pods roll (updateStrategy RollingUpdate): Kubernetes deletes each node's pod and starts "
                         "a new one, 1 node at a time (the same update turns the owner's OnDelete into RollingUpdate)")  # fmt: skip


def test_an_adopted_daemonset_kept_on_delete_says_its_pods_change_only_when_deleted():
    live = {"kind": "DaemonSet", "spec": {"updateStrategy": {"type": "OnDelete"}, "template": {"spec": {"priorityClassName": "a"}}}}
    declared = {"metadata": {}, "spec": {"updateStrategy": {"type": "OnDelete"}, "template": {"spec": {"priorityClassName": "b"}}}}
    plan = adoption.object_plan("aks-gpu:devicePlugin", "DaemonSet ns/ds", "ns/ds", live, declared)
    assert plan.restarts == (
        "1 of these fields is in the pod template (spec.template), but updateStrategy is OnDelete: "
        "each pod changes only when it is deleted (`kubectl delete pod`)"
    )
    unchanged = adoption.object_plan("k", "DaemonSet ns/ds", "ns/ds", live, {"metadata": {"labels": {"a": "b"}}, "spec": live["spec"]})
    assert unchanged.restarts == "nothing (no field of the pod template, spec.template, changes)"


NAMESPACED = ("kubernetes:apps/v1:DaemonSet", "kubernetes:core/v1:Service", "kubernetes:networking.k8s.io/v1:NetworkPolicy",
              "kubernetes:core/v1:ConfigMap", "kubernetes:batch/v1:Job")  # fmt: skip


def added_to(listed, namespace: str, **overrides) -> tuple[set[str], list[str]]:
    """What the adopting run registers new in `namespace` (kind name), and its `beside` line's items."""
    azure = OfflineReader(cluster=json.loads((EXAMPLE / "cluster.json").read_text()), kubernetes=listed)
    monitor = RecordingMonitor(AzureMocks(reader=azure))
    overrides = {"gpuPools": {"gpunp": {"existing": "adopt"}}, "devicePlugin": {"adopt": True}, **overrides}
    done = run_program("ml-prod", overrides=overrides, monitor=monitor, preview=True, stack_file=STACK_FILE)
    registered = {
        f"{r.type.rsplit(':', 1)[1]} {r.inputs['metadata']['name']}"
        for r in done.resources
        if r.type in NAMESPACED and r.inputs["metadata"].get("namespace") == namespace and not r.options.get("import")
    }
    [beside] = [i for i in done.infos if i.startswith("adopt: aks-gpu:devicePlugin: beside the owner's objects")]
    return registered, beside.split("\n- ")


@pytest.mark.parametrize("gpu_metrics", [True, False])
def test_adopting_the_guides_plugin_names_every_object_the_stack_adds_to_its_namespace(gpu_metrics):
    registered, (head, *items) = added_to(saved_list(), "gpu-resources", monitoring={"gpuMetrics": gpu_metrics})
    count = f"{len(registered)} object{'' if len(registered) == 1 else 's'}"
    assert head == f"adopt: aks-gpu:devicePlugin: beside the owner's objects, the stack adds {count} to their namespace gpu-resources:"
    assert {item.split(":")[0] for item in items} == registered
    assert ("DaemonSet dcgm-exporter" in registered) is gpu_metrics and "NetworkPolicy nvidia-device-plugin-deny-all" in registered
    assert "NetworkPolicy nvidia-device-plugin-deny-all: denies all ingress and all egress of its pods (the device plugin's)" in items


# --------------------------------------------------------------------------- a Spot pool the guide's plugin does not serve


def spot_cluster():
    """The guide's cluster, its pool gpunp a Spot pool with AKS's Spot taint, which the guide's DaemonSet does not tolerate."""
    cluster = json.loads((EXAMPLE / "cluster.json").read_text())
    gpunp = next(p for p in cluster["agentPoolProfiles"] if p["name"] == "gpunp")
    gpunp.update({k: v for k, v in SPOT.items() if k.startswith("scaleSet") or k == "nodeTaints"})
    return cluster


def spot_guide(preview, **overrides):
    """The guide's stack on `spot_cluster()`."""
    azure = OfflineReader(cluster=spot_cluster(), kubernetes=saved_list())
    monitor = RecordingMonitor(AzureMocks(reader=azure))
    try:
        return run_program("ml-prod", overrides=overrides, monitor=monitor, preview=preview, stack_file=STACK_FILE), monitor
    except PreflightError as error:
        return error, monitor


def spot_guide_lines(preview, **overrides) -> Lines:
    """What `spot_guide(preview, **overrides)` says, from its plan, with no run."""
    return lines_by(OfflineReader(cluster=spot_cluster(), kubernetes=saved_list()), "ml-prod", preview, STACK_FILE, **overrides)


@pytest.mark.parametrize("preview", BOTH)
def test_a_spot_pool_the_guides_plugin_does_not_tolerate_is_said_why_and_what_to_do_not_only_that_the_namespace_is_there(preview):
    if preview:  # a warning, from the plan
        said = next(w for w in spot_guide_lines(True).warnings if "namespace gpu-resources" in w)
    else:  # a deployment stops before anything is registered
        done, monitor = spot_guide(False)
        assert isinstance(done, PreflightError) and monitor.registrations == []
        said = str(done)
    assert (
        "that is because DaemonSet gpu-resources/nvidia-device-plugin-daemonset serves no node of gpunp: it does not tolerate "
        "kubernetes.azure.com/scalesetpriority=spot:NoSchedule (AKS's taint on Spot nodes); add that toleration to it, and this "
        "stack leaves gpunp to it, or take it over with aks-gpu:devicePlugin.adopt: true, and the stack's spec tolerates gpunp's taints"
    ) in said
    if not preview:
        return
    # As the line says: the stack's spec tolerates the Spot taint (the graph, in a preview; see `same_in_both_modes`).
    both_modes.same_in_both_modes(
        lambda: OfflineReader(cluster=spot_cluster(), kubernetes=saved_list()), "ml-prod", STACK_FILE, devicePlugin={"adopt": True}
    )
    taken, _ = spot_guide(True, devicePlugin={"adopt": True})
    [plugin] = [
        r for r in taken.of_type("kubernetes:apps/v1:DaemonSet") if r.inputs["metadata"]["name"] == "nvidia-device-plugin-daemonset"
    ]
    spot = {"key": "kubernetes.azure.com/scalesetpriority", "operator": "Equal", "value": "spot", "effect": "NoSchedule"}
    assert spot in plugin.inputs["spec"]["template"]["spec"]["tolerations"]


# --------------------------------------------------------------------------- one bound of an autoscaler Azure runs already


@pytest.mark.parametrize("preview", BOTH)
def test_max_count_alone_on_an_adopted_pool_azure_autoscales_changes_the_maximum_and_keeps_azures_minimum(preview):
    """The owner's pool runs the autoscaler 0-3 in Azure: `maxCount: 4` alone raises the ceiling;
    the floor stays Azure's, and the render says where it comes from."""
    said = pool_lines("adopt", entry={"maxCount": 4}, preview=preview)
    [line] = plan_lines(said)
    assert "maxCount: 3 -> 4" in line and "minCount" not in line
    [pool] = [i for i in said.infos if i.startswith("existing pool: aks-gpu:gpuPools.gpunp (adopt): 0-4 (autoscaler)")]
    assert "minCount 0 is kept from the pool's autoscaler in Azure (the config sets maxCount alone)" in pool
    if preview:
        [declared] = [p.pool for p in same_in_both_modes("adopt", entry={"maxCount": 4}).gpu_pools if p.pool.name == "gpunp"]
        assert (declared.min_count, declared.max_count) == (0, 4)


@pytest.mark.parametrize("preview", BOTH)
def test_one_bound_alone_on_an_adopted_pool_without_an_autoscaler_in_azure_is_refused_naming_both(preview):
    with pytest.raises(ConfigError) as error:
        pool_lines("adopt", pool=FIXED, entry={"maxCount": 4}, preview=preview)
    message = str(error.value)
    assert message.startswith("invalid config aks-gpu:gpuPools.gpunp: maxCount is set without minCount, and the pool gpunp has no")
    assert "set both to turn the cluster autoscaler on" in message and "\n" not in message


@pytest.mark.parametrize("preview", BOTH)
def test_max_count_alone_below_azures_minimum_is_refused_naming_azures_minimum(preview):
    with pytest.raises(ConfigError) as error:
        pool_lines("adopt", pool={**GPUNP, "minCount": 2, "count": 2}, entry={"maxCount": 1}, preview=preview)
    message = str(error.value)
    assert message.startswith(
        "invalid config aks-gpu:gpuPools.gpunp: maxCount 1 is below minCount 2, the pool's autoscaler minimum in Azure"
    )
    assert "\n" not in message
