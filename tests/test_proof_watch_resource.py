"""The proof's watch as the program declares it and as the engine drives its provider (#53).

Each proof Job `pulumi up` waits for has a sibling ProofWatch (components/proof/proof_watch.py),
whose create watches the Job's pods and events beside the Job's own await and fails with the
cause. What a user relies on here: every awaited Job has one, pointed at that Job of that
cluster; it starts when the Job starts, never after the Job's await (a dependency on the Job
would make it say everything too late); it says its status on its own row (its status URN is the
URN the engine gives it); it is replaced exactly when the Job it watches is another; and the
provider behaves in the SDK's own provider host, which hands it doubles and Unknowns.

Create needs the live watch (components/proof/watch_live.py), which calls the cluster: the
provider's create is tested in this process with `watch` and `reporter` replaced, and the host
is driven over gRPC for Check, Diff, Read and Delete; test_proof_watch_provider_host.py runs the
create in the host, nothing replaced, against fakes of the engine, ARM and the API server.
"""

from __future__ import annotations

from typing import Any

import pulumi_kubernetes as k8s
import pytest
from conftest import run_cached
from google.protobuf import struct_pb2
from pulumi.runtime import proto, rpc
from support.provider_host import Host, HostError

from components import outputs
from components.cluster.cluster import InCluster
from components.errors import ProofWatchFailed
from components.proof import proof_watch as pw
from components.proof.job_deadline import duration_seconds
from components.proof.mnist_job import MnistJob, MnistJobArgs, MnistRun
from components.proof.watch_live import ClusterRef
from components.proof.watch_verdict import SPEC_ANNOTATION, Verdict, WatchFacts
from tools.azure_mocks import MOCK_CLIENT
from tools.mock_engine import run_under_mocks

WATCH = pw.TYPE
JOB = "kubernetes:batch/v1:Job"
AKS = "azure-native:containerservice:ManagedCluster"
T4 = "Standard_NC4as_T4_v3"
# Two pools, one the autoscaler sizes and one of a fixed count, as a deployment of the dev stack runs them.
POOLS = {"gpuPool": None, "gpuPools": {"t4": {"vmSize": T4, "minCount": 0, "maxCount": 2}, "t4b": {"vmSize": T4, "nodeCount": 1}}}


def pools_run(preview: bool = False, **overrides: Any):
    return run_cached("dev", preview=preview, **{**POOLS, **overrides})[0]


def watch_of(run, job) -> Any:
    """The watch of `job`: the one whose jobName is the Job's name."""
    [found] = [w for w in run.of_type(WATCH) if w.inputs["jobName"] == job.inputs["metadata"]["name"]]
    return found


# --------------------------------------------------------------------------- the program


@pytest.mark.parametrize("preview", [True, False], ids=["preview", "deployment"])
def test_each_awaited_job_has_one_watch_pointed_at_that_job_of_that_cluster(preview):
    run = pools_run(preview)
    jobs = run.of_type(JOB)
    assert len(jobs) == 2 and len(run.of_type(WATCH)) == 2
    for job in jobs:
        watch = watch_of(run, job).inputs
        pool = "t4" if job.name == "mnist-job-t4" else "t4b"
        container = job.inputs["spec"]["template"]["spec"]["containers"][0]
        assert watch["namespace"] == job.inputs["metadata"]["namespace"] == "gpu-workloads"
        assert watch["specHash"] == job.inputs["metadata"]["annotations"][SPEC_ANNOTATION]
        assert (watch["poolName"], watch["autoscaled"]) == (pool, pool == "t4"), "the autoscaler's pool waits for a node"
        assert (watch["image"], watch["maxSteps"]) == (container["image"], 500)
        assert watch["seconds"] == duration_seconds(job.options["customTimeouts"]["create"]), "as long as `up` waits for the Job"
        assert (watch["subscriptionId"], watch["resourceGroupName"], watch["clusterName"]) == (
            MOCK_CLIENT["subscriptionId"],
            "aks-gpu-dev-rg",
            "aks-gpu-dev",
        )
        assert (watch["entra"], watch["armEndpoint"]) == (False, "https://management.azure.com")


