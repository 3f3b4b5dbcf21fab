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
from pulumi_kubernetes_await import MESSAGE_BYTES, diagnostics, live_status, ready_condition, termination_message, up_reasons

from components.gpu_stack.settings import GUIDE_MNIST_IMAGE
from components.proof import job_deadline
from tools.render import manifest

LINE = "PROOF FAILED: test accuracy 0.4120 after 500 steps is under --min-accuracy 0.9"
LOG = "gpu: Tesla T4, compute capability 7.5, 14.6 GiB, 40 SMs\ndata: mnist, 60000 training and 10000 test images\nstep 500: loss 1.2031\n"


URN = "urn:pulumi:dev::aks-gpu::aks-gpu:kubernetes:MnistJob$kubernetes:batch/v1:Job::mnist-job"


def the_job(stack: str = "dev") -> dict:
    run = run_cached(stack)[0]
    registered = run.one("kubernetes:batch/v1:Job")
    assert registered.urn == URN, "the URN pulumi up names in its error"
    job = manifest(registered)
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
    return [pod_state(job, metadata, "Running", status), pod_state(job, metadata, "Failed", status)]


def pod_state(job: dict, metadata: dict, phase: str, status: dict, scheduled: bool = True) -> dict:
    """A pod of the Job as the kubelet reports it: its Ready condition the kubelet's own
    (GeneratePodReadyCondition, ported), "containers with unready status: [mnist-proof]" while
    its container is created, pulled for or ended."""
    pod = {"kind": "Pod", "metadata": metadata, "spec": job["spec"]["template"]["spec"], "status": {"phase": phase}}
    if not scheduled:
        message = "0/3 nodes are available: 3 Insufficient nvidia.com/gpu. preemption: 0/3 nodes are available"
        pod["status"]["conditions"] = [{"type": "PodScheduled", "status": "False", "reason": "Unschedulable", "message": message}]
        return pod
    pod["status"]["containerStatuses"] = [status]
    conditions = [{"type": "PodScheduled", "status": "True"}, {"type": "Initialized", "status": "True"}]
    pod["status"]["conditions"] = [*conditions, ready_condition(pod)]
    return pod


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
    reasons = up_reasons(job, [*events, backoff_limit_exceeded(job)], URN)
    assert reasons is not None, "the Job's Failed condition fails the await"
    return reasons


def test_a_failed_proof_puts_its_line_in_pulumi_ups_error():
    job = the_job()
    container = job["spec"]["template"]["spec"]["containers"][0]
    # The script wrote its last line where the kubelet reads the termination message.
    message = termination_message(container["terminationMessagePolicy"], LINE, 1, LOG + LINE + "\n")
    reasons = reasons_when_every_try_ends(job, message)
    assert reasons[0] == (
        f'resource "{URN}" was successfully created, but the Kubernetes API server reported that it failed to fully '
        "initialize or become live: Resource 'mnist-proof' was created but failed to initialize"
    )
    assert reasons[1] == f"[Pod gpu-workloads/mnist-proof-ax7k]: containers with unready status: [mnist-proof][Error] {LINE}"
    assert f"[Pod gpu-workloads/mnist-proof-ax7k]: [Error] {LINE}" in reasons, "the Failed pod says it too"
    assert reasons[-1] == "[BackoffLimitExceeded] Job has reached the specified backoff limit"
    assert sum(LINE in r for r in reasons) == 2 * job_deadline.TRIES, "each try's pod, running and Failed"


