"""Several GPU pools in one stack (aks-gpu:gpuPools): each keeps its own settings and is
proven by its own Job; the DaemonSets run only on the pools whose GPU stack this program
installs."""

from __future__ import annotations

import dataclasses
import types

import pytest
from conftest import run_cached
from support.both_modes import declares_the_same_in_both_modes
from support.config import parsed, refused
from support.plan import lines

T4 = "Standard_NC4as_T4_v3"
A100 = "Standard_NC24ads_A100_v4"
POOL = "azure-native:containerservice:AgentPool"
MANAGED = "pulumi-python:dynamic/aksgpu:ManagedGpuPool"
JOB = "kubernetes:batch/v1:Job"
# t4 in two zones, a100 in none: zones are declared for the pool that has them.
TWO = {
    "t4": {"vmSize": T4, "minCount": 0, "maxCount": 3, "spot": True, "zones": ["1", "3"]},
    "a100": {"vmSize": A100, "migProfile": "MIG1g", "nodeCount": 1},
}


def pools_run(pools=TWO, preview=True, **overrides):
    return run_cached("dev", preview=preview, gpuPool=None, gpuPools=pools, **overrides)[0]


def one_mode_run(pools=TWO, preview=True):
    """The run of one mode, where the other declares the same (support/modes.py checks it): a
    preview and a deployment of pools on a created cluster read nothing, so nothing in the plan
    of the pools, their Jobs and DaemonSets depends on the mode."""
    declares_the_same_in_both_modes("dev", gpuPool=None, gpuPools=pools)
    return pools_run(pools, preview=preview)


def agentpool_values(spec) -> list[str]:
    [term] = spec["affinity"]["nodeAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"]["nodeSelectorTerms"]
    [expression] = term["matchExpressions"]
    assert (expression["key"], expression["operator"]) == ("kubernetes.azure.com/agentpool", "In")
    return expression["values"]


# --------------------------------------------------------------------------- config


def test_each_key_of_the_map_is_a_pool_with_its_own_settings():
    cfg = parsed(gpuPools=TWO)
    t4, a100 = sorted(cfg.gpu_pools, key=lambda p: p.name, reverse=True)
    assert (t4.name, t4.spot, t4.min_count, t4.node_count) == ("t4", True, 0, 0)
    assert (a100.name, a100.mig_profile, a100.node_count) == ("a100", "MIG1g", 1)
    assert cfg.pools.key(t4) == "aks-gpu:gpuPools.t4"


def test_pools_come_in_name_order_whatever_the_stack_file_says():
    assert [p.name for p in parsed(gpuPools={"zz": {"vmSize": T4}, "aa": {"vmSize": T4}}).gpu_pools] == ["aa", "zz"]


def test_gpu_pool_and_gpu_pools_together_are_refused():
    refused(r"^invalid config aks-gpu:gpuPool with aks-gpu:gpuPools: .*set one of them$", gpuPool={"vmSize": T4}, gpuPools=TWO)


def test_an_empty_map_is_refused():
    refused(r"^invalid config aks-gpu:gpuPools = \{\}: expected at least one pool", gpuPools={})


@pytest.mark.parametrize("name", ["T4", "1gpu", "gpu-a", "abcdefghijklm", "system"])
def test_a_pool_name_aks_would_refuse_is_refused(name):
    refused(rf"^invalid config aks-gpu:gpuPools\.{name} = '{name}': a pool name must be 1-12 lowercase", gpuPools={name: {"vmSize": T4}})


def test_a_name_member_inside_an_entry_is_refused_the_key_is_the_name():
    refused(r"^invalid config aks-gpu:gpuPools\.t4\.name = 'x': the entry's key, 't4', is the pool's name", gpuPools={"t4": {"name": "x"}})


def test_a_bad_member_names_its_pool():
    refused(
        r"^invalid config aks-gpu:gpuPools\.t4\.nodeCount = 1001: expected a whole number",
        gpuPools={"t4": {"vmSize": T4, "nodeCount": 1001}},
    )
    refused(r"^unknown config aks-gpu:gpuPools\.t4\.vmsize \(did you mean vmSize\?\)", gpuPools={"t4": {"vmsize": T4}})
    refused(
        r"^invalid config aks-gpu:gpuPools\.t4\.minCount/maxCount = 0/2 with aks-gpu:gpuPools\.t4\.management = aks-managed",
        gpuPools={"t4": {"vmSize": T4, "management": "aks-managed", "minCount": 0, "maxCount": 2}},
    )


