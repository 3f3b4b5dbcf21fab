"""A GPU pool that runs under one kind of GPU management, and a config that asks for the
other (components/pools/pool_modes.py): refused in one line before anything is registered, in
a preview and in a deployment, with a way through for gpuPool and gpuPools alike."""

from __future__ import annotations

import pytest
from conftest import MANAGED_CLUSTER, MANAGED_GROUP
from support.plan import plan_warnings, planned_by
from support.pool_switch import AgentPoolsReader, run

from components.errors import PreflightError
from components.pools import agent_pools, pool_modes
from components.seam.reader import BadAnswer
from tools.azure_mocks import UNREAD_POOLS, OfflineReader

T4 = "Standard_NC4as_T4_v3"
RUNS = {
    "device-plugin": {"vmSize": T4, "count": 1},
    "gpu-operator": {"vmSize": T4, "count": 1, "gpuProfile": {"driver": "None"}},
    "aks-managed": {"vmSize": T4, "count": 1, "gpuProfile": {"driver": "Install", "nvidia": {"managementMode": "Managed"}}},
}


def running(azure, **pools: str) -> None:
    for name, mode in pools.items():
        path = f"/subscriptions/sub/resourceGroups/{MANAGED_GROUP}/providers/Microsoft.ContainerService/managedClusters/{MANAGED_CLUSTER}/agentPools/{name}"
        azure.pools[(MANAGED_GROUP, MANAGED_CLUSTER, name)] = {"id": path, "name": name, "properties": dict(RUNS[mode])}


@pytest.mark.parametrize("mode", sorted(RUNS))
def test_each_mode_is_told_apart_in_the_agent_pools_answer(azure, mode):
    running(azure, gpu=mode)
    assert agent_pools.read(azure.client, MANAGED_GROUP, MANAGED_CLUSTER, ["gpu", "other"]) == {"gpu": pool_modes.RunningPool.of_mode(mode)}
    assert agent_pools.read(azure.client, "no-rg", "no-cluster", ["gpu"]) == {}, "no cluster: nothing runs"
    assert azure.calls("GET")[0].api_version == "2026-08-01"


@pytest.mark.parametrize("preview", [True, False])
@pytest.mark.parametrize(
    "was, now", [("device-plugin", {"management": "aks-managed"}), ("gpu-operator", {"dedicatedVhd": True}), ("aks-managed", {})]
)
def test_a_switch_to_or_from_aks_managed_is_refused_before_anything_is_registered(azure, preview, was, now):
    running(azure, gpu=was)
    error, monitor = run(preview, azure, gpuPool={"vmSize": T4, **now})
    assert isinstance(error, PreflightError) and monitor.registrations == []
    message = str(error)
    assert "\n" not in message
    assert message.startswith("preflight: aks-gpu:gpuPool.management = ")
    assert f"node pool gpu in cluster {MANAGED_CLUSTER} runs {was} (as Azure describes it)" in message
    assert "Give the pool a new name (aks-gpu:gpuPool.name)" in message and "remove the entry" not in message


def test_in_gpu_pools_the_line_names_the_entry_and_both_ways_through(azure):
    running(azure, a="aks-managed", b="device-plugin")
    error, _ = run(False, azure, gpuPool=None, gpuPools={"a": {"vmSize": T4}, "b": {"vmSize": T4}})
    message = str(error)
    assert message.startswith("preflight: aks-gpu:gpuPools.a.management = device-plugin: node pool a")
    assert "(the entry's key in aks-gpu:gpuPools)" in message and "remove the entry, `pulumi up`, then add it back" in message


@pytest.mark.parametrize(
    "was, now",
    [
        ("device-plugin", {"management": "gpu-operator"}),
        ("gpu-operator", {}),
        ("aks-managed", {"management": "aks-managed"}),
        (None, {"management": "aks-managed"}),
    ],
)
def test_a_switch_within_one_kind_of_pool_a_same_mode_or_a_new_pool_goes_on(azure, was, now):
    """device-plugin and gpu-operator are both a typed pool: the driver setting replaces it,
    deleting first (test_lifecycle.py)."""
    if was:
        running(azure, gpu=was)
    try:  # the preview's plan, by a plain call (support/plan.py): the switch is refused there, or not at all
        result = planned_by(AgentPoolsReader(azure), "dev", True, gpuPool={"vmSize": T4, **now})
    except PreflightError as error:
        result = error
    assert not isinstance(result, PreflightError), result


def test_a_read_that_fails_stops_the_deployment_that_could_switch_a_pool(azure):
    """Unread, the switch is not refused: the managed pool's PUT would take over the running
    typed pool, and the old AgentPool's delete then remove it. The deployment stops instead."""
    running(azure, gpu="device-plugin")
    azure.refuse["GET"] = (403, "AuthorizationFailed")
    result, monitor = run(False, azure, gpuPool={"vmSize": T4, "management": "aks-managed"})
    assert isinstance(result, PreflightError)
    assert str(result).startswith("preflight: the GPU pools' management in Azure could not be read (HttpResponseError")
    assert "GPU pool(s) gpu are replaced or refused, so nothing was deployed" in str(result)
    assert monitor.registrations == []


def test_the_offline_render_reads_no_pool_and_says_what_it_assumed():
    reader = OfflineReader()  # the offline render's, read by a plain call on the preview's plan (support/plan.py)
    plan = planned_by(reader, "dev", True, gpuPool={"vmSize": T4, "management": "aks-managed"})
    assert reader.reads.count("pool_modes") == 1
    assert not any("management in Azure" in w for w in plan_warnings(plan))
    assert UNREAD_POOLS in reader.notes, "the plan shown is that of pools that do not run yet"


def test_an_agent_pools_answer_of_another_type_is_one_line_naming_the_pool_and_member(azure):
    """Read into the SDK's AgentPool and checked against its types (components/cluster/rest_shapes.py)."""
    running(azure, gpu="aks-managed")
    azure.pools[(MANAGED_GROUP, MANAGED_CLUSTER, "gpu")]["properties"]["gpuProfile"] = "Managed"
    with pytest.raises(
        BadAnswer, match=r"^the agentPools GET of gpu in cluster \S+: in Azure's answer, gpuProfile is \"Managed\", not an object$"
    ):
        agent_pools.read(azure.client, MANAGED_GROUP, MANAGED_CLUSTER, ["gpu"])
