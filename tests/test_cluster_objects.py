"""What an existing cluster already runs in Kubernetes (components/gpu_stack/cluster_objects.py,
cluster_object_checks.py): read before anything is registered, said at preview, and a
deployment stops before it would meet a namespace that is there already or run a second
device plugin; `devicePlugin.adopt` takes over the guide's DaemonSet on the adopting run only."""

from __future__ import annotations

import json
from typing import Any

import pytest
from conftest import run_cached
from support.kubernetes_objects import SKU_TOLERATION, guide_daemon_set, listed, namespace
from support.plan import Lines, plan_infos, plan_warnings, planned_by

from components.errors import ConfigError, PreflightError
from components.gpu_stack import cluster_objects, device_plugin
from components.gpu_stack.cluster_objects import PoolNodes
from tools.azure_mocks import AzureMocks, OfflineReader, existing_cluster
from tools.mock_engine import RecordingMonitor, run_program

T4 = "Standard_NC4as_T4_v3"
EXISTING = {"existingCluster": {"resourceGroupName": "team-rg", "name": "team-aks"}, "gpuPool": {"vmSize": T4}}
OWNER = "aks-gpu/dev"
NAMESPACE_TYPE, DAEMONSET_TYPE = "kubernetes:core/v1:Namespace", "kubernetes:apps/v1:DaemonSet"
UNCHECKED = "kubernetes: nothing the cluster runs was checked"


def operator_daemon_set() -> dict[str, Any]:
    """The GPU Operator's device plugin operand (NVIDIA/gpu-operator assets/state-device-plugin/0500_daemonset.yaml)."""
    found = guide_daemon_set("gpu-operator")
    found["metadata"]["ownerReferences"] = [{"apiVersion": "nvidia.com/v1", "kind": "ClusterPolicy", "name": "cluster-policy"}]
    found["spec"]["template"]["spec"]["nodeSelector"] = {"nvidia.com/gpu.deploy.device-plugin": "true"}
    return found


def saved_list(*items: dict[str, Any]) -> str:
    """A list as `kubectl get ... --all-namespaces` saves it: with kube-system and a DaemonSet of AKS's there."""
    kube_proxy = {"kind": "DaemonSet", "metadata": {"name": "kube-proxy", "namespace": "kube-system"}, "spec": {"template": {"spec": {}}}}
    return json.dumps(listed(namespace("kube-system"), kube_proxy, *items))


def run(kubernetes: Any, preview: bool, cluster: dict[str, Any] | None = None, **overrides: Any):
    """The dev stack on an existing cluster, the cluster's Kubernetes answering `kubernetes`:
    (run or error, monitor)."""
    azure = OfflineReader(cluster=cluster or existing_cluster(), kubernetes=kubernetes)
    monitor = RecordingMonitor(AzureMocks(reader=azure))
    try:
        return run_program("dev", overrides={**EXISTING, **overrides}, monitor=monitor, preview=preview), monitor
    except (PreflightError, ConfigError) as error:
        return error, monitor


def said_by_plan(kubernetes: Any, preview: bool, cluster: dict[str, Any] | None = None, **overrides: Any) -> Lines | Exception:
    """What `run` with the same arguments says before it declares anything, by a plain call on
    its plan (support/plan.py): its lines, or the one-line error that stops it."""
    azure = OfflineReader(cluster=cluster or existing_cluster(), kubernetes=kubernetes)
    try:
        plan = planned_by(azure, "dev", preview, **{**EXISTING, **overrides})
    except (PreflightError, ConfigError) as error:
        return error
    return Lines(plan_warnings(plan), plan_infos(plan))


def run_or_plan(kubernetes: Any, preview: bool, cluster: dict[str, Any] | None = None, **overrides: Any):
    """A preview's lines by a plain call on its plan (`said_by_plan`); a deployment, which a test
    asks whether it stopped before anything was registered, run whole (`run`): (lines, run or
    error; None, or the run's monitor)."""
    if preview:
        return said_by_plan(kubernetes, preview, cluster, **overrides), None
    return run(kubernetes, preview, cluster, **overrides)