def test_the_jobs_annotation_is_the_hash_of_its_spec_that_an_unawaited_jobs_name_carries_and_changes_with_it():
    """One hash of the spec (mnist_job.spec_hash): the same spec not awaited is named by its first 8 characters."""
    digest = pools_run().one(JOB, "mnist-proof-t4").inputs["metadata"]["annotations"][SPEC_ANNOTATION]
    assert len(digest) == 64 and int(digest, 16) >= 0
    assert pools_run(mnistJob={"waitForCompletion": False}).one(JOB, f"mnist-proof-t4-{digest[:8]}")
    other = pools_run(mnistJob={"maxSteps": 400}).one(JOB, "mnist-proof-t4")
    assert other.inputs["metadata"]["annotations"][SPEC_ANNOTATION] != digest


# pulumi-kubernetes replaces a batch/v1 Job when one of these changes, and updates it in place
# otherwise (pulumi-kubernetes@94977969 provider/pkg/provider/diff.go: metadataForceNewProperties
# and `job`; labelSelectorForceNewProperties adds paths under .spec.selector).
JOB_FORCE_NEW = (".metadata.name", ".metadata.namespace", ".spec.completions", ".spec.parallelism", ".spec.selector", ".spec.template")


def changed_paths(old: Any, new: Any, at: str = "") -> list[str]:
    if isinstance(old, dict) and isinstance(new, dict):
        return [p for k in sorted(set(old) | set(new)) for p in changed_paths(old.get(k), new.get(k), f"{at}.{k}")]
    return [] if old == new else [at]


def test_a_job_that_ran_before_the_annotation_is_updated_in_place_not_replaced_for_it():
    """A stack deployed before #53 holds its Job without SPEC_ANNOTATION: the next `up` adds it,
    which changes `.metadata.annotations` only, a path pulumi-kubernetes changes in place (no
    JOB_FORCE_NEW prefix), so a Job that trained is not trained again for it."""
    job = pools_run().one(JOB, "mnist-proof-t4").inputs
    before = {
        **job,
        "metadata": {**job["metadata"], "annotations": {k: v for k, v in job["metadata"]["annotations"].items() if k != SPEC_ANNOTATION}},
    }
    changed = changed_paths(before, job)
    assert changed == [f".metadata.annotations.{SPEC_ANNOTATION}"]
    assert not [p for p in changed if p.startswith(JOB_FORCE_NEW)]


@pytest.mark.parametrize("preview", [True, False], ids=["preview", "deployment"])
def test_a_watch_waits_for_what_its_job_waits_for_and_never_for_the_job(preview):
    """So the engine runs the watch's create beside the Job's create-and-await."""
    run = pools_run(preview)
    for job in run.of_type(JOB):
        watch = watch_of(run, job)
        assert set(job.dependencies) <= set(watch.dependencies)
        assert job.urn not in watch.dependencies
        assert not [k for k, deps in watch.property_dependencies.items() if job.urn in deps]
        assert watch.parent == job.parent, "a sibling of the Job, in the proof's component"


def test_a_watch_is_deleted_with_what_its_job_is_deleted_with():
    run = pools_run()
    cluster = run.one(AKS).urn
    for job in run.of_type(JOB):
        assert watch_of(run, job).options["deletedWith"] == job.options["deletedWith"] == cluster


def test_watches_run_in_provider_hosts_of_their_own_at_most_three_a_host_and_never_in_the_managed_pools():
    """A watch's Create holds one of its host's four threads for as long as it watches: four
    watches in the host the AKS-managed pool's provider runs in would keep that provider, and
    every Check and Diff of the host, waiting until one ends."""
    pools = {f"t{i}": {"vmSize": T4, "minCount": 0, "maxCount": 1} for i in range(5)}
    run = run_cached(
        "dev",
        preview=False,
        feature_state="Registered",
        gpuPool=None,
        gpuPools={**pools, "m": {"vmSize": T4, "management": "aks-managed"}},
    )[0]
    watches, hosts = run.of_type(WATCH), run.of_type("pulumi:providers:pulumi-python")
    assert len(watches) == 6 and len(hosts) == 2
    by_host = {host.urn: [w.name for w in watches if w.provider == host.urn] for host in hosts}
    assert sorted(len(names) for names in by_host.values()) == [3, 3], by_host
    assert all(host.parent == watches[0].parent for host in hosts), "the hosts are the proof's component's"
    [managed] = run.of_type("pulumi-python:dynamic/aksgpu:ManagedGpuPool")
    assert managed.provider == "", "the managed pool's provider runs in the default host, which no watch shares"