def test_pulumi_up_prints_the_line_under_the_jobs_diagnostics_as_docs_proof_md_shows():
    """The engine prints the reasons as go-multierror lists them, under the Job's row of
    `Diagnostics:`; docs/proof.md quotes that block, and each line it shows is one `pulumi up`
    prints (its `...` stands for the lines left out)."""
    job = the_job()
    container = job["spec"]["template"]["spec"]["containers"][0]
    message = termination_message(container["terminationMessagePolicy"], LINE, 1, LOG + LINE + "\n")
    reasons = reasons_when_every_try_ends(job, message)
    printed = diagnostics("kubernetes:batch/v1:Job", "mnist-job", reasons)
    lines = printed.splitlines()
    assert lines[:4] == [
        "Diagnostics:",
        "  kubernetes:batch/v1:Job (mnist-job):",
        f"    error: {len(reasons)} errors occurred:",
        f'    \t* resource "{URN}" was successfully created, but the Kubernetes API server reported that it failed to fully '
        "initialize or become live: Resource 'mnist-proof' was created but failed to initialize",
    ]
    assert lines[-2] == "    \t* [BackoffLimitExceeded] Job has reached the specified backoff limit" and lines[-1] == ""
    assert f"    \t* [Pod gpu-workloads/mnist-proof-ax7k]: [Error] {LINE}" in lines
    from pathlib import Path

    doc = (Path(__file__).resolve().parent.parent / "docs" / "proof.md").read_text()
    quoted = doc.split("<!-- pulumi up's error -->\n```\n", 1)[1].split("\n```", 1)[0].splitlines()
    assert quoted[:3] == lines[:3] and quoted[-1] == lines[-2]
    for line in quoted:
        assert line in lines or line.strip() == "...", line


def image_pull(job: dict, try_: int, reason: str, message: str) -> dict:
    """A pod whose container waits for its image: ContainerCreating, ErrImagePull (the runtime's
    words), ImagePullBackOff ("Back-off pulling image %q", kubernetes/kubernetes
    pkg/kubelet/images/image_manager.go)."""
    container = job["spec"]["template"]["spec"]["containers"][0]
    status = {"name": container["name"], "ready": False, "restartCount": 0, "state": {"waiting": {"reason": reason, "message": message}}}
    metadata = {
        "name": f"{job['metadata']['name']}-{'abcde'[try_]}x7k",
        "namespace": job["metadata"]["namespace"],
        "ownerReferences": [{"kind": "Job", "name": job["metadata"]["name"], "uid": job["metadata"]["uid"]}],
    }
    return pod_state(job, metadata, "Pending", status)


def started(job: dict, **status) -> dict:
    return {"kind": "Job", "metadata": job["metadata"], "status": {"startTime": "2026-11-26T10:00:00Z", **status}}


def test_an_image_that_cannot_be_pulled_is_not_shown_while_up_waits_only_in_its_error():
    """The kubelet's Ready condition says "containers with unready status" while the image is
    pulled for, so pulumi-kubernetes' pod checker puts that in each pull message, and its Job
    await shows none of them (job.go processPodMessages): `pulumi up` shows only the Job's
    counts until the deadline, and the pull's reason comes in the error."""
    job = the_job()
    image = job["spec"]["template"]["spec"]["containers"][0]["image"]
    pulled = (
        f'failed to pull and unpack image "docker.io/{image}": failed to resolve reference: unexpected status from HEAD '
        "request: 429 Too Many Requests"
    )
    events = [
        started(job, active=1),
        image_pull(job, 0, "ContainerCreating", ""),
        image_pull(job, 0, "ErrImagePull", pulled),
        image_pull(job, 0, "ImagePullBackOff", f'Back-off pulling image "{image}"'),
    ]
    assert events[-1]["status"]["conditions"][-1]["message"] == "containers with unready status: [mnist-proof]"
    deadline = {
        "type": "Failed",
        "status": "True",
        "reason": "DeadlineExceeded",
        "message": "Job was active longer than specified deadline",
    }
    failed = started(job, failed=1, conditions=[deadline])
    shown = live_status(job, events + [failed], URN)
    assert shown == [
        'Waiting for Job "gpu-workloads/mnist-proof" to start',
        'Waiting for Job "gpu-workloads/mnist-proof" to succeed (Active: 1 | Succeeded: 0 | Failed: 0)',
        'Waiting for Job "gpu-workloads/mnist-proof" to start',
        'Waiting for Job "gpu-workloads/mnist-proof" to succeed (Active: 0 | Succeeded: 0 | Failed: 1)',
    ], "nothing of the pull while it waits"
    reasons = up_reasons(job, events + [failed], URN)
    assert reasons is not None and reasons[-1] == "[DeadlineExceeded] Job was active longer than specified deadline"
    back_off = f'[Pod gpu-workloads/mnist-proof-ax7k]: containers with unready status: [mnist-proof][ImagePullBackOff] Back-off pulling image "{image}"'
    assert back_off in reasons and any("429 Too Many Requests" in r for r in reasons)
    assert not any("ContainerCreating" in r for r in reasons), "the pod checker skips a container being created"


