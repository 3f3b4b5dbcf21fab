"""The proof's watch as the real `pulumi up` creates it (#53): the program's own inputs, pickled
provider and all, handed over gRPC to the SDK's dynamic provider host, which runs the live watch
(components/proof/watch_live.py `watch`, the real decision) with nothing replaced in its
process.

The engine starts the host the CLI ships (`python -u -m pulumi.dynamic`, in the project
directory) with its own address as the first argument, which the watch's status lines go to
(components/seam/engine_status.py), and sends Check, then Create. These tests do the same:

  - the engine is tests/fake_engine.py, keeping each LogRequest the host sends;
  - the host signs in with azure-identity's DefaultAzureCredential, narrowed to the Azure CLI
    credential, whose `az` is a stand-in that prints a token (support/provider_host.py);
  - ARM is tests/fake_aks.py over HTTPS, answering the cluster's listClusterUserCredential with a
    kubeconfig (base64, as ARM does) whose server is the fake API server, its CA that server's
    certificate, its user a bearer token;
  - the API server is tests/fake_kube_api.py over TLS, answering a scripted state per look.
The one input the tests change is `armEndpoint`, to reach the fake ARM.

The host's clock is real and the watch looks every POLL_SECONDS (10 s): a proof that trains is
given one look that waits (the one that says what it waits for), a proof that cannot start none.
Nothing here measures how long anything took.
"""

from __future__ import annotations

import copy
from collections.abc import Iterator
from typing import Any

import fake_aks
import fake_engine
import fake_kube_api
import pytest
import yaml
from conftest import run_cached
from fake_kube_api import State, event
from google.protobuf import struct_pb2
from pulumi.runtime import proto, rpc
from pulumi.runtime.proto import engine_pb2
from support.provider_host import Host, HostError

from components.errors import SAID
from components.proof import proof_watch as pw
from components.proof import watch_live as live

T4 = "Standard_NC4as_T4_v3"
# A pool the autoscaler sizes, as the dev stack's deployment declares it.
POOLS = {"gpuPool": None, "gpuPools": {"t4": {"vmSize": T4, "minCount": 0, "maxCount": 2}}}
NODE = "aks-t4-12345678-vmss000000"
POD = "mnist-proof-t4-x7k2q"
JOB_UID = "job-uid-1"
# The fake API server's clock (its Date header); the Job was made a minute before it, by this `up`.
CREATED, STARTED = "2026-11-28T12:00:00Z", "2026-11-28T12:00:40Z"
PROOF_OK = "PROOF OK gpu=Tesla T4 (compute capability 7.5) data=mnist steps=500 accuracy=0.9745 seconds=48.2"


# The engine, ARM and the host, shared with test_proof_watch_resource.py (support/hosts.py).
pytest_plugins = ["support.hosts"]


@pytest.fixture
def engine(proof_watch_engine) -> fake_engine.FakeEngine:
    """The engine the host sends its status lines to, nothing received yet."""
    proof_watch_engine[0].logged.clear()
    return proof_watch_engine[0]


@pytest.fixture
def arm(proof_watch_arm) -> fake_aks.FakeAks:
    return proof_watch_arm


@pytest.fixture
def host(proof_watch_host) -> Host:
    return proof_watch_host


@pytest.fixture
def kube(arm, tmp_path) -> Iterator[fake_kube_api.FakeKube]:
    """The fake API server, and ARM answering the watch's cluster with its kubeconfig (YAML, as AKS's)."""
    for fake in fake_kube_api.serve(tmp_path):
        arm.reset()
        watch = program_watch()
        cluster = (watch.inputs["resourceGroupName"], watch.inputs["clusterName"])
        arm.kubeconfigs[cluster] = yaml.safe_dump(yaml.safe_load(fake.kubeconfig()))
        yield fake


def program_watch():
    """The t4 pool's watch as the program registered it in a deployment of the dev stack."""
    [watch] = run_cached("dev", **POOLS)[0].of_type(pw.TYPE)
    return watch


def news(arm: fake_aks.FakeAks) -> struct_pb2.Struct:
    """The watch's inputs exactly as the program sent them, pointed at the fake ARM."""
    sent = struct_pb2.Struct()
    sent.CopyFrom(program_watch().wire)
    sent["armEndpoint"] = arm.url
    return sent


def create(host: Host, inputs: struct_pb2.Struct) -> Any:
    """Check, then Create with what Check answered, as the engine does for a new resource."""
    urn = program_watch().urn
    checked = host.call("Check", proto.CheckRequest(urn=urn, olds=struct_pb2.Struct(), news=inputs))
    assert not checked.failures
    return host.call("Create", proto.CreateRequest(urn=urn, properties=checked.inputs, timeout=inputs["seconds"]))


# --------------------------------------------------------------------------- the cluster, as the API server answers it


def the_job(spec_hash: str, condition: str | None = None, **status: Any) -> dict[str, Any]:
    made = fake_kube_api.job(JOB_UID, spec_hash, CREATED, condition, **status)
    made["metadata"].update(name="mnist-proof-t4", namespace="gpu-workloads")
    return made