def test_a_hosts_thread_count_is_the_one_the_installed_sdks_dynamic_provider_host_has():
    """pulumi/dynamic/__main__.py main() serves on `futures.ThreadPoolExecutor(max_workers=N)`:
    read from the installed SDK (importing it would start a server)."""
    import ast
    import importlib.util
    from pathlib import Path

    spec = importlib.util.find_spec("pulumi.dynamic.__main__")
    assert spec is not None and spec.origin is not None
    tree = ast.parse(Path(spec.origin).read_text(encoding="utf-8"))
    workers = [
        k.value.value
        for node in ast.walk(tree)
        if isinstance(node, ast.Call) and getattr(node.func, "attr", None) == "ThreadPoolExecutor"
        for k in node.keywords
        if k.arg == "max_workers" and isinstance(k.value, ast.Constant)
    ]
    assert workers == [pw.HOST_WORKERS]
    assert pw.WATCHES_PER_HOST == pw.HOST_WORKERS - 1


@pytest.mark.parametrize("preview", [True, False], ids=["preview", "deployment"])
def test_a_watchs_status_urn_is_the_urn_the_engine_gives_it(preview):
    """The engine shows a status line on the row of the URN it names: the watch's own."""
    for run in (pools_run(preview), run_cached("prod", preview=preview)[0]):
        watches = run.of_type(WATCH)
        assert watches
        assert all(w.inputs["statusUrn"] == w.urn for w in watches)


def test_a_preview_and_a_deployment_register_the_same_watches():
    preview, deployment = pools_run(True), pools_run(False)
    assert sorted((w.urn, sorted(w.inputs.items())) for w in preview.of_type(WATCH)) == sorted(
        (w.urn, sorted(w.inputs.items())) for w in deployment.of_type(WATCH)
    )


def test_a_watch_only_where_up_waits_for_the_job():
    def watched(run) -> tuple[int, int, int]:
        annotated = [j for j in run.of_type(JOB) if SPEC_ANNOTATION in (j.inputs["metadata"].get("annotations") or {})]
        commands = [p for p in run.outputs["gpuPools"].value.values() if "resultCommand" in (p.get("job") or {})]
        return len(run.of_type(WATCH)), len(annotated), len(commands)

    assert watched(pools_run()) == (2, 2, 2)
    assert watched(pools_run(mnistJob={"waitForCompletion": False})) == (0, 0, 0), "a Job `up` does not wait for"
    assert watched(pools_run(mnistJob={"enabled": False})) == (0, 0, 0), "no proof"


def test_an_existing_clusters_watch_finds_that_cluster_and_signs_in_as_it_does():
    """The team stack's cluster is the owner's (team-rg/team-aks, Entra ID as Azure describes
    it); nothing of the stack deletes the watch with it."""
    run = run_cached("team")[0]
    watches = run.of_type(WATCH)
    assert sorted(w.inputs["poolName"] for w in watches) == ["a100", "t4"]
    for watch in watches:
        assert (watch.inputs["resourceGroupName"], watch.inputs["clusterName"]) == ("team-rg", "team-aks")
        assert watch.inputs["subscriptionId"]
        assert "deletedWith" not in watch.options
    assert {w.inputs["autoscaled"] for w in watches} == {True, False}


def test_each_pools_output_names_the_command_that_reads_its_last_proofs_line():
    pools = pools_run().outputs["gpuPools"].value
    assert pools["t4"]["job"]["resultCommand"] == (
        "kubectl get configmap mnist-proof-t4-result --namespace gpu-workloads --output jsonpath='{.data.line}'"
    )


SIZES = {"t4": T4, "t4b": "Standard_NC8as_T4_v3", "a10": "Standard_NV36ads_A10_v5", "v100": "Standard_NC6s_v3"}


def group_and_pool_run(preview: bool = False):
    """A capacity group's one Job (pools t4, t4b, a10 in that order) beside a pool's own Job."""

    def body() -> None:
        provider = k8s.Provider("p", kubeconfig="apiVersion: v1")
        runs = [
            MnistRun("t4", accepted_pools=("t4", "t4b", "a10"), autoscaled=True, guide_names=False),
            MnistRun("v100", guide_names=False),
        ]
        cluster = ClusterRef("sub", "rg", "aks", entra=False)
        MnistJob(
            "m", MnistJobArgs(image="mnist:gpu", max_steps=7, runs=runs, vm_sizes=SIZES), cluster=InCluster(provider, None, (), ref=cluster)
        )

    return run_under_mocks(body, preview=preview)


