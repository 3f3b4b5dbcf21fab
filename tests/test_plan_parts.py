"""The plan of some parts (components/plan.py `Part`): what the package's smaller components run.
A part left out is neither handed out nor checked; every part is the program's plan, which the
snapshots and tests/test_urns.py hold as they were."""

from __future__ import annotations

import dataclasses

import pytest
from support.config import parsed
from support.existing_cluster import T4, TEAM
from support.existing_pools import GPUNP, cluster
from support.kubernetes_objects import guide_daemon_set, listed, namespace

from components.cluster.existing_cluster import ExistingClusterArgs
from components.errors import ConfigError, PreflightError
from components.plan import ALL, Mode, Part, build_plan
from components.pools.existing_pool import UsedPool
from components.pools.gpu_pool import GpuPoolArgs
from tools.azure_mocks import OfflineReader


def plan(cfg, reader, parts=ALL, mode=Mode.PREVIEW):
    return build_plan(cfg, reader, mode, project="aks-gpu", stack="test", environ={}, parts=parts)


def guide_plugin_there() -> OfflineReader:
    """A cluster whose owner applied the guide's device plugin into gpu-resources by hand."""
    return OfflineReader(cluster=cluster(GPUNP), kubernetes=listed(namespace("gpu-resources"), guide_daemon_set()))


def test_a_plan_of_the_pools_alone_hands_out_the_pools_and_nothing_in_the_cluster_and_reads_nothing_there():
    cfg = parsed(existingCluster=TEAM, gpuPools={"t4": {"vmSize": T4, "minCount": 0, "maxCount": 1}, "gpunp": {"existing": "use"}})
    everything, reader = plan(cfg, guide_plugin_there()), guide_plugin_there()
    pools = plan(cfg, reader, parts=frozenset({Part.POOLS}))
    # The program's plan puts its own plugin in gpu-resources, and says the namespace is the owner's.
    assert everything.device_plugin is not None and everything.proof is not None
    assert any("namespace gpu-resources is in the cluster already" in m.text for m in everything.messages)
    # The same pool; the subscription is read only where something needs it (a managed pool, the proof's watch).
    assert [type(p) for p in pools.gpu_pools] == [UsedPool, GpuPoolArgs]
    assert pools.gpu_pools[1] == dataclasses.replace(everything.gpu_pools[1], subscription_id=None)
    assert (pools.device_plugin, pools.dcgm_exporter, pools.gpu_operator, pools.expander, pools.proof) == (None,) * 5
    assert isinstance(pools.cluster, ExistingClusterArgs) and not pools.cluster.kubernetes
    assert "kubernetes_objects" not in reader.reads
    assert not [m.text for m in pools.messages if m.text.startswith(("kubernetes:", "proof", "egress"))]


def test_a_plan_of_the_gpu_stack_alone_serves_the_clusters_own_pools_and_checks_what_the_cluster_runs():
    cfg = parsed(existingCluster=TEAM, gpuPools={"gpunp": {"existing": "use"}}, devicePlugin={"namespace": "nvidia"})
    stack = plan(cfg, OfflineReader(cluster=cluster(GPUNP), kubernetes=listed()), parts=frozenset({Part.GPU_STACK}))
    assert stack.device_plugin is not None and stack.device_plugin.namespace == "nvidia" and stack.proof is None
    assert [type(p) for p in stack.gpu_pools] == [UsedPool] and isinstance(stack.cluster, ExistingClusterArgs) and stack.cluster.kubernetes


def test_a_plan_without_the_proof_holds_no_pool_for_it_and_says_nothing_of_it():
    cfg = parsed(existingCluster=TEAM, gpuPools={"gpunp": {"existing": "use"}})
    everything = plan(cfg, OfflineReader(cluster=cluster(GPUNP)))
    stack = plan(cfg, OfflineReader(cluster=cluster(GPUNP)), parts=frozenset({Part.GPU_STACK}))
    assert any(m.text.startswith("proof") for m in everything.messages)
    assert not any(m.text.startswith("proof") for m in stack.messages)