def imports(monitor: RecordingMonitor) -> dict[str, str]:
    return {r.type: r.options["import"] for r in monitor.registrations if "import" in r.options}


# --------------------------------------------------------------------------- namespaces


@pytest.mark.parametrize("preview", [True, False])
def test_a_namespace_the_stack_would_create_that_exists_is_said_at_preview_and_stops_a_deployment(preview):
    said = "kubernetes: namespace gpu-workloads is in the cluster already, and this stack would create it (aks-gpu:mnistJob.namespace)"
    if preview:
        lines = said_by_plan(listed(namespace("gpu-workloads")), preview)
        assert any(w.startswith(said) and w.endswith("(a deployment stops here)") for w in lines.warnings)
    else:
        result, monitor = run(listed(namespace("gpu-workloads")), preview)
        assert isinstance(result, PreflightError) and said in str(result) and monitor.registrations == []


def test_the_stacks_own_namespaces_are_no_problem_once_they_carry_its_annotation():
    result, monitor = run(
        listed(namespace("gpu-resources", **{"aks-gpu-stack": OWNER}), namespace("gpu-workloads", **{"aks-gpu-stack": OWNER})), False
    )
    assert not isinstance(result, Exception) and imports(monitor) == {}
    assert not [w for w in result.warnings if w.startswith("kubernetes:")]


def test_the_namespaces_line_stays_for_a_cluster_that_could_not_be_read_and_goes_once_it_is():
    unread, read = said_by_plan(None, True), said_by_plan(listed(), True)
    assert any(i.startswith("namespaces: this stack creates") for i in unread.infos)
    assert not any(i.startswith("namespaces:") for i in read.infos)


# --------------------------------------------------------------------------- a second plugin


@pytest.mark.parametrize("preview", [True, False])
def test_the_guides_daemon_set_applied_by_hand_stops_a_deployment_and_names_adopt(preview):
    result, monitor = run_or_plan(listed(namespace("gpu-resources"), guide_daemon_set()), preview)
    said = "kubernetes: namespace gpu-resources is in the cluster already (it runs DaemonSet gpu-resources/nvidia-device-plugin-daemonset)"
    text = "\n".join(result.warnings) if preview else str(result)
    assert said in text and "devicePlugin.adopt: true" in text
    if not preview:
        assert isinstance(result, PreflightError) and monitor.registrations == []


@pytest.mark.parametrize("preview", [True, False])
def test_a_device_plugin_in_another_namespace_that_tolerates_the_gpu_taint_stops_a_deployment(preview):
    todays = guide_daemon_set("kube-system", tolerations=[SKU_TOLERATION])
    result, monitor = run_or_plan(listed(namespace("kube-system"), todays), preview)
    said = "kubernetes: DaemonSet kube-system/nvidia-device-plugin-daemonset runs NVIDIA's device plugin"
    text = "\n".join(result.warnings) if preview else str(result)
    assert said in text and "on nodes of gpu" in text and "two device plugins on one node" in text
    if not preview:
        assert isinstance(result, PreflightError) and monitor.registrations == []


@pytest.mark.parametrize("preview", [True, False])
@pytest.mark.parametrize("mode", ["warn", "off"])
def test_a_second_device_plugin_stops_a_deployment_whatever_preflight_mode_says(preview, mode):
    todays = guide_daemon_set("kube-system", tolerations=[SKU_TOLERATION])
    result, monitor = run_or_plan(listed(namespace("kube-system"), todays), preview, preflight={"mode": mode})
    said = "kubernetes: DaemonSet kube-system/nvidia-device-plugin-daemonset runs NVIDIA's device plugin"
    if preview:
        assert [w for w in result.warnings if w.startswith(said)][0].endswith(
            "(a deployment stops here, whatever aks-gpu:preflight.mode says)"
        )
    else:
        assert isinstance(result, PreflightError) and monitor.registrations == [] and "\n" not in str(result)
        assert str(result).startswith("preflight: never two device plugins on one node, whatever aks-gpu:preflight.mode says")
        assert said in str(result)


