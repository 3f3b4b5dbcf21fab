"""When the proof Job fails, `pulumi up`'s own error carries the script's `PROOF FAILED:` line,
and the failed pods stay to read.

The Job's pods run with restartPolicy Never and terminationMessagePolicy FallbackToLogsOnError,
and the script writes its last line to /dev/termination-log. Whether the line then reaches the
user is pulumi-kubernetes' doing: these tests give its Job await (ported in
pulumi_kubernetes_await.py, with the file and commit of each piece) the pod and Job states the
cluster goes through for the container the program declares, and read the reasons it sends
the engine."""

from __future__ import annotations

import pytest
from conftest import run_cached
from pulumi_kubernetes_await import termination_message, up_reasons

from components.config.workloads import GUIDE_MNIST_IMAGE
from components.resources import job_deadline
from tools.render import manifest

LINE = "PROOF FAILED: test accuracy 0.4120 after 500 steps is under --min-accuracy 0.9"
LOG = "gpu: Tesla T4, compute capability 7.5, 14.6 GiB, 40 SMs\ndata: mnist, 60000 training and 10000 test images\nstep 500: loss 1.2031\n"


def the_job(stack: str = "dev") -> dict:
    run = run_cached(stack)[0]
    job = manifest(run.one("kubernetes:batch/v1:Job"))
    job["metadata"]["uid"] = "6f1c-job"  # what the API server gives it
    return job


def failed_pod(job: dict, try_: int, message: str, exit_code: int = 1) -> list[dict]:
    """One try's pod under restartPolicy Never, as the kubelet reports it: running with its
    container terminated, then Failed (Ready's reason PodFailed, no message: the kubelet's
    generateContainersReadyConditionForTerminalPhase)."""
    container = job["spec"]["template"]["spec"]["containers"][0]["name"]
    terminated = {"exitCode": exit_code, "reason": "Error", "message": message, "finishedAt": f"2026-11-26T10:0{try_}:00Z"}
    status = {"name": container, "ready": False, "restartCount": 0, "state": {"terminated": terminated}, "lastState": {}}
    metadata = {
        "name": f"{job['metadata']['name']}-{'abcde'[try_]}x7k",
        "namespace": job["metadata"]["namespace"],
        "ownerReferences": [{"kind": "Job", "name": job["metadata"]["name"], "uid": job["metadata"]["uid"]}],
    }
    conditions = [{"type": "PodScheduled", "status": "True"}, {"type": "Initialized", "status": "True"}]
    unready = {
        "type": "Ready",
        "status": "False",
        "reason": "ContainersNotReady",
        "message": f"containers with unready status: [{container}]",
    }
    running = {
        "kind": "Pod",
        "metadata": metadata,
        "status": {"phase": "Running", "conditions": [*conditions, unready], "containerStatuses": [status]},
    }
    ended = {
        "kind": "Pod",
        "metadata": metadata,
        "status": {
            "phase": "Failed",
            "conditions": [*conditions, {"type": "Ready", "status": "False", "reason": "PodFailed"}],
            "containerStatuses": [status],
        },
    }
    return [running, ended]


def backoff_limit_exceeded(job: dict) -> dict:
    return {
        "kind": "Job",
        "metadata": job["metadata"],
        "status": {
            "startTime": "2026-11-26T10:00:00Z",
            "failed": job_deadline.TRIES,
            "conditions": [
                {
                    "type": "Failed",
                    "status": "True",
                    "reason": "BackoffLimitExceeded",
                    "message": "Job has reached the specified backoff limit",
                }
            ],
        },
    }


def reasons_when_every_try_ends(job: dict, message: str, exit_code: int = 1) -> list[str]:
    events = [e for t in range(job_deadline.TRIES) for e in failed_pod(job, t, message, exit_code)]
    reasons = up_reasons(job, [*events, backoff_limit_exceeded(job)])
    assert reasons is not None, "the Job's Failed condition fails the await"
    return reasons


def test_a_failed_proof_puts_its_line_in_pulumi_ups_error():
    job = the_job()
    container = job["spec"]["template"]["spec"]["containers"][0]
    # The script wrote its last line where the kubelet reads the termination message.
    message = termination_message(container["terminationMessagePolicy"], LINE, 1, LOG + LINE + "\n")
    reasons = reasons_when_every_try_ends(job, message)
    assert reasons[0] == "Resource 'mnist-proof' was created but failed to initialize"
    assert reasons[1] == f"[Pod gpu-workloads/mnist-proof-ax7k]: containers with unready status: [mnist-proof][Error] {LINE}"
    assert f"[Pod gpu-workloads/mnist-proof-ax7k]: [Error] {LINE}" in reasons, "the Failed pod says it too"
    assert reasons[-1] == "[BackoffLimitExceeded] Job has reached the specified backoff limit"
    assert sum(LINE in r for r in reasons) == 2 * job_deadline.TRIES, "each try's pod, running and Failed"