@pytest.mark.parametrize("pool", [{"vmSize": T4}, {"existing": "adopt"}])
def test_a_plan_without_the_pools_refuses_a_pool_it_would_create_or_adopt_in_one_line_naming_it(pool):
    cfg = parsed(existingCluster=TEAM, gpuPools={"gpunp": pool})
    with pytest.raises(ConfigError) as refused:
        plan(cfg, OfflineReader(cluster=cluster(GPUNP)), parts=frozenset({Part.GPU_STACK}))
    assert str(refused.value).startswith("aks-gpu:gpuPools.gpunp: ") and "existing: use" in str(refused.value)
    assert "\n" not in str(refused.value)


def test_a_plan_without_the_pools_declares_no_budget_and_refuses_one_in_one_line():
    budget = {"budget": {"amount": 100, "contactEmails": ["team@example.com"]}}
    cfg = parsed(existingCluster=TEAM, gpuPools={"gpunp": {"existing": "use"}}, cost=budget)
    assert plan(cfg, OfflineReader(cluster=cluster(GPUNP))).budget is not None
    # Never left out without a word: the budget goes with the pools it watches.
    with pytest.raises(ConfigError, match=r"^aks-gpu:cost\.budget: this run declares no GPU pool, so no budget over them: [^\n]*$"):
        plan(cfg, OfflineReader(cluster=cluster(GPUNP)), parts=frozenset({Part.GPU_STACK}))


def test_a_plan_of_the_gpu_stack_alone_puts_the_gpu_operator_on_a_named_pool_without_a_driver_which_the_program_leaves_alone():
    driverless = {**GPUNP, "gpuProfile": {"driver": "None"}}
    cfg = parsed(existingCluster=TEAM, gpuPools={"gpunp": {"existing": "use"}})
    program = plan(cfg, OfflineReader(cluster=cluster(driverless), kubernetes=listed()))
    stack = plan(cfg, OfflineReader(cluster=cluster(driverless), kubernetes=listed()), parts=frozenset({Part.GPU_STACK}))
    assert program.gpu_operator is None and program.device_plugin is None  # the owner's pool: its GPU stack is the owner's
    assert stack.gpu_operator is not None and stack.device_plugin is None and stack.outputs.modes == {"gpu-operator"}


def test_a_plan_without_the_gpu_stack_leaves_the_device_plugin_the_stack_adopted_to_the_run_that_declares_it():
    """The guide's plugin, adopted by this stack (its marks on the namespace): the program's plan
    without devicePlugin.adopt refuses to declare it as its own; a plan of the proof alone, which
    declares no plugin, neither refuses nor says it releases it."""
    marks = {"aks-gpu-stack": "aks-gpu/test", "aks-gpu-adopted": "aks-gpu/test"}
    cfg = parsed(existingCluster=TEAM, gpuPools={"gpunp": {"existing": "use"}})

    def reader() -> OfflineReader:
        return OfflineReader(cluster=cluster(GPUNP), kubernetes=listed(namespace("gpu-resources", **marks), guide_daemon_set()))

    with pytest.raises(PreflightError, match="devicePlugin.adopt is not true"):
        plan(cfg, reader())
    proof = plan(cfg, reader(), parts=frozenset({Part.PROOF}))
    assert proof.proof is not None and proof.device_plugin is None
    assert not [m.text for m in proof.messages if "devicePlugin.adopt" in m.text]


def test_a_plan_of_the_pools_and_the_proof_without_the_gpu_stack_reads_the_cluster_but_claims_no_namespace_of_it():
    cfg = parsed(existingCluster=TEAM, gpuPools={"gpunp": {"existing": "use"}, "t4": {"vmSize": T4, "minCount": 0, "maxCount": 1}})
    everything = plan(cfg, guide_plugin_there())
    proof = plan(cfg, guide_plugin_there(), parts=frozenset({Part.POOLS, Part.PROOF}))
    assert any("namespace gpu-resources is in the cluster already" in m.text for m in everything.messages)
    assert proof.proof is not None and not any("gpu-resources" in m.text for m in proof.messages)
