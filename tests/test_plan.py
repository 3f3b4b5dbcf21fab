"""The plan as a value (components/plan.py): what a run reads, resolves, checks and says before
it declares anything, built by a plain call with a reader, no mock engine and no program run."""

from __future__ import annotations

import fake_prices
import pytest
from support.config import parsed
from support.existing_cluster import T4, TEAM
from support.existing_pools import GPUNP, cluster

from components.errors import CostError, PreflightError
from components.plan import Mode, Said, build_plan
from tools.azure_mocks import OfflineReader


def plan(cfg, reader=None, mode=Mode.PREVIEW, said=None):
    return build_plan(cfg, reader or OfflineReader(), mode, project="aks-gpu", stack="test", environ={}, said=said)


def levels(messages) -> list[tuple[str, str]]:
    """Each message's level and its first word or two: what it is about."""
    return [(m.level, m.text.split(":")[0]) for m in messages]


@pytest.mark.parametrize("mode", list(Mode))
def test_a_new_cluster_offline_says_what_was_not_checked_then_the_proof_then_the_cost_in_a_preview_and_a_deployment(mode):
    built = plan(parsed(gpuPool={"vmSize": T4}), mode=mode)
    assert levels(built.messages) == [
        ("warn", "preflight"),
        ("warn", "preflight"),
        ("info", "proof"),
        ("info", "proof"),
        ("info", "cost"),
    ]
    assert built.found is None and built.estimate is None and built.mode is mode
    assert [p.name for p in built.cfg.gpu_pools] == ["gpu"] and set(built.networks) == {"gpu"}


def test_a_preview_above_cost_max_hourly_warns_last_where_a_deployment_stops_in_the_plan():
    cfg = parsed(gpuPool={"vmSize": T4}, cost={"maxHourly": 0.1})
    reader = OfflineReader(prices=fake_prices.price_list())
    previewed = plan(cfg, reader)
    assert previewed.messages[-1].level == "warn"
    assert previewed.messages[-1].text.startswith("aks-gpu:cost.maxHourly = 0.10 USD: the stack may cost up to 0.62 USD per hour")
    assert previewed.estimate is not None
    said = Said()
    with pytest.raises(CostError, match=r"^aks-gpu:cost\.maxHourly = 0\.10 USD: the stack may cost up to 0\.62 USD per hour"):
        plan(cfg, reader, Mode.DEPLOYMENT, said)
    # What the deployment said before it stopped is kept, for the run to print.
    assert levels(said) == [("warn", "preflight"), ("warn", "preflight"), ("info", "proof"), ("info", "proof")]


def test_an_existing_clusters_used_pool_is_resolved_to_what_azure_runs():
    built = plan(parsed(existingCluster=TEAM, gpuPools={"gpunp": {"existing": "use"}}), OfflineReader(cluster=cluster(GPUNP)))
    [pool] = built.cfg.gpu_pools
    assert (pool.name, pool.vm_size, pool.existing, pool.min_count, pool.max_count) == ("gpunp", T4, "use", 0, 3)
    assert built.found is not None and built.found.name == TEAM["name"]
    assert built.live_pools["gpunp"].how == "use" and built.live_pools["gpunp"].taints == ("sku=gpu:NoSchedule",)
    first = built.messages[0]
    assert first.level == "info"
    assert first.text.startswith("existing pool: aks-gpu:gpuPools.gpunp (use): 0-3 (autoscaler) x Standard_NC4as_T4_v3")


def test_the_subscription_is_read_once_for_the_checks_and_the_budget():
    reader = OfflineReader()
    cfg = parsed(gpuPool={"vmSize": T4}, cost={"budget": {"amount": 100, "contactEmails": ["ml@example.com"]}})
    built = plan(cfg, reader)
    assert built.subscription == reader.subscription
    assert reader.reads.count("client_subscription") == 1
    assert built.budget_name is not None and built.messages[-1].text.startswith(f"cost: budget {built.budget_name}: 100.00 USD a month")


def test_a_subscription_the_config_names_is_the_one_declared_and_the_client_is_not_asked():
    reader = OfflineReader()
    mine = "44444444-4444-4444-4444-444444444444"
    cfg = parsed(
        gpuPool={"vmSize": T4},
        cost={"budget": {"amount": 100, "contactEmails": ["ml@example.com"]}},
        **{"azure-native__subscriptionId": mine},
    )
    assert plan(cfg, reader).subscription == mine
    assert "client_subscription" not in reader.reads


class NoSubscription(OfflineReader):
    """A reader whose sign-in answers with `failure` when the subscription is asked for."""

    def __init__(self, failure: BaseException) -> None:
        super().__init__()
        self.failure = failure

    def client_subscription(self) -> str:
        raise self.failure


BUDGETED = {"gpuPool": {"vmSize": T4}, "cost": {"budget": {"amount": 100, "contactEmails": ["ml@example.com"]}}}


def test_a_subscription_that_cannot_be_read_for_the_budget_stops_the_plan_in_one_line_naming_az_login():
    from azure.core.exceptions import ClientAuthenticationError

    with pytest.raises(PreflightError) as error:
        plan(parsed(**BUDGETED), NoSubscription(ClientAuthenticationError("DefaultAzureCredential failed to retrieve a token")))
    said = str(error.value)
    assert said.startswith("preflight: the subscription could not be read (ClientAuthenticationError: DefaultAzureCredential failed")
    assert said.endswith("sign in (az login), or set azure-native:subscriptionId") and "\n" not in said


def test_a_bug_of_the_programs_own_while_reading_the_subscription_surfaces_as_itself():
    with pytest.raises(KeyError, match="subscriptionId"):
        plan(parsed(**BUDGETED), NoSubscription(KeyError("subscriptionId")))