def test_a_groups_watch_is_told_its_pools_in_order_and_their_sizes_and_a_pools_own_watch_neither():
    watches = {w.inputs["poolName"]: w for w in group_and_pool_run().of_type(WATCH)}
    group, alone = watches["t4"], watches["v100"]
    assert group.inputs["acceptedPools"] == ["t4", "t4b", "a10"]
    assert group.inputs["vmSizes"] == {p: SIZES[p] for p in ("t4", "t4b", "a10")}
    facts = pw.watch_facts(rpc.deserialize_properties(group.wire))
    assert (facts.pools, dict(facts.vm_sizes)) == (("t4", "t4b", "a10"), {p: SIZES[p] for p in ("t4", "t4b", "a10")})
    assert "acceptedPools" not in alone.inputs and "vmSizes" not in alone.inputs, "a pool's own watch keeps its inputs"
    assert pw.watch_facts(rpc.deserialize_properties(alone.wire)).pools == ("v100",)


def test_a_watch_of_a_stack_from_before_groups_keeps_its_inputs_and_so_its_diff():
    """The dev stack's two pools, each with its own Job: the inputs are those the state holds."""
    for watch in pools_run().of_type(WATCH):
        assert not {"acceptedPools", "vmSizes", "servedPool", "servedVmSize"} & set(watch.inputs)


# --------------------------------------------------------------------------- which size served


def test_each_pools_job_says_which_pool_and_size_served_its_proof():
    assert pools_run(preview=True).outputs["gpuPools"].value["t4"]["job"]["servedBy"] is None, "a preview does not know yet"
    # Under the mocks no watch ran: its outputs are what a state from before groups holds, none.
    assert pools_run().outputs["gpuPools"].value["t4"]["job"]["servedBy"] == outputs.NOT_SERVED
    assert outputs.served_words("t4b", "Standard_NC8as_T4_v3", SIZES) == "t4b (Standard_NC8as_T4_v3)"
    assert outputs.served_words("t4", "", SIZES) == f"t4 ({T4})", "a pool's own watch is not told its size: the pool's"
    for pool in ("", None):
        assert outputs.served_words(pool, None, SIZES) == outputs.NOT_SERVED


# --------------------------------------------------------------------------- the provider, here


def host_props(run=None) -> dict[str, Any]:
    """The watch's inputs as the host hands them to the provider: through a protobuf Struct,
    every number a double."""
    run = run or pools_run()
    [watch] = [w for w in run.of_type(WATCH) if w.inputs["poolName"] == "t4"]
    return rpc.deserialize_properties(watch.wire)


def test_the_host_hands_numbers_over_as_doubles_and_the_watch_takes_them_back_as_counts():
    props = host_props()
    assert isinstance(props["maxSteps"], float) and isinstance(props["seconds"], float)
    assert pw.watch_facts(props).max_steps == 500 and isinstance(pw.watch_facts(props).max_steps, int)


def test_create_watches_that_job_for_as_long_as_up_waits_and_reports_on_the_watchs_own_row(monkeypatch):
    props, seen = host_props(), {}

    def reporter(urn: str, address: str | None = None):
        seen["status urn"] = urn
        return lambda line: None

    def watch(cluster: ClusterRef, facts: WatchFacts, seconds: float, status: Any, **_: Any) -> Verdict:
        seen.update(cluster=cluster, facts=facts, seconds=seconds)
        return Verdict("trained", "PROOF OK: Tesla T4, 500 steps, accuracy 0.97")

    monkeypatch.setattr(pw.engine_status, "reporter", reporter)
    monkeypatch.setattr(pw.live_watch, "watch", watch)
    result = pw.ProofWatchProvider().create(props)
    assert seen["cluster"] == ClusterRef(MOCK_CLIENT["subscriptionId"], "aks-gpu-dev-rg", "aks-gpu-dev", entra=False)
    assert seen["facts"] == WatchFacts("gpu-workloads", "mnist-proof-t4", "t4", props["specHash"], True, props["image"], 500)
    assert seen["seconds"] == props["seconds"] and seen["status urn"] == props["statusUrn"]
    assert result.id == f"gpu-workloads/mnist-proof-t4/{props['specHash']}"
    assert result.outs["line"] == "PROOF OK: Tesla T4, 500 steps, accuracy 0.97"
    assert pw.inputs_only(result.outs) == pw.inputs_only(props), "the state keeps every input, for the next diff"