def test_with_preflight_off_the_namespace_checks_are_off_but_the_cluster_is_still_read():
    result = said_by_plan(listed(namespace("gpu-resources"), namespace("kube-system")), False, preflight={"mode": "off"})
    assert not isinstance(result, Exception), result
    assert not [w for w in result.warnings if w.startswith("kubernetes:")]


def test_the_2020_guides_daemon_set_elsewhere_cannot_land_on_the_stacks_tainted_pool():
    """Its tolerations are CriticalAddonsOnly and nvidia.com/gpu: the pool's sku=gpu:NoSchedule keeps it off."""
    result = said_by_plan(listed(namespace("kube-system"), guide_daemon_set("kube-system")), False)
    assert not isinstance(result, Exception) and not [w for w in result.warnings if w.startswith("kubernetes:")]


@pytest.mark.parametrize("preview", [True, False])
def test_the_gpu_operator_in_the_cluster_stops_a_deployment(preview):
    result, monitor = run_or_plan(listed(namespace("gpu-operator"), operator_daemon_set()), preview)
    said = "kubernetes: the GPU Operator runs in the cluster (DaemonSet gpu-operator/nvidia-device-plugin-daemonset)"
    text = "\n".join(result.warnings) if preview else str(result)
    assert said in text
    if not preview:
        assert isinstance(result, PreflightError) and monitor.registrations == []


def test_a_pool_whose_plugin_aks_runs_is_said_when_this_stack_would_put_its_own_there():
    pools = [PoolNodes("gpu", {"kubernetes.azure.com/agentpool": "gpu"}, (), True, "device-plugin", aks_plugin=True)]
    seen = cluster_objects.parse(listed())
    from components.gpu_stack.cluster_object_checks import other_plugins

    problems = other_plugins(seen.daemon_sets, pools)
    assert len(problems) == 1 and "pool gpu runs AKS's own device plugin" in problems[0].message


# --------------------------------------------------------------------------- adopt


def test_adopt_imports_the_guides_namespace_and_daemon_set_on_the_adopting_run_and_forces_their_fields():
    result, monitor = run(listed(namespace("gpu-resources"), guide_daemon_set()), False, devicePlugin={"adopt": True})
    assert not isinstance(result, Exception), result
    assert imports(monitor) == {NAMESPACE_TYPE: "gpu-resources", DAEMONSET_TYPE: "gpu-resources/nvidia-device-plugin-daemonset"}
    ds = next(r for r in monitor.registrations if r.options.get("import") and r.type == DAEMONSET_TYPE)
    assert ds.inputs["metadata"]["annotations"]["pulumi.com/patchForce"] == "true"
    assert ds.inputs["metadata"]["annotations"]["aks-gpu-stack"] == OWNER
    assert any(i.startswith("aks-gpu:devicePlugin.adopt: this run takes over namespace gpu-resources") for i in result.infos)


def test_adopt_imports_nothing_on_a_later_run_once_the_objects_carry_the_stacks_annotation():
    ours = guide_daemon_set()
    ours["metadata"]["annotations"] = {"aks-gpu-stack": OWNER}
    result, monitor = run(listed(namespace("gpu-resources", **{"aks-gpu-stack": OWNER}), ours), False, devicePlugin={"adopt": True})
    assert not isinstance(result, Exception) and imports(monitor) == {}
    ds = result.one(DAEMONSET_TYPE, "nvidia-device-plugin-daemonset")
    assert "pulumi.com/patchForce" not in ds.inputs["metadata"]["annotations"]


@pytest.mark.parametrize("preview", [True, False])
def test_adopt_without_the_guides_daemon_set_is_one_line_before_anything_is_registered(preview):
    result, monitor = run(listed(namespace("kube-system")), preview, devicePlugin={"adopt": True})
    assert isinstance(result, PreflightError) and monitor.registrations == [] and "\n" not in str(result)
    assert "aks-gpu:devicePlugin.adopt = true, but there is no namespace gpu-resources to take over" in str(result)


def test_adopt_of_a_daemon_set_that_is_not_a_device_plugin_is_refused():
    other = guide_daemon_set()
    other["spec"]["template"]["spec"]["containers"][0]["image"] = "registry.example/agent:1"
    result, _ = run(listed(namespace("gpu-resources"), other), True, devicePlugin={"adopt": True})
    assert isinstance(result, PreflightError) and "not NVIDIA's device plugin (it runs registry.example/agent:1)" in str(result)