def the_pod(phase: str, container: dict[str, Any]) -> dict[str, Any]:
    made = fake_kube_api.pod(POD, JOB_UID, phase, CREATED)
    made["metadata"]["namespace"] = "gpu-workloads"
    made["spec"] = {"nodeName": NODE, "containers": [{"name": "mnist"}]}
    made["status"]["containerStatuses"] = [{"name": "mnist", **container}]
    return made


def pod_event(reason: str, message: str, at: str, type_: str = "Normal") -> dict[str, Any]:
    """A core/v1 Event about the pod, seen once, as the kubelet's recorder writes it (count,
    firstTimestamp, lastTimestamp: client-go tools/record)."""
    made = event(f"uid-{POD}", reason, message, at, type_=type_, name=POD, namespace="gpu-workloads")
    made.update(count=1, firstTimestamp=at)
    return made


def training(image: str, spec_hash: str) -> State:
    """A pod that runs on its node and has logged step 120."""
    running = the_pod("Running", {"state": {"running": {"startedAt": STARTED}}})
    pulled = pod_event("Pulled", f'Container image "{image}" already present on machine', STARTED)
    return State(the_job(spec_hash, active=1), [running], [pulled], {POD: "step 100: loss 0.3512\nstep 120: loss 0.3107\n"})


def trained(spec_hash: str) -> State:
    """The Job Complete, its pod's termination message the script's last line."""
    done = the_pod("Succeeded", {"state": {"terminated": {"exitCode": 0, "reason": "Completed", "message": f"{PROOF_OK}\n"}}})
    return State(the_job(spec_hash, "Complete", succeeded=1), [done])


def not_found(image: str) -> str:
    """containerd's words for a digest the registry does not have (components/proof/watch_verdict.py PERMANENT_PULL)."""
    ref = f"docker.io/{image}"
    return (
        f'rpc error: code = NotFound desc = failed to pull and unpack image "{ref}": failed to resolve reference "{ref}": {ref}: not found'
    )


def unpullable(image: str, spec_hash: str) -> State:
    """The kubelet's first pull failed: the container waits in ErrImagePull, and the pod's Failed event says why."""
    message = f'Failed to pull image "{image}": {not_found(image)}'
    waiting = the_pod("Pending", {"state": {"waiting": {"reason": "ErrImagePull", "message": not_found(image)}}})
    events = [
        pod_event("Pulling", f'Pulling image "{image}"', "2026-11-28T12:00:45Z"),
        pod_event("Failed", message, "2026-11-28T12:00:50Z", type_="Warning"),
    ]
    return State(the_job(spec_hash, active=1), [waiting], events)


# --------------------------------------------------------------------------- the tests


def test_a_proof_that_trains_is_watched_in_the_host_and_its_proof_ok_line_is_the_watchs_output(host, arm, engine, kube):
    """The numbers arrive as the host hands them over (doubles), and the watch fetches its own
    kubeconfig from ARM and reads the proof with it."""
    inputs, watch = news(arm), program_watch()
    assert (inputs["maxSteps"], inputs["seconds"]) == (500.0, float(watch.inputs["seconds"]))
    assert all(isinstance(inputs[k], float) for k in ("maxSteps", "seconds")), "a Struct's numbers are doubles"
    spec_hash = watch.inputs["specHash"]
    kube.states = [trained(spec_hash)]

    created = create(host, inputs)

    assert created.id == f"gpu-workloads/mnist-proof-t4/{spec_hash}"
    outs = rpc.deserialize_properties(created.properties)
    assert outs[pw.OUTPUT] == PROOF_OK
    assert {k: outs[k] for k in ("maxSteps", "seconds", "statusUrn")} == {k: inputs[k] for k in ("maxSteps", "seconds", "statusUrn")}
    assert engine.logged == [], "nothing was waited for"
    [kept] = kube.calls("PATCH", "/configmaps/")
    assert kept.path == "/api/v1/namespaces/gpu-workloads/configmaps/mnist-proof-t4-result"
    assert (kept.body["data"]["line"], kept.body["data"]["outcome"], kept.body["data"]["jobUid"]) == (PROOF_OK, "trained", JOB_UID)
    assert kube.calls("PATCH", "/jobs/") == [], "a proof that trained leaves its Job alone"
    assert {r.authorization for r in kube.requests} == {"Bearer token"}, "the kubeconfig's own credential"
    [fetched] = arm.calls("POST")
    assert fetched.path == (
        "/subscriptions/33333333-3333-3333-3333-333333333333/resourceGroups/aks-gpu-dev-rg/providers/"
        "Microsoft.ContainerService/managedClusters/aks-gpu-dev/listClusterUserCredential"
    )
    assert fetched.query == {"api-version": [live.API_VERSION], "format": ["exec"]}


