"""An existing cluster with the guide's GPU pool, used or adopted by the team stack."""

from __future__ import annotations

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
