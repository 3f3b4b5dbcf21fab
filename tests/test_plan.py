"""The plan as a value (components/plan.py): what a run reads, resolves, checks and says before
it declares anything, built by a plain call with a reader, no mock engine and no program run."""

from __future__ import annotations

import json

import fake_prices
import pytest
from support.adoption import guide_as_listed, saved_list
from support.config import parsed
from support.existing_cluster import T4, TEAM
from support.existing_pools import GPUNP, cluster
from support.guide_example import EXAMPLE, STACK_FILE
from support.kubernetes_objects import guide_daemon_set, listed, namespace
from support.plan import planned_by

from components.cluster.cluster import GpuClusterArgs
from components.cluster.existing_cluster import ExistingClusterArgs
from components.errors import CostError, PreflightError
from components.plan import Mode, Said, build_plan
from components.pools.existing_pool import UsedPool
from components.pools.gpu_pool import GpuPoolArgs
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
        *[("info", "cluster")] * 3,  # the guide's defaults it keeps (local accounts, any address, one System node)
        ("warn", "preflight"),
        ("warn", "preflight"),
        ("info", "proof"),
        ("info", "proof"),
        ("info", "cost"),
        ("info", "cost"),
        ("info", "cost"),
    ]  # the GPU pool, the System pool and the stack, from the shipped snapshot
    assert isinstance(built.cluster, GpuClusterArgs) and built.estimate is not None and built.mode is mode
    assert [p.name for p in built.pools.pools] == ["gpu"] and set(built.networks) == {"gpu"}


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
    assert levels(said) == [*[("info", "cluster")] * 3, ("warn", "preflight"), ("warn", "preflight"), ("info", "proof"), ("info", "proof")]


def test_an_existing_clusters_used_pool_is_resolved_to_what_azure_runs():
    built = plan(parsed(existingCluster=TEAM, gpuPools={"gpunp": {"existing": "use"}}), OfflineReader(cluster=cluster(GPUNP)))
    [pool] = built.pools.pools
    assert (pool.name, pool.vm_size, pool.existing, pool.min_count, pool.max_count) == ("gpunp", T4, "use", 0, 3)
    assert isinstance(built.cluster, ExistingClusterArgs) and built.cluster.facts.name == TEAM["name"]
    [used] = built.gpu_pools
    assert isinstance(used, UsedPool) and used.live.how == "use" and used.live.taints == ("sku=gpu:NoSchedule",)
    first = built.messages[0]
    assert first.level == "info"
    assert first.text.startswith("existing pool: aks-gpu:gpuPools.gpunp (use): 0-3 (autoscaler) x Standard_NC4as_T4_v3")


def test_the_subscription_is_read_once_for_the_checks_and_the_budget():
    reader = OfflineReader()
    cfg = parsed(gpuPool={"vmSize": T4}, cost={"budget": {"amount": 100, "contactEmails": ["ml@example.com"]}})
    built = plan(cfg, reader)
    assert reader.reads.count("client_subscription") == 1
    assert built.budget is not None and built.budget.subscription_id == reader.subscription
    assert [m for m in built.messages if m.text.startswith(f"cost: budget {built.budget.name}: 100.00 USD a month")]


def test_a_subscription_the_config_names_is_the_one_declared_and_the_client_is_not_asked():
    reader = OfflineReader()
    mine = "44444444-4444-4444-4444-444444444444"
    cfg = parsed(
        gpuPool={"vmSize": T4},
        cost={"budget": {"amount": 100, "contactEmails": ["ml@example.com"]}},
        **{"azure-native__subscriptionId": mine},
    )
    budget = plan(cfg, reader).budget
    assert budget is not None and budget.subscription_id == mine
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


# What __main__.py declares is decided in the plan (one Args per component), and read here by a plain call.
TEST_OWNER = {"aks-gpu-stack": "aks-gpu/test"}


def test_each_installer_serves_the_pools_of_its_mode_and_none_serves_an_aks_managed_pool():
    mixed = plan(parsed(gpuPools={"a": {"vmSize": T4}, "m": {"vmSize": T4, "management": "aks-managed"}}))
    assert mixed.device_plugin is not None and mixed.device_plugin.pool_names == ("a",) and not mixed.device_plugin.mig
    assert mixed.gpu_operator is None
    operator = plan(parsed(gpuPools={"op": {"vmSize": T4, "management": "gpu-operator"}}))
    assert operator.device_plugin is None and operator.gpu_operator is not None


def test_a_used_pool_gets_the_device_plugin_where_nothing_of_the_clusters_serves_it():
    used = plan(parsed(existingCluster=TEAM, gpuPools={"gpunp": {"existing": "use"}}), OfflineReader(cluster=cluster(GPUNP)))
    assert used.device_plugin is not None and used.device_plugin.pool_names == ("gpunp",) and used.gpu_operator is None


def declared(built) -> dict[str, GpuPoolArgs]:
    return {args.pool.name: args for args in built.gpu_pools if isinstance(args, GpuPoolArgs)}