def test_the_gpu_operator_beside_another_mode_is_refused():
    message = refused(
        r"^invalid config aks-gpu:gpuPools\.op\.management = 'gpu-operator' beside aks-gpu:gpuPools\.t4 \(device-plugin\)",
        gpuPools={"t4": {"vmSize": T4}, "op": {"vmSize": T4, "management": "gpu-operator"}},
    )
    assert "second device plugin" in message


def test_several_operator_pools_are_fine():
    cfg = parsed(gpuPools={"a": {"vmSize": T4, "management": "gpu-operator"}, "b": {"vmSize": A100, "management": "gpu-operator"}})
    assert cfg.pools.modes == {"gpu-operator"}


def test_settings_no_pool_uses_are_refused_and_settings_one_pool_uses_are_not():
    managed = {"a": {"vmSize": T4, "management": "aks-managed"}, "b": {"vmSize": T4, "management": "aks-managed"}}
    refused(
        r"^invalid config aks-gpu:devicePlugin is set but aks-gpu:gpuPools\.\*\.management is aks-managed",
        gpuPools=managed,
        devicePlugin={"namespace": "x"},
    )
    mixed = {"a": {"vmSize": T4}, "b": {"vmSize": T4, "management": "aks-managed"}}
    assert parsed(gpuPools=mixed, devicePlugin={"namespace": "nvidia"}).device_plugin.namespace == "nvidia"


def test_a_retired_size_warning_names_the_pool_that_has_it():
    said = lines("dev", gpuPool=None, gpuPools={"old": {"vmSize": "Standard_NC6"}, "t4": {"vmSize": T4}})
    [warning] = [w for w in said.warnings if "retired" in w]
    assert warning.startswith("aks-gpu:gpuPools.old.vmSize Standard_NC6 ")
    assert "`pulumi config set --path aks-gpu:gpuPools.old.vmSize Standard_NC4as_T4_v3 -s dev`" in warning


# --------------------------------------------------------------------------- the program


def test_every_pool_is_its_own_agent_pool_in_the_one_cluster():
    run = one_mode_run()
    pools = {r.inputs["agentPoolName"]: r.inputs for r in run.of_type(POOL)}
    assert sorted(pools) == ["a100", "t4"]
    assert pools["t4"]["scaleSetPriority"] == "Spot" and pools["t4"]["enableAutoScaling"] is True
    assert pools["a100"]["gpuInstanceProfile"] == "MIG1g" and "scaleSetPriority" not in pools["a100"]
    assert {p["resourceName"] for p in pools.values()} == {"aks-gpu-dev"}
    assert len(run.of_type("azure-native:containerservice:ManagedCluster")) == 1


def test_a_pools_zones_are_declared_and_a_change_replaces_the_pool_deleting_first():
    run = one_mode_run()
    pools = {r.inputs["agentPoolName"]: r for r in run.of_type(POOL)}
    assert pools["t4"].inputs["availabilityZones"] == ["1", "3"] and "availabilityZones" not in pools["a100"].inputs
    # AKS fixes a pool's zones when it is created, so the engine replaces it rather than failing an update.
    assert "availabilityZones" in pools["t4"].options["replaceOnChanges"] and pools["t4"].options["deleteBeforeReplace"]


def test_a_zone_azure_does_not_name_is_refused_in_one_line():
    message = refused(r"gpuPools\.t4\.zones", gpuPools={"t4": {"vmSize": T4, "zones": ["4"]}})
    assert message.endswith("zones[0] = '4': expected one of 1, 2, 3"), message