def test_create_keeps_the_pool_and_size_that_served_as_the_watchs_outputs(monkeypatch):
    served = Verdict("trained", "PROOF OK", pool="t4b", vm_size="Standard_NC8as_T4_v3")
    monkeypatch.setattr(pw.engine_status, "reporter", lambda urn, address=None: lambda said: None)
    monkeypatch.setattr(pw.live_watch, "watch", lambda *args, **kwargs: served)
    outs = pw.ProofWatchProvider().create(host_props()).outs
    assert (outs["servedPool"], outs["servedVmSize"]) == ("t4b", "Standard_NC8as_T4_v3")
    monkeypatch.setattr(pw.live_watch, "watch", nothing_watched)
    kept = pw.ProofWatchProvider().update("id", outs, {**host_props(), "seconds": 60.0}).outs
    assert (kept["servedPool"], kept["servedVmSize"], kept["line"]) == ("t4b", "Standard_NC8as_T4_v3", "PROOF OK")


def test_a_create_whose_watch_fails_raises_its_one_line_and_leaves_no_state(monkeypatch):
    line = "PROOF FAILED: image pytorch/pytorch cannot be pulled from docker.io: 429 Too Many Requests"

    def watch(*args: Any, **kwargs: Any) -> Verdict:
        raise ProofWatchFailed(line)

    monkeypatch.setattr(pw.engine_status, "reporter", lambda urn, address=None: lambda said: None)
    monkeypatch.setattr(pw.live_watch, "watch", watch)
    with pytest.raises(ProofWatchFailed) as failed:
        pw.ProofWatchProvider().create(host_props())
    assert str(failed.value) == line


def nothing_watched(*args: Any, **kwargs: Any) -> Verdict:
    raise AssertionError("nothing but a create watches")


def test_read_update_and_delete_watch_nothing_and_keep_the_line(monkeypatch):
    monkeypatch.setattr(pw.live_watch, "watch", nothing_watched)
    provider, state = pw.ProofWatchProvider(), {**host_props(), "line": "PROOF OK"}
    assert provider.read("id", state).outs == state
    updated = provider.update("id", state, {**host_props(), "seconds": 60.0, "statusUrn": "urn:other"}).outs
    assert (updated["line"], updated["seconds"], updated["statusUrn"]) == ("PROOF OK", 60.0, "urn:other")
    assert provider.delete("id", state) is None


@pytest.mark.parametrize("key", sorted(pw.WATCHED))
def test_another_job_is_a_new_watch_created_before_the_old_one_goes(key):
    olds = {**host_props(), "line": "PROOF OK"}
    result = pw.diff_watch(olds, {**host_props(), key: "other"})
    assert (result.changes, result.replaces, result.delete_before_replace) == (True, [key], False)


@pytest.mark.parametrize(
    "key", ["statusUrn", "seconds", "poolName", "autoscaled", "image", "maxSteps", "entra", "acceptedPools", "vmSizes"]
)
def test_any_other_change_is_an_update_that_watches_nothing(key):
    result = pw.diff_watch({**host_props(), "line": "PROOF OK"}, {**host_props(), key: "other"})
    assert (result.changes, result.replaces) == (True, [])


def test_the_same_inputs_are_no_change_whatever_the_line_or_the_pickled_provider():
    olds = {**host_props(), "line": "PROOF OK", "servedPool": "t4", "servedVmSize": "", pw.PROVIDER_KEY: "an older pickle"}
    assert pw.diff_watch(olds, host_props()).changes is False


def test_a_namespace_a_preview_does_not_know_yet_is_a_new_watch():
    from pulumi.output import Unknown

    for unknown in (Unknown(), pw.UNKNOWN):
        assert pw.diff_watch(host_props(), {**host_props(), "namespace": unknown}).replaces == ["namespace"]


def test_the_provider_tells_the_host_to_send_its_one_line(monkeypatch):
    told = []
    monkeypatch.setattr(pw.provider_host_patch, "tell_if_unpatched", lambda **kwargs: told.append(kwargs) or True)
    pw.ProofWatchProvider().configure(None)  # type: ignore[arg-type]
    assert told == [{"whose": "the proof watch's provider"}]