def test_what_the_script_cannot_say_comes_from_its_log():
    """A container that fails before the script writes its line (an image whose python cannot
    open the script): FallbackToLogsOnError gives the log's last lines."""
    job = the_job()
    container = job["spec"]["template"]["spec"]["containers"][0]
    said = "python: can't open file '/opt/aks-gpu/train_mnist.py': [Errno 2] No such file or directory"
    message = termination_message(container["terminationMessagePolicy"], "", 2, said + "\n")
    assert any(said in r for r in reasons_when_every_try_ends(job, message, exit_code=2))


def test_the_log_that_falls_back_is_its_last_eighty_lines_of_at_most_2048_bytes():
    log = "".join(f"step {n}: loss 0.1\n" for n in range(200)) + LINE + "\n"
    said = termination_message("FallbackToLogsOnError", "", 1, log)
    assert said.endswith(LINE + "\n") and len(said.encode()) <= 2048 and said.count("\n") <= 80
    assert termination_message("FallbackToLogsOnError", "", 0, log) == "", "a container that succeeded: its file only"
    assert termination_message("File", "", 1, log) == "", "the default policy never reads the log"


def test_without_the_termination_message_the_line_never_reached_pulumi_up():
    """What the Job did before: restartPolicy OnFailure, the default File policy, nothing written;
    pulumi-kubernetes then had only the exit code to say (checker/pod/check.go adds a message only
    when it is not empty)."""
    job = the_job()
    name = job["spec"]["template"]["spec"]["containers"][0]["name"]
    restarted = {
        "kind": "Pod",
        "metadata": {"name": "mnist-proof-ax7k", "namespace": "gpu-workloads", "ownerReferences": [{"uid": job["metadata"]["uid"]}]},
        "status": {
            "phase": "Running",
            "conditions": [
                {"type": "PodScheduled", "status": "True"},
                {"type": "Initialized", "status": "True"},
                {
                    "type": "Ready",
                    "status": "False",
                    "reason": "ContainersNotReady",
                    "message": f"containers with unready status: [{name}]",
                },
            ],
            "containerStatuses": [
                {
                    "name": name,
                    "ready": False,
                    "restartCount": 1,
                    "state": {"waiting": {"reason": "CrashLoopBackOff", "message": "back-off 10s restarting failed container"}},
                    "lastState": {
                        "terminated": {
                            "exitCode": 1,
                            "reason": "Error",
                            "message": termination_message("File", "", 1, LOG + LINE),
                            "finishedAt": "2026-11-26T10:00:00Z",
                        }
                    },
                }
            ],
        },
    }
    reasons = up_reasons(job, [restarted, backoff_limit_exceeded(job)])
    assert reasons is not None and not any("PROOF FAILED" in r for r in reasons)
    assert reasons[1].endswith('container "mnist-proof" terminated at 2026-11-26T10:00:00Z (Error: exit code 1)')


@pytest.mark.parametrize(
    "overrides",
    [
        {},
        {"mnistJob": {"image": GUIDE_MNIST_IMAGE}},
        {"gpuPool": None, "gpuPools": {"t4": {"vmSize": "Standard_NC4as_T4_v3"}, "a100": {"vmSize": "Standard_NC24ads_A100_v4"}}},
    ],
    ids=["the shipped script", "the guide's image", "one Job per pool"],
)
def test_every_job_keeps_its_failed_pods_and_falls_back_to_its_log(overrides):
    """restartPolicy Never: a try is a pod, and a failed one stays (with OnFailure the Job
    controller deletes the pod at the backoffLimit); the guide's image has no line of its own,
    so its log's last lines are the message."""
    jobs = run_cached("dev", **overrides)[0].of_type("kubernetes:batch/v1:Job")
    assert len(jobs) == len(overrides.get("gpuPools", {"gpu": None}))
    for job in jobs:
        spec = manifest(job)["spec"]
        assert spec["template"]["spec"]["restartPolicy"] == "Never"
        assert spec["backoffLimit"] == job_deadline.BACKOFF_LIMIT == job_deadline.TRIES - 1
        assert [c["terminationMessagePolicy"] for c in spec["template"]["spec"]["containers"]] == ["FallbackToLogsOnError"]