def test_every_pool_gets_one_job_pinned_to_it_that_waits_for_that_pool():
    run = one_mode_run()
    jobs = {r.inputs["metadata"]["name"]: r for r in run.of_type(JOB)}
    assert sorted(jobs) == ["mnist-proof-a100", "mnist-proof-t4"]
    for name, job in jobs.items():
        pool_name = name.rsplit("-", 1)[1]
        spec = job.inputs["spec"]["template"]["spec"]
        assert spec["nodeSelector"] == {"kubernetes.azure.com/agentpool": pool_name}
        pool = next(r for r in run.of_type(POOL) if r.inputs["agentPoolName"] == pool_name)
        assert pool.urn in job.dependencies
        others = [r.urn for r in run.of_type(POOL) if r.urn != pool.urn]
        assert not set(others) & set(job.dependencies), "a Job waits for its own pool only"
    t4_tolerations = {t["key"] for t in jobs["mnist-proof-t4"].inputs["spec"]["template"]["spec"]["tolerations"]}
    assert t4_tolerations == {"sku", "kubernetes.azure.com/scalesetpriority"}
    assert jobs["mnist-proof-t4"].options["customTimeouts"]["create"] == "81m", "a Spot pool from zero: a cold scale-up"
    assert jobs["mnist-proof-a100"].options["customTimeouts"]["create"] == "51m"


def test_one_device_plugin_serves_every_device_plugin_pool_with_their_tolerations_and_mig():
    run = pools_run()
    spec = run.one("kubernetes:apps/v1:DaemonSet", "nvidia-device-plugin-daemonset").inputs["spec"]["template"]["spec"]
    assert agentpool_values(spec) == ["a100", "t4"]
    assert {"key": "kubernetes.azure.com/scalesetpriority", "operator": "Equal", "value": "spot", "effect": "NoSchedule"} in spec[
        "tolerations"
    ]
    assert {"name": "MIG_STRATEGY", "value": "single"} in spec["containers"][0]["env"]


def test_device_plugin_and_exporter_stay_off_the_aks_managed_pools():
    run = pools_run({"t4": {"vmSize": T4}, "managed": {"vmSize": T4, "management": "aks-managed"}})
    plugin = run.one("kubernetes:apps/v1:DaemonSet", "nvidia-device-plugin-daemonset").inputs["spec"]["template"]["spec"]
    exporter = run.one("kubernetes:apps/v1:DaemonSet", "dcgm-exporter").inputs["spec"]["template"]["spec"]
    assert agentpool_values(plugin) == ["t4"]
    assert exporter["nodeSelector"] == {"kubernetes.azure.com/agentpool": "t4"}
    assert run.one(MANAGED).inputs["agentPoolName"] == "managed"
    managed_job = run.one(JOB, "mnist-proof-managed")
    assert run.one(MANAGED).urn in managed_job.dependencies
    assert not any("NvidiaDevicePlugin" in d for d in managed_job.dependencies), "AKS installs that pool's device plugin"
    assert "aks-managed pools" in run.outputs["gpuMetrics"].value


def test_the_exporter_runs_on_every_device_plugin_pool():
    run = pools_run()
    spec = run.one("kubernetes:apps/v1:DaemonSet", "dcgm-exporter").inputs["spec"]["template"]["spec"]
    assert agentpool_values(spec) == ["a100", "t4"] and "nodeSelector" not in spec


OPERATOR_POOLS = {
    "a": {"vmSize": T4, "management": "gpu-operator"},
    "b": {"vmSize": T4, "management": "gpu-operator", "spot": True},
    "c": {"vmSize": A100, "management": "gpu-operator"},
}


def test_operator_pools_share_one_release_that_tolerates_each_of_them():
    run = one_mode_run(OPERATOR_POOLS, preview=False)
    release = run.one("kubernetes:helm.sh/v3:Release")
    keys = {t["key"] for t in release.inputs["values"]["daemonsets"]["tolerations"]}
    assert "kubernetes.azure.com/scalesetpriority" in keys


