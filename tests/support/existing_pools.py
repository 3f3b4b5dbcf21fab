"""An existing cluster with the guide's GPU pool, used or adopted by the team stack."""

from __future__ import annotations

import functools

import pytest
from conftest import run_cached

from components.errors import PreflightError
from support.plan import lines
from tools.azure_mocks import AzureMocks, existing_cluster
from tools.mock_engine import RecordingMonitor, run_program

POOL = "azure-native:containerservice:AgentPool"

JOB = "kubernetes:batch/v1:Job"

SYSTEM = {"name": "system", "mode": "System", "vmSize": "Standard_D4s_v5", "count": 3, "maxPods": 250, "osType": "Linux"}

# The guide's reader's pool, as `az aks show` reports it: T4 nodes, the guide's taint, the
# autoscaler from zero to three, and settings of the owner's this program never sets.
GPUNP = {
    "name": "gpunp",
    "mode": "User",
    "vmSize": "Standard_NC4as_T4_v3",
    "count": 0,
    "enableAutoScaling": True,
    "minCount": 0,
    "maxCount": 3,
    "maxPods": 250,
    "nodeTaints": ["sku=gpu:NoSchedule"],
    "nodeLabels": {"team": "ml"},
    "availabilityZones": ["1", "2"],
    "osDiskSizeGB": 128,
    "osType": "Linux",
    "type": "VirtualMachineScaleSets",
    "tags": {"costcenter": "ml-42"},
    "upgradeSettings": {"maxSurge": "10%"},
}

OURS = {"aks-gpu-stack": "aks-gpu/team"}

BOTH = [True, False]  # a preview, a deployment


def cluster(*pools):
    return existing_cluster(agentPoolProfiles=[SYSTEM, *pools])


def run(how="use", pool=GPUNP, preview=True, entry=None, **overrides):
    """The team stack with the cluster's pool `gpunp` named by `existing`, beside nothing else."""
    return run_cached("team", preview=preview, cluster=cluster(pool), gpuPools={"gpunp": {"existing": how, **(entry or {})}}, **overrides)[
        0
    ]


def pool_lines(how="use", pool=GPUNP, preview=True, entry=None, **overrides):
    """What `run` with the same arguments says from its plan (support/plan.py), with no run."""
    return lines("team", preview=preview, cluster=cluster(pool), gpuPools={"gpunp": {"existing": how, **(entry or {})}}, **overrides)


def stopped(match, how="use", pool=GPUNP, preview=True, entry=None):
    """The run refused in one line, with nothing registered."""
    monitor = RecordingMonitor(AzureMocks(cluster=cluster(pool)))
    with pytest.raises(PreflightError, match=match) as error:
        run_program("team", overrides={"gpuPools": {"gpunp": {"existing": how, **(entry or {})}}}, monitor=monitor, preview=preview)
    assert "\n" not in str(error.value)
    assert monitor.registrations == []
    return str(error.value)


def same_in_both_modes(how="use", pool=GPUNP, entry=None, **overrides):
    """`run`'s plan in a preview, once a deployment's is known to hand the components the same
    Args (support/both_modes.py): a test of what `run` declares then runs one mode."""
    from support import both_modes
    from tools.azure_mocks import OfflineReader

    pools = {"gpunp": {"existing": how, **(entry or {})}}
    return both_modes.same_in_both_modes(lambda: OfflineReader(cluster=cluster(pool)), "team", gpuPools=pools, **overrides)


# The owner's pools whose adoption the graph tests check (test_adoption.py, test_existing_gpu_pools.py,
# test_existing_pool_rules.py), side by side in one cluster, each adopted with its entry: each is
# declared from its own description and entry, so one run of the team stack serves each test.
SPOT = {
    **GPUNP,
    "scaleSetPriority": "Spot",
    "scaleSetEvictionPolicy": "Deallocate",
    "nodeTaints": ["sku=gpu:NoSchedule", "kubernetes.azure.com/scalesetpriority=spot:NoSchedule"],
}
# Every member a pool can have, as the owner set them.
OWNERS = {
    **GPUNP,
    "powerState": {"code": "Running"},
    "scaleDownMode": "Deallocate",
    "kubeletConfig": {"cpuManagerPolicy": "static"},
    "osSku": "AzureLinux",
    "enableFips": False,
    "gpuProfile": {"driver": "Install"},
    "artifactStreamingProfile": {"enabled": True},
    "provisioningState": "Succeeded",
}
SURGE_UNSET = {**GPUNP, "upgradeSettings": {"maxSurge": None, "drainTimeoutInMinutes": 45}}
NO_UPGRADE_SETTINGS = {k: v for k, v in GPUNP.items() if k != "upgradeSettings"}
FIXED = {**GPUNP, "enableAutoScaling": False, "count": 2, "minCount": None, "maxCount": None}
DRAIN = {"upgradeSettings": {"drainTimeoutInMinutes": 60}}
SIDE_BY_SIDE = {
    "gpunp": (GPUNP, {}),
    "surge": (SURGE_UNSET, {}),
    "nosettings": (NO_UPGRADE_SETTINGS, {}),
    "drain": (GPUNP, DRAIN),
    "spot": (SPOT, {}),
    "owners": (OWNERS, {}),
    "fixed": (FIXED, {}),
    "tagged": ({**GPUNP, "tags": {"costcenter": "ml-42", **OURS}}, {}),  # adopted earlier
    "counts": (GPUNP, {"minCount": 1, "maxCount": 2}),
    "fits": ({**GPUNP, "tags": {f"team-{i}": "x" for i in range(48)}}, {}),  # 48 tags, and the stack's two
    "nodecount": (GPUNP, {"minCount": None, "maxCount": None, "nodeCount": 1}),  # the autoscaler switched off
}


def side_by_side_cluster():
    return cluster(*({**pool, "name": name} for name, (pool, _) in SIDE_BY_SIDE.items()))


@functools.cache
def side_by_side():
    """The team stack adopting each of SIDE_BY_SIDE's pools, in a preview (its plan shown to hand a deployment the same Args)."""
    from support import both_modes
    from tools.azure_mocks import OfflineReader

    pools = {name: {"existing": "adopt", **entry} for name, (_, entry) in SIDE_BY_SIDE.items()}
    both_modes.same_in_both_modes(lambda: OfflineReader(cluster=side_by_side_cluster()), "team", gpuPools=pools)
    return run_cached("team", cluster=side_by_side_cluster(), gpuPools=pools)[0]


def adopted(name: str):
    """The agent pool `side_by_side` declares for the owner's pool `name`."""
    [pool] = [p for p in side_by_side().of_type(POOL) if p.inputs["agentPoolName"] == name]
    return pool