def test_the_stacks_objects_on_an_existing_cluster_carry_its_mark_and_an_adopted_device_plugin_the_adopted_mark_too():
    reader = OfflineReader(cluster=cluster(GPUNP), kubernetes=listed(namespace("gpu-resources"), guide_daemon_set()))
    adopting = plan(parsed(existingCluster=TEAM, gpuPools={"gpunp": {"existing": "adopt"}}, devicePlugin={"adopt": True}), reader)
    plugin = adopting.device_plugin
    assert plugin is not None and adopting.proof is not None
    assert adopting.proof.marks == TEST_OWNER and plugin.marks == {**TEST_OWNER, "aks-gpu-adopted": "aks-gpu/test"}
    assert plugin.adopt and plugin.retain_on_delete
    [pool] = declared(adopting).values()
    assert pool.tags == plugin.marks and pool.retain_on_delete
    using = plan(parsed(existingCluster=TEAM, gpuPools={"gpunp": {"existing": "use"}}), OfflineReader(cluster=cluster(GPUNP)))
    assert using.device_plugin is not None and using.proof is not None
    assert using.device_plugin.marks == using.proof.marks == TEST_OWNER and not using.device_plugin.adopt
    assert declared(using) == {} and not using.device_plugin.retain_on_delete, "a used pool is not declared"


def test_a_created_clusters_objects_and_pools_carry_no_mark_and_nothing_is_released():
    built = plan(parsed(gpuPools={"a": {"vmSize": T4}, "b": {"vmSize": T4}}))
    assert built.device_plugin is not None and built.proof is not None
    assert built.proof.marks == built.device_plugin.marks == {}
    assert [(p.tags, p.retain_on_delete) for p in declared(built).values()] == [(None, False), (None, False)]


def test_gpu_pool_is_the_guides_one_pool_on_a_created_or_an_existing_cluster_and_gpu_pools_is_not():
    assert plan(parsed(gpuPool={"vmSize": T4})).outputs.guide_pool
    assert not plan(parsed(gpuPools={"gpu": {"vmSize": T4}})).outputs.guide_pool
    existing = plan(parsed(existingCluster=TEAM, gpuPool={"vmSize": T4}), OfflineReader(cluster=cluster(GPUNP)))
    assert existing.outputs.guide_pool


@pytest.mark.parametrize(
    ("overrides", "moves"),
    [({}, False), ({"upgrade": {"channel": "stable"}}, True), ({"upgrade": {"channel": "node-image"}}, False)],
)
def test_a_pools_version_is_left_to_azure_where_an_upgrade_channel_moves_it(overrides, moves):
    assert declared(plan(parsed(gpuPool={"vmSize": T4}, **overrides)))["gpu"].version_moves is moves


def test_an_existing_clusters_pools_leave_their_version_to_its_owner():
    existing = plan(parsed(existingCluster=TEAM, gpuPool={"vmSize": T4}), OfflineReader(cluster=cluster(GPUNP)))
    assert declared(existing)["gpu"].version_moves


def test_the_proof_trains_within_the_scripts_limit_and_asks_each_pool_for_a_gpu():
    proof = plan(parsed(gpuPool={"vmSize": T4}, mnistJob={"maxSeconds": 300})).proof
    assert proof is not None and proof.script is not None and proof.script.max_seconds == 300 and proof.proxy is None
    assert [(run.pool_name, run.gpu_resource, run.after) for run in proof.runs] == [("gpu", "nvidia.com/gpu", ("gpu", "device-plugin"))]
    guides = plan(parsed(gpuPool={"vmSize": T4}, mnistJob={"image": "mcr.microsoft.com/azuredocs/samples-tf-mnist-demo:gpu"})).proof
    assert guides is not None and guides.script is None, "the guide's image runs its own entrypoint, without the script's limit"


def test_a_budget_on_an_existing_cluster_watches_the_owner_tag_and_on_a_created_one_no_tag():
    # A created cluster's budget watches the groups the cluster names (test_budget.py, the graph).
    budgeted = {"budget": {"amount": 100, "contactEmails": ["ml@example.com"]}}
    budget = plan(parsed(gpuPool={"vmSize": T4}, cost=budgeted)).budget
    assert budget is not None and budget.owner_tag is None
    existing = plan(parsed(existingCluster=TEAM, gpuPool={"vmSize": T4}, cost=budgeted), OfflineReader(cluster=cluster(GPUNP))).budget
    assert existing is not None and existing.owner_tag == next(iter(TEST_OWNER.items())), "the owner tag"


# The adopting `up` of the guide's namespace and DaemonSet (devicePlugin.adopt): said by the plan,
# from the DaemonSet's spec decided there (Plan.device_plugin), after every other line.
ADOPTING = {"existingCluster": TEAM, "gpuPools": {"gpunp": {"existing": "adopt"}}, "devicePlugin": {"adopt": True}}
PLUGIN_LINE = "adopt: aks-gpu:devicePlugin: `pulumi up` imports "
NAMESPACE_URN = "urn:pulumi:test::aks-gpu::aks-gpu:kubernetes:NvidiaDevicePlugin$kubernetes:core/v1:Namespace::nvidia-device-plugin-ns"


def plugin_lines(built) -> list[str]:
    return [m.text for m in built.messages if m.text.startswith(PLUGIN_LINE)]