def test_with_the_gpu_operator_each_job_waits_for_its_own_pool_and_the_release_alone():
    """As in the other modes: the first pool's Job starts once its pool and the operator are
    up, while the next pools are still being added, not after the whole chain."""
    run = pools_run(OPERATOR_POOLS, preview=False)
    release = run.one("kubernetes:helm.sh/v3:Release")
    pools = pool_resources(run)
    assert not {p.urn for p in pools.values()} & set(release.dependencies), "the release waits for no pool"
    jobs = {r.inputs["metadata"]["name"].rsplit("-", 1)[1]: r for r in run.of_type(JOB)}
    for name, job in jobs.items():
        assert pools[name].urn in job.dependencies and release.urn in job.dependencies
        assert not {p.urn for n, p in pools.items() if n != name} & set(job.dependencies)
    slow = {p.urn for p in pools.values()} | {j.urn for j in jobs.values()} | {release.urn}
    ends = finish_times(run, lambda r: 1.0 if r.urn in slow else 0.0)
    assert [ends[jobs[n].urn] for n in "abc"] == [2.0, 3.0, 4.0], "each Job right after its own pool"


def test_outputs_describe_each_pool_and_its_job():
    out = pools_run().outputs
    assert "mnistJobName" not in out, "the single-pool Job's outputs belong to gpuPool"
    t4 = out["gpuPools"].value["t4"]
    assert (t4["vmSize"], t4["gpusPerNode"], t4["management"], t4["generation"]) == (T4, 1, "device-plugin-daemonset", "2")
    assert out["gpuPools"].value["a100"]["gpusPerNode"] == 7, "seven MIG1g slices of one A100"
    assert t4["job"]["logsCommand"] == "kubectl logs --namespace gpu-workloads job/mnist-proof-t4"


def test_the_guide_pool_keeps_the_guides_manifests_unpinned():
    run = run_cached("dev")[0]
    assert "nodeSelector" not in run.one(JOB).inputs["spec"]["template"]["spec"]
    plugin = run.one("kubernetes:apps/v1:DaemonSet", "nvidia-device-plugin-daemonset").inputs["spec"]["template"]["spec"]
    assert "affinity" not in plugin


# --------------------------------------------------------------------------- one pool operation at a time

THREE = {
    "a": {"vmSize": T4},
    "b": {"vmSize": T4, "management": "aks-managed"},
    "c": {"vmSize": A100, "migProfile": "MIG1g"},
}


def pool_resources(run) -> dict[str, object]:
    return {r.inputs["agentPoolName"]: r for r in run.of_type(POOL) + run.of_type(MANAGED)}


def finish_times(run, seconds) -> dict[str, float]:
    """When each resource's step ends if the engine runs every step as soon as what it
    depends on has ended (what `pulumi up` does: the SDK registers a resource once its
    dependencies are created or updated), each step taking `seconds(resource)`."""
    by_urn = {r.urn: r for r in run.resources}
    done: dict[str, float] = {}

    def end(urn: str) -> float:
        if urn not in done:
            deps = [d for d in by_urn[urn].dependencies if d in by_urn]
            done[urn] = max((end(d) for d in deps), default=0.0) + seconds(by_urn[urn])
        return done[urn]

    for urn in by_urn:
        end(urn)
    return done


FOUR = {**THREE, "d": {"vmSize": T4, "spot": True, "minCount": 0, "maxCount": 2}}


def delete_antichains(run, condemned: set[str]) -> list[set[str]]:
    """The order in which an `up` deletes `condemned` (URNs of the state `run` wrote, which the
    next program no longer declares), as the engine schedules it: from the old state's
    direct dependencies among the condemned alone, it takes every condemned resource that
    depends on no other condemned one, again and again, and then reverses the list; each
    antichain's deletes run in parallel, one antichain after another (pulumi/pulumi at
    1b594989, pkg/resource/deploy/step_generator.go ScheduleDeletes and
    getDepgraphForScheduling: `dg.DependenciesOf(res).Intersect(condemned)`, then
    `slices.Reverse(antichains)`; pkg/resource/graph/dependency_graph.go DependenciesOf: direct
    dependencies only; deployment_executor.go performPostSteps: `ExecuteParallel(antichain)`
    then `tok.Wait`)."""
    depends = {r.urn: set(r.dependencies) for r in run.resources}
    left, rounds = set(condemned), []
    while left:
        free = {urn for urn in left if not depends[urn] & left}
        rounds.append(free)
        left -= free
    return rounds[::-1]