# --------------------------------------------------------------------------- the provider, in the host


URN = "urn:pulumi:dev::aks-gpu::aks-gpu:kubernetes:MnistJob$pulumi-python:dynamic/aksgpu:ProofWatch::mnist-watch-t4"


# The host the proof watch's create runs in, in test_proof_watch_provider_host.py (support/hosts.py):
# Check, Diff, Read and Delete ask it nothing outside.
pytest_plugins = ["support.hosts"]


@pytest.fixture
def host(proof_watch_host) -> Host:
    return proof_watch_host


def wire(run=None, **changes: Any) -> struct_pb2.Struct:
    """The watch's inputs exactly as the program sent them, pickled provider and all."""
    run = run or pools_run()
    [watch] = [w for w in run.of_type(WATCH) if w.inputs["poolName"] == "t4"]
    news = struct_pb2.Struct()
    news.CopyFrom(watch.wire)
    for key, value in changes.items():
        news[key] = value
    return news


def plain(struct: struct_pb2.Struct) -> dict[str, Any]:
    return rpc.deserialize_properties(struct)


def test_the_program_pickles_the_provider_by_this_modules_path():
    """Every state names the class so (moving it needs a re-export: the module docstring)."""
    import base64

    pickled = base64.b64decode(plain(wire())[pw.PROVIDER_KEY])
    assert b"components.proof.proof_watch" in pickled and b"ProofWatchProvider" in pickled


def test_the_host_checks_the_programs_inputs_as_they_are(host):
    news = wire()
    checked = host.stub.Check(proto.CheckRequest(urn=URN, olds=struct_pb2.Struct(), news=news), timeout=120)
    assert not checked.failures
    assert plain(checked.inputs) == plain(news)


def test_the_host_diffs_the_same_inputs_as_no_change_and_another_job_as_a_replacement(host):
    def diff(olds: struct_pb2.Struct, news: struct_pb2.Struct) -> Any:
        return host.stub.Diff(proto.DiffRequest(id="id", urn=URN, olds=olds, news=news), timeout=120)

    same = diff(wire(), wire())
    assert same.changes == proto.DiffResponse.DIFF_NONE and not same.replaces
    moved = diff(wire(), wire(specHash="another spec"))
    assert moved.changes == proto.DiffResponse.DIFF_SOME and list(moved.replaces) == ["specHash"] and not moved.deleteBeforeReplace
    retimed = diff(wire(), wire(seconds=600.0))
    assert retimed.changes == proto.DiffResponse.DIFF_SOME and not retimed.replaces
    # A preview's unknown reaches the provider as a pulumi.output.Unknown (keep_unknowns).
    unknown = diff(wire(), wire(namespace=rpc.UNKNOWN))
    assert list(unknown.replaces) == ["namespace"]


def test_the_host_reads_the_state_back_as_it_is_and_deletes_nothing(host):
    state = wire(line="PROOF OK")
    read = host.stub.Read(proto.ReadRequest(id="gpu-workloads/mnist-proof-t4/h", urn=URN, properties=state), timeout=120)
    assert read.id == "gpu-workloads/mnist-proof-t4/h"
    assert plain(read.properties) == plain(state)
    host.stub.Delete(proto.DeleteRequest(id=read.id, urn=URN, properties=state, timeout=1), timeout=120)


def test_a_watch_moved_to_another_host_is_not_replaced_for_it_the_hosts_diff_config_being_unimplemented(host):
    """The engine diffs a changed provider reference with the new host's DiffConfig and takes
    UNIMPLEMENTED as no replacement (pulumi/pulumi@1b594989 step_generator.go providerChanged,
    provider_plugin.go DiffConfig): a pool removed, which moves the watches after it to another
    host, replaces none of them; and the hosts' inputs are empty, so there is nothing to differ."""
    with pytest.raises(HostError, match="DiffConfig is not implemented by the dynamic provider"):
        host.call("DiffConfig", proto.DiffRequest(urn="urn:pulumi:dev::aks-gpu::pulumi:providers:pulumi-python::mnist-watch-host-0"))
    assert {h.name: h.inputs for h in pools_run().of_type("pulumi:providers:pulumi-python")} == {"mnist-watch-host-0": {}}