@pytest.mark.parametrize("mode", list(Mode))
def test_adopting_the_guides_plugin_the_plan_says_its_namespace_its_daemonset_then_what_it_adds_beside_them_last_of_all(mode):
    reader = OfflineReader(cluster=cluster(GPUNP), kubernetes=listed(namespace("gpu-resources"), guide_daemon_set()))
    built = plan(parsed(**ADOPTING), reader, mode)
    namespace_line, daemon_set_line = plugin_lines(built)
    beside = "adopt: aks-gpu:devicePlugin: beside the owner's objects, the stack adds "
    assert [m.text for m in built.messages[-3:-1]] == [namespace_line, daemon_set_line]
    assert built.messages[-1].text.startswith(beside)
    assert {m.level for m in built.messages[-3:]} == {"info"}
    assert namespace_line.startswith(f"{PLUGIN_LINE}Namespace gpu-resources, then updates 2 fields in place and replaces nothing:\n- ")
    assert daemon_set_line.startswith(f"{PLUGIN_LINE}DaemonSet gpu-resources/nvidia-device-plugin-daemonset, then updates ")
    assert 'spec.template.spec.securityContext.seccompProfile.type: (none) -> "RuntimeDefault"' in daemon_set_line
    # Before them, the adopted pool's own line, as the run says it.
    assert any(m.text.startswith("adopt: aks-gpu:gpuPools.gpunp: `pulumi up` imports AgentPool gpunp") for m in built.messages[:-3])


@pytest.mark.parametrize("mode", list(Mode))
def test_a_namespace_the_stacks_state_holds_already_leaves_the_plan_one_line_the_daemonsets(mode):
    reader = OfflineReader(
        cluster=cluster(GPUNP),
        kubernetes=listed(namespace("gpu-resources"), guide_daemon_set()),
        stack={NAMESPACE_URN: {"type": "kubernetes:core/v1:Namespace", "outputs": {"metadata": {"name": "gpu-resources"}}}},
    )
    built = plan(parsed(**ADOPTING), reader, mode)
    assert built.device_plugin is not None and built.device_plugin.imports == (False, True)
    [daemon_set_line] = plugin_lines(built)
    assert built.messages[-2].text == daemon_set_line
    assert daemon_set_line.startswith(f"{PLUGIN_LINE}DaemonSet gpu-resources/nvidia-device-plugin-daemonset, then updates ")


def test_a_cluster_whose_objects_were_not_read_gets_no_adoption_line_for_the_plugin_and_is_told_so():
    built = plan(parsed(**ADOPTING), OfflineReader(cluster=cluster(GPUNP)))
    assert plugin_lines(built) == []
    assert any("what the adopting `up` changes in it is not known" in m.text for m in built.messages)
    assert built.device_plugin is not None, "the plugin is declared all the same"


@pytest.mark.parametrize("preview", [True, False], ids=["preview", "deployment"])
def test_the_run_says_the_plans_plugin_lines_once_each_in_the_plans_order_and_nothing_else_of_adoption(preview):
    run = guide_as_listed(preview)
    said = [line for line in run.infos if line.startswith("adopt: ")]
    overrides = {"gpuPools": {"gpunp": {"existing": "adopt"}}, "devicePlugin": {"adopt": True}}
    reader = OfflineReader(cluster=json.loads((EXAMPLE / "cluster.json").read_text()), kubernetes=saved_list())
    planned = planned_by(reader, "ml-prod", preview, STACK_FILE, **overrides)
    assert said == [m.text for m in planned.messages if m.text.startswith("adopt: ")] and len(said) == 4


def test_the_device_plugins_inputs_are_decided_in_the_plan_from_the_pools_it_serves():
    """Each served pool's tolerations once (a used pool's from its live taints), its pools where
    the cluster may hold others, the owner's marks, and adopt only where the run adopts."""
    reader = OfflineReader(cluster=cluster(GPUNP, {**GPUNP, "name": "spotnp", "nodeTaints": ["sku=gpu:NoSchedule", "x=y:NoExecute"]}))
    using = plan(parsed(existingCluster=TEAM, gpuPools={"gpunp": {"existing": "use"}, "spotnp": {"existing": "use"}}), reader)
    plugin = using.device_plugin
    assert plugin is not None
    assert [(t.key, t.operator, t.value, t.effect) for t in plugin.gpu_tolerations] == [
        ("sku", "Equal", "gpu", "NoSchedule"),
        ("x", "Equal", "y", "NoExecute"),
    ]
    assert plugin.pool_names == ("gpunp", "spotnp") and plugin.marks == TEST_OWNER and not plugin.adopt
    assert (plugin.namespace, plugin.image, plugin.mig) == ("gpu-resources", parsed().device_plugin.image, False)
    created = plan(parsed(gpuPool={"vmSize": T4})).device_plugin
    assert created is not None and created.pool_names == () and created.marks == {}
    assert [(t.key, t.value) for t in created.gpu_tolerations] == [("sku", "gpu")]
    assert plan(parsed(gpuPools={"op": {"vmSize": T4, "management": "gpu-operator"}})).device_plugin is None