def test_each_gpu_pool_waits_for_every_pool_before_it_typed_or_managed():
    """AKS runs one agent-pool operation per cluster at a time: a second is 409
    OperationNotAllowed. The pools come in name order, and each depends directly on every
    pool before it, not just the one before: the engine orders deletes only by direct edges
    among what it deletes."""
    run = one_mode_run(FOUR, preview=False)
    pools = pool_resources(run)
    assert sorted(pools) == ["a", "b", "c", "d"]
    for i, name in enumerate("abcd"):
        earlier = {pools[n].urn for n in "abcd"[:i]}
        later = {pools[n].urn for n in "abcd"[i + 1 :]}
        assert earlier <= set(pools[name].dependencies), f"{name} waits for each of {sorted(earlier)}"
        assert not later & set(pools[name].dependencies)
    cluster = run.one("azure-native:containerservice:ManagedCluster").urn
    assert all(cluster in p.dependencies for p in pools.values()), "every pool still waits for its cluster"


@pytest.mark.parametrize("removed", ["ac", "ad", "bd", "abd", "acd", "abcd"])
def test_removing_pools_never_deletes_two_at_once(removed):
    """Take four pools and remove some, keeping the ones between: with a chain of single
    edges, removing a and c would delete both at once (c's only edge goes to b, which stays),
    and AKS would answer the second DELETE with 409."""
    run = pools_run(FOUR, preview=False)
    pools = pool_resources(run)
    condemned = {pools[n].urn for n in removed}
    rounds = delete_antichains(run, condemned)
    assert all(len(r) == 1 for r in rounds), "one pool delete at a time"
    names = {p.urn: n for n, p in pools.items()}
    assert [names[next(iter(r))] for r in rounds] == sorted(removed, reverse=True), "the last pool first"


def test_a_chain_of_single_edges_would_have_deleted_two_pools_at_once():
    """The model above against the shape this program had: it finds the race."""
    run = pools_run(FOUR, preview=False)
    pools = pool_resources(run)
    chained = [
        dataclasses.replace(
            r,
            dependencies=[d for d in r.dependencies if d not in {p.urn for p in pools.values()}]
            + ([pools["abcd"[i - 1]].urn] if i else []),
        )
        for i, r in enumerate(pools[n] for n in "abcd")
    ]
    rounds = delete_antichains(types.SimpleNamespace(resources=chained), {pools["a"].urn, pools["c"].urn})
    assert rounds == [{pools["a"].urn, pools["c"].urn}]


def test_four_pools_take_four_pool_operations_in_a_row_and_one_job_at_the_end():
    """Only the pools are chained: each pool's Job (and the DaemonSets) start once their own
    pool is up, so the Jobs of the first pools run while the next pools are being added.
    (The four pools above: typed, AKS-managed, MIG, and Spot from zero.)"""
    run = pools_run(FOUR, preview=False)
    pools = pool_resources(run)
    jobs = {r.inputs["metadata"]["name"].rsplit("-", 1)[1]: r for r in run.of_type(JOB)}
    pool_urns = {p.urn for p in pools.values()}
    job_urns = {j.urn for j in jobs.values()}
    ends = finish_times(run, lambda r: 1.0 if r.urn in pool_urns | job_urns else 0.0)
    assert [ends[pools[n].urn] for n in "abcd"] == [1.0, 2.0, 3.0, 4.0], "one pool operation after another"
    assert [ends[jobs[n].urn] for n in "abcd"] == [2.0, 3.0, 4.0, 5.0], "each Job right after its own pool"
    assert max(ends.values()) == 5.0, "four pool operations and one Job, not four of everything"
    # Destroy: a resource is deleted once everything that depends on it is gone.
    dependents = {urn: {r.urn for r in run.resources if urn in r.dependencies} for urn in ends}
    gone: dict[str, float] = {}

    def deleted(urn: str) -> float:
        if urn not in gone:
            gone[urn] = max((deleted(d) for d in dependents[urn]), default=0.0) + (1.0 if urn in pool_urns else 0.0)
        return gone[urn]

    assert sorted(deleted(pools[n].urn) for n in "abcd") == [1.0, 2.0, 3.0, 4.0] and deleted(pools["d"].urn) == 1.0