def test_a_pod_no_node_can_take_is_named_neither_while_up_waits_nor_in_its_error():
    """The scheduler's "0/3 nodes are available" is an info the await keeps nowhere: a pool that
    gets no node ends on the deadline with the Job's reason alone."""
    job = the_job()
    metadata = {"name": "mnist-proof-ax7k", "namespace": "gpu-workloads", "ownerReferences": [{"uid": job["metadata"]["uid"]}]}
    pending = pod_state(job, metadata, "Pending", {}, scheduled=False)
    deadline = {
        "type": "Failed",
        "status": "True",
        "reason": "DeadlineExceeded",
        "message": "Job was active longer than specified deadline",
    }
    events = [started(job, active=1), pending, started(job, failed=1, conditions=[deadline])]
    assert not any("nodes are available" in s for s in live_status(job, events, URN))
    reasons = up_reasons(job, events, URN)
    assert reasons is not None and len(reasons) == 2 and reasons[1].startswith("[DeadlineExceeded]")


def test_a_failed_try_is_shown_while_up_waits_and_a_running_one_is_not():
    """Of each try's two states, the running pod's message carries the kubelet's "containers
    with unready status" and is hidden; the Failed pod's Ready condition has no message, so its
    line shows in the Job's row as it happens."""
    job = the_job()
    running, ended = failed_pod(job, 0, LINE)
    shown = live_status(job, [started(job, active=1), running, ended], URN)
    assert shown[-1] == f"[Pod gpu-workloads/mnist-proof-ax7k]: [Error] {LINE}"
    assert not any("containers with unready status" in s for s in shown)


def test_a_termination_file_longer_than_the_kubelet_keeps_loses_its_start():
    """The kubelet reads the file's last 4096 bytes (tail.ReadAtMost), a character cut in two
    becoming U+FFFD; so the script writes no more than that, and its line's start survives."""
    long = LINE + " " + "é" * 3000  # 6000 bytes: ASCII's count of characters is not a count of bytes
    kept = termination_message("File", long, 1, "")
    assert not kept.startswith("PROOF FAILED") and kept.endswith("é") and len(kept.encode()) <= MESSAGE_BYTES
    written = finished(long)
    assert len(written) <= MESSAGE_BYTES
    assert termination_message("File", written.decode(), 1, "").startswith(LINE), "the script's own cut keeps the start"


def finished(line: str) -> bytes:
    """What proof/train_mnist.py's `finish` writes to the termination file, run without PyTorch:
    the function and its constant taken from the script's source."""
    import ast
    import contextlib
    import io
    import tempfile
    from pathlib import Path

    from components.proof.mnist_job import SCRIPT

    tree = ast.parse(SCRIPT.read_text())
    wanted = [
        n
        for n in tree.body
        if (isinstance(n, ast.FunctionDef) and n.name == "finish")
        or (isinstance(n, ast.Assign) and ast.unparse(n.targets[0]) == "TERMINATION_MESSAGE_BYTES")
    ]
    assert len(wanted) == 2, "finish and TERMINATION_MESSAGE_BYTES"
    with tempfile.TemporaryDirectory() as folder:
        log = Path(folder) / "termination-log"
        log.touch()
        space: dict = {"TERMINATION_LOG": log}
        exec(compile(ast.Module(body=wanted, type_ignores=[]), str(SCRIPT), "exec"), space)  # the script's own code, run without PyTorch
        assert space["TERMINATION_MESSAGE_BYTES"] == MESSAGE_BYTES
        with contextlib.redirect_stdout(io.StringIO()):
            space["finish"](line)
        return log.read_bytes()


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
    reasons = up_reasons(job, [restarted, backoff_limit_exceeded(job)], URN)
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