@pytest.mark.parametrize("preview", [True, False])
def test_adopt_names_the_gpu_pools_that_would_lose_their_device_plugin(preview):
    pools = [
        {"name": "system", "mode": "System", "vmSize": "Standard_D4s_v5", "count": 3, "osType": "Linux"},
        {"name": "legacy", "mode": "User", "vmSize": T4, "count": 1, "osType": "Linux"},
    ]
    result, monitor = run_or_plan(
        listed(namespace("gpu-resources"), guide_daemon_set()),
        preview,
        cluster=existing_cluster(agentPoolProfiles=pools),
        devicePlugin={"adopt": True},
    )
    said = "aks-gpu:devicePlugin.adopt: the guide's DaemonSet serves GPU pool(s) legacy too"
    text = "\n".join(result.warnings) if preview else str(result)
    assert said in text
    if not preview:
        assert isinstance(result, PreflightError) and monitor.registrations == []


def test_adopt_is_refused_without_an_existing_cluster():
    with pytest.raises(ConfigError, match=r"aks-gpu:devicePlugin.adopt = true: only with aks-gpu:existingCluster"):
        run_program("dev", overrides={"devicePlugin": {"adopt": True}}, preview=True)


def test_the_guides_daemon_set_is_the_one_the_program_declares():
    """Adopting replaces the guide's spec in place: same name, same (immutable) selector."""
    assert cluster_objects.GUIDE_DAEMONSET == device_plugin.DAEMONSET_NAME
    assert cluster_objects.GUIDE_SELECTOR == device_plugin.POD_LABELS


# --------------------------------------------------------------------------- nothing read


def _times_out(kubeconfig: str):
    raise TimeoutError("the cluster's API server did not answer within 30 s")


@pytest.mark.parametrize("preview", [True, False])
@pytest.mark.parametrize(
    ("answer", "refuse", "why"),
    [
        (None, None, "the offline render makes no calls to the cluster"),
        (listed(), "HTTP 403 Forbidden", "ClusterAccessError: HTTP 403 Forbidden"),
        (_times_out, None, "TimeoutError: the cluster's API server did not answer within 30 s"),
    ],
    ids=["not read", "an error", "a timeout"],
)
def test_a_cluster_that_cannot_be_read_is_one_warning_and_nothing_checked(preview, answer, refuse, why):
    # Said and decided before anything is declared: by the plan, which a run that is not stopped declares.
    azure = OfflineReader(cluster=existing_cluster(), kubernetes=answer, refuse={"kubernetes_objects": refuse} if refuse else None)
    plan = planned_by(azure, "dev", preview, **EXISTING)
    said = [w for w in plan_warnings(plan) if w.startswith("kubernetes:")]
    assert len(said) == 1 and said[0].startswith(UNCHECKED) and why in said[0]
    assert plan.gpu_pools and plan.device_plugin, "nothing was checked, and nothing is blocked"


def test_a_deployment_that_adopts_stops_when_the_cluster_cannot_be_read():
    result, monitor = run(None, False, devicePlugin={"adopt": True})
    assert isinstance(result, PreflightError) and monitor.registrations == [] and "\n" not in str(result)
    assert "what the cluster runs could not be read" in str(result)


# --------------------------------------------------------------------------- the saved file


def test_the_offline_render_checks_the_saved_kubernetes_file(tmp_path):
    saved = tmp_path / "team-aks-kubernetes.json"
    saved.write_text(saved_list(namespace("gpu-resources"), guide_daemon_set()))
    reader = OfflineReader(cluster=existing_cluster())
    plan = planned_by(reader, "dev", True, **{**EXISTING, "preflight": {"kubernetesFile": str(saved)}})
    assert f"offline: what the cluster runs in Kubernetes read from {saved}" in reader.notes
    assert any("kubernetes: namespace gpu-resources is in the cluster already" in w for w in plan_warnings(plan))