def test_what_the_watch_waits_for_reaches_the_engine_as_the_watchs_ephemeral_status(host, arm, engine, kube):
    """One waiting look, within a time limit shorter than the watch's pause between looks, so
    the watch ends without sleeping (live/proof_watch.py `watch`: no look past the limit) and
    the Job's own await decides: the status went to the engine on the watch's own URN."""
    inputs, watch = news(arm), program_watch()
    inputs["seconds"] = 5.0
    kube.states = [training(watch.inputs["image"], watch.inputs["specHash"])]

    created = create(host, inputs)

    [status] = engine.logged
    assert status.message == f"training on node {NODE}: step 120/500", "500 steps, not 500.0"
    assert (status.urn, status.severity, status.ephemeral) == (watch.urn, engine_pb2.INFO, True)
    assert watch.inputs["statusUrn"] == watch.urn
    line = rpc.deserialize_properties(created.properties)[pw.OUTPUT]
    assert line.startswith("watched for ") and line.endswith("the Job's own await decides")
    assert kube.calls("PATCH", "/jobs/") == [], "a watch that ran out of time leaves the Job to its await"


def test_a_proof_that_cannot_start_fails_the_create_in_one_line_after_ending_its_job(host, arm, engine, kube):
    watch = program_watch()
    image, spec_hash = watch.inputs["image"], watch.inputs["specHash"]
    kube.states = [unpullable(image, spec_hash)]
    job_before = copy.deepcopy(kube.states[0].job)

    with pytest.raises(HostError) as failed:
        create(host, news(arm))

    # The runtime's words, their end where they are long (proof_watch.py _tail): the end says why.
    said = not_found(image) if len(not_found(image)) <= SAID else "..." + not_found(image)[-SAID:]
    assert str(failed.value) == (
        f'the proof\'s pod {POD} cannot pull image "{image}" (registry docker.io) on node {NODE}: {said} (failing for 10s, 1 try)'
    ), "the ProofWatchFailed line alone"
    assert "\n" not in str(failed.value) and "Traceback" not in str(failed.value)
    assert said.endswith(f"docker.io/{image}: not found")
    [ended] = kube.calls("PATCH", "/jobs/")
    assert ended.path == "/apis/batch/v1/namespaces/gpu-workloads/jobs/mnist-proof-t4"
    assert ended.content_type == "application/merge-patch+json"
    assert ended.body == {"metadata": {"uid": JOB_UID}, "spec": {"activeDeadlineSeconds": live.ENDED_DEADLINE_SECONDS}}
    assert job_before["spec"]["activeDeadlineSeconds"] != kube.states[0].job["spec"]["activeDeadlineSeconds"] == 1
    [kept] = kube.calls("PATCH", "/configmaps/")
    assert kept.path == "/api/v1/namespaces/gpu-workloads/configmaps/mnist-proof-t4-result"
    assert kept.content_type == "application/apply-patch+yaml"
    assert kept.query == {"fieldManager": [live.FIELD_MANAGER], "force": ["true"]}
    landed = {"pool": "t4"}  # the node the pod was on, whose image it could not pull (docs/proof.md, "Which size served")
    assert kept.body["data"] == {
        "line": str(failed.value),
        "outcome": "stop",
        "jobUid": JOB_UID,
        "finishedAt": "2026-11-28T12:01:00Z",
        **landed,
    }
    assert [r.path.rsplit("/", 2)[-2] for r in kube.calls("PATCH")] == ["jobs", "configmaps"], "the Job is ended before the outcome is kept"
    assert engine.logged == [], "a cause found at the first look: nothing was waited for"


def test_the_engines_cancel_reaches_no_watch_which_goes_on_to_its_verdict(host, arm, engine, kube):
    """A first Ctrl-C: the engine asks every provider to cancel (pulumi/pulumi@1b594989
    pkg/resource/deploy/deployment_executor.go Execute -> Host.SignalCancellation -> each
    provider's Cancel) and waits for the steps in flight. The SDK's host answers Cancel with
    nothing (pulumi/dynamic/__main__.py `Cancel`: `return empty_pb2.Empty()`), the Create's own
    call is never cancelled (provider_plugin.go requestContext: the plugin context's base,
    cancelled only when the run closes), and the host runs in a process group of its own
    (cmdutil RegisterProcessGroup, Setpgid), so no SIGINT reaches it: the watch goes on, here to
    the cause its look finds. (What ends it sooner, the Job deleted: test_proof_watch_live.py.)"""
    import threading

    from google.protobuf import empty_pb2

    watch = program_watch()
    kube.states = [unpullable(watch.inputs["image"], watch.inputs["specHash"])]
    kube.gate = threading.Event()
    failed: list[BaseException] = []

    def creating() -> None:
        try:
            create(host, news(arm))
        except HostError as error:
            failed.append(error)

    thread = threading.Thread(target=creating, daemon=True)
    thread.start()
    assert kube.held.wait(120), "the watch's first look, held at the Job's GET"
    assert isinstance(host.call("Cancel", empty_pb2.Empty()), empty_pb2.Empty)
    kube.gate.set()
    thread.join(120)

    [error] = failed
    assert str(error).startswith(f"the proof's pod {POD} cannot pull image"), "after the Cancel, the watch went on to its verdict"
    assert [r.path.rsplit("/", 2)[-2] for r in kube.calls("PATCH")] == ["jobs", "configmaps"]
