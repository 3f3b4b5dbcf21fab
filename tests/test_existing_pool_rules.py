"""A pool the cluster has, used as it is or adopted (`gpuPools.<name>.existing`), meets the
rules a new pool meets (components/pools/existing_pools.py): a fixed pool of 0 nodes while
the Job is on, an autoscaler's floor above its ceiling, an autoscaler the config would switch
off at whatever count it runs; and an adopted pool's size written in other letters is told
Azure's spelling. Each in a preview and in a deployment."""

from __future__ import annotations

import pytest
from support.existing_pools import BOTH, GPUNP, adopted, cluster, same_in_both_modes

from components.errors import ConfigError, PreflightError
from components.pools.existing_pool import UsedPool
from tools.azure_mocks import AzureMocks
from tools.mock_engine import RecordingMonitor, run_program


def stopped(match, how="use", pool=GPUNP, preview=True, entry=None, kind=PreflightError):
    """The run refused in one line (ConfigError where the config's value is refused), with nothing registered."""
    monitor = RecordingMonitor(AzureMocks(cluster=cluster(pool)))
    with pytest.raises(kind, match=match) as error:
        run_program("team", overrides={"gpuPools": {"gpunp": {"existing": how, **(entry or {})}}}, monitor=monitor, preview=preview)
    assert "\n" not in str(error.value)
    assert monitor.registrations == []
    return str(error.value)


FIXED_AT_ZERO = {**GPUNP, "enableAutoScaling": False, "minCount": None, "maxCount": None, "count": 0}


@pytest.mark.parametrize("preview", BOTH)
@pytest.mark.parametrize("how", ["use", "adopt"])
def test_a_pool_azure_has_at_zero_fixed_nodes_is_refused_while_the_job_is_on_saying_what_to_do(preview, how):
    message = stopped(r"the pool gpunp, as Azure describes it: it has 0 nodes and no autoscaler", how, pool=FIXED_AT_ZERO, preview=preview)
    assert message.startswith(f"aks-gpu:gpuPools.gpunp.existing = {how}:")
    assert "set aks-gpu:mnistJob.enabled to false, or scale the pool first" in message


def test_a_pool_at_zero_fixed_nodes_is_used_as_it_is_when_the_job_is_off():
    # Not refused, in either mode; no proof Args (no Job declared), and a used pool (UsedPool registers nothing).
    plan = same_in_both_modes(pool=FIXED_AT_ZERO, mnistJob={"enabled": False})
    assert plan.proof is None
    [used] = plan.gpu_pools
    assert isinstance(used, UsedPool)


@pytest.mark.parametrize("preview", BOTH)
def test_adopting_with_a_floor_above_the_ceiling_is_refused_as_for_a_new_pool(preview):
    stopped(
        r"^invalid config aks-gpu:gpuPools\.gpunp: minCount 5 is greater than maxCount 1; expected minCount <= maxCount$",
        "adopt",
        entry={"minCount": 5, "maxCount": 1},
        preview=preview,
        kind=ConfigError,
    )


@pytest.mark.parametrize("preview", BOTH)
def test_a_used_pool_whose_description_has_a_floor_above_the_ceiling_is_refused(preview):
    stopped(
        r"its autoscaler runs from minCount 5 to maxCount 1, which AKS does not allow",
        pool={**GPUNP, "minCount": 5, "maxCount": 1},
        preview=preview,
    )


@pytest.mark.parametrize("preview", BOTH)
def test_adopting_with_a_null_range_that_would_switch_off_the_owners_autoscaler_at_zero_nodes_is_refused(preview):
    message = stopped(
        r"^invalid config aks-gpu:gpuPools\.gpunp\.minCount/maxCount = null with existing: adopt: the pool gpunp runs the cluster "
        r"autoscaler in Azure \(0-3, 0 node\(s\) now\)",
        "adopt",
        entry={"minCount": None, "maxCount": None},
        preview=preview,
        kind=ConfigError,
    )
    assert message.endswith("set nodeCount with them for the nodes it keeps, or remove minCount and maxCount to keep its autoscaler")


def test_adopting_with_the_autoscaler_switched_off_at_a_count_the_config_gives_declares_that_count():
    inputs = adopted("nodecount").inputs  # entry {"minCount": None, "maxCount": None, "nodeCount": 1}
    assert (inputs["count"], inputs.get("enableAutoScaling")) == (1, None)


@pytest.mark.parametrize("preview", BOTH)
def test_adopting_with_zero_fixed_nodes_while_the_job_is_on_is_refused_naming_node_count(preview):
    stopped(
        r"^invalid config aks-gpu:gpuPools\.gpunp\.nodeCount = 0 with aks-gpu:mnistJob\.enabled = true: the Job would wait forever",
        "adopt",
        entry={"minCount": None, "maxCount": None, "nodeCount": 0},
        preview=preview,
        kind=ConfigError,
    )


def test_adopting_with_a_start_outside_the_autoscalers_range_in_azure_is_refused_naming_node_count():
    stopped(
        r"^invalid config aks-gpu:gpuPools\.gpunp\.nodeCount = 5: an autoscaled pool starts inside the range its autoscaler has in "
        r"Azure \(gpunp\); expected 0 <= nodeCount <= 3$",
        "adopt",
        entry={"nodeCount": 5},
        kind=ConfigError,
    )


@pytest.mark.parametrize("preview", BOTH)
def test_adopting_with_the_pools_size_in_other_letters_is_told_its_spelling_not_a_replacement(preview):
    message = stopped(
        r"^invalid config aks-gpu:gpuPools\.gpunp\.vmSize = 'standard_nc4as_t4_v3': write it as Azure lists it, 'Standard_NC4as_T4_v3'",
        "adopt",
        entry={"vmSize": "standard_nc4as_t4_v3"},
        preview=preview,
        kind=ConfigError,
    )
    assert "replace" not in message