@pytest.mark.parametrize(
    ("content", "why"),
    [
        ("[]", "expected what `kubectl get namespaces,daemonsets --all-namespaces --show-managed-fields --output json` prints"),
        ('{"items": [{"kind": "Namespace", "metadata": {}}]}', "item 0: metadata.name is not a string"),
        (
            '{"items": [{"kind": "DaemonSet", "metadata": {"name": "x", "namespace": "y"}, "spec": {"template": {"spec": {"containers": [{"image": 3}]}}}}]}',
            "item 0: a container's image is 3, not a string",
        ),
        ("{", "not JSON"),
    ],
)
def test_a_malformed_kubernetes_file_is_one_line_naming_the_key_and_the_file(tmp_path, content, why):
    saved = tmp_path / "objects.json"
    saved.write_text(content)
    with pytest.raises(ConfigError) as raised:
        run_program("dev", overrides={**EXISTING, "preflight": {"kubernetesFile": str(saved)}}, preview=True)
    message = str(raised.value)
    assert "\n" not in message and message.startswith(f"invalid config aks-gpu:preflight.kubernetesFile = {saved}") and why in message


@pytest.mark.parametrize("preview", [True, False])
def test_the_program_itself_refuses_a_malformed_kubernetes_file_though_it_reads_the_cluster_live(tmp_path, preview):
    saved = tmp_path / "objects.json"
    saved.write_text('{"items": 3}')
    result, monitor = run(listed(), preview, preflight={"kubernetesFile": str(saved)})
    assert isinstance(result, ConfigError) and monitor.registrations == []
    assert str(result).startswith(f"invalid config aks-gpu:preflight.kubernetesFile = {saved}: expected what `kubectl get")


def test_the_kubernetes_file_is_refused_without_an_existing_cluster(tmp_path):
    saved = tmp_path / "objects.json"
    saved.write_text(saved_list())
    with pytest.raises(ConfigError, match=r"aks-gpu:preflight.kubernetesFile = .*only with aks-gpu:existingCluster"):
        run_program("dev", overrides={"preflight": {"kubernetesFile": str(saved)}}, preview=True)


@pytest.mark.parametrize("preview", [True, False])
@pytest.mark.parametrize("devices", [{}, {"adopt": True}])
def test_a_kubernetes_file_saved_without_all_namespaces_is_refused_as_incomplete_not_taken_for_advice(tmp_path, preview, devices):
    # `kubectl get namespaces,daemonsets` without --all-namespaces: every Namespace, and the
    # current namespace's DaemonSets only (none here), though gpu-resources runs the guide's.
    saved = tmp_path / "objects.json"
    saved.write_text(json.dumps(listed(namespace("default"), namespace("kube-system"), namespace("gpu-resources"))))
    result, monitor = run(listed(), preview, preflight={"kubernetesFile": str(saved)}, devicePlugin=devices)
    assert isinstance(result, ConfigError) and monitor.registrations == [] and "\n" not in str(result)
    message = str(result)
    assert message.startswith(
        f"invalid config aks-gpu:preflight.kubernetesFile = {saved}: an incomplete list: no DaemonSet, though AKS runs"
    )
    assert message.endswith(
        f"save it again with `kubectl get namespaces,daemonsets --all-namespaces --show-managed-fields --output json > {saved}`"
    )
    assert "kubectl delete" not in message and "remove adopt" not in message


# --------------------------------------------------------------------------- the stack's marks


def test_the_stacks_namespaces_and_device_plugin_carry_its_annotation_on_an_existing_cluster_only():
    shared, _ = run(listed(), True)
    marked = [r for r in shared.resources if (r.inputs.get("metadata") or {}).get("annotations", {}).get("aks-gpu-stack") == OWNER]
    assert {(r.type, r.inputs["metadata"]["name"]) for r in marked} == {
        (NAMESPACE_TYPE, "gpu-resources"),
        (NAMESPACE_TYPE, "gpu-workloads"),
        (DAEMONSET_TYPE, "nvidia-device-plugin-daemonset"),
    }
    own = run_cached("dev")[0]
    assert not [r for r in own.resources if "aks-gpu-stack" in ((r.inputs.get("metadata") or {}).get("annotations") or {})]
