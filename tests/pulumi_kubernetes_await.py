"""What `pulumi up` says when a Job fails: pulumi-kubernetes' Job await, ported line for line
from Go, and the kubelet's termination message it reads.

Only the code a failed Job's error is made of, each function named after the Go one it
follows, at pulumi/pulumi-kubernetes 94977969 (v4.32.0-27):
- provider/pkg/await/checker/pod/check.go: NewPodChecker's three conditions and the
  messages they build from a pod's status;
- provider/pkg/await/checker/job/check.go: collectJobConditionErrors;
- provider/pkg/await/checker/checker.go readyDetails (conditions in order, stopping at the
  first that is not met), provider/pkg/logging/time_ordered_log_set.go (each message once);
- provider/pkg/await/watchers.go PodAggregator (the Job's own pods, each event through the
  pod checker, warnings and errors kept), provider/pkg/await/job.go jobInitAwaiter
  (processJobEvent: an error fails the await with every message kept so far);
- provider/pkg/provider/provider.go partialError: the reasons sent to the engine, which
  `pulumi up` prints under the resource's error.
And, from kubernetes/kubernetes pkg/kubelet/kuberuntime/kuberuntime_container.go at fbba6b47:
getTerminationMessage and convertToKubeContainerStatus, which fill a container status's message.
"""

from __future__ import annotations

from typing import Any

Obj = dict[str, Any]
INFO, WARNING, ERROR = "info", "warning", "error"
# pkg/kubelet/container/runtime.go: MaxContainerTerminationMessageLength (4096 bytes), and
# what FallbackToLogsOnError reads of the log: MaxContainerTerminationMessageLogLength (2048
# bytes), MaxContainerTerminationMessageLogLines (80).
MESSAGE_BYTES, LOG_BYTES, LOG_LINES = 4096, 2048, 80


# --------------------------------------------------------------------------- the kubelet


def termination_message(policy: str, file_text: str, exit_code: int, log: str, reason: str = "Error") -> str:
    """getTerminationMessage and convertToKubeContainerStatus: the file at the container's
    terminationMessagePath; when it is empty, the container failed and the policy is
    FallbackToLogsOnError, the log's last 80 lines (at most 2048 bytes) instead."""
    fallback = policy == "FallbackToLogsOnError" and exit_code != 0 and reason != "ContainerCannotRun"
    data = file_text.encode()[:MESSAGE_BYTES].decode(errors="ignore")
    if data or not fallback:
        return data
    tail = "".join(log.splitlines(keepends=True)[-LOG_LINES:]).encode()
    return tail[-LOG_BYTES:].decode(errors="ignore")


# --------------------------------------------------------------------------- checker/pod/check.go


def full_name(obj: Obj) -> str:
    """fullyQualifiedName: `namespace/name`, the namespace left out when it is "default" or ""."""
    namespace, name = obj["metadata"].get("namespace", ""), obj["metadata"]["name"]
    return f"{namespace}/{name}" if namespace not in ("", "default") else name


def condition_of(pod: Obj, kind: str) -> Obj | None:
    """filterConditions."""
    return next((c for c in pod.get("status", {}).get("conditions", []) if c["type"] == kind), None)


def trim_image_pull_msg(message: str) -> str:
    """trimImagePullMsg."""
    message = message.removeprefix("rpc error: code = Unknown desc = Error response from daemon: ")
    return message.removesuffix(": manifest unknown")


def container_status_errors(status: Obj) -> list[str]:
    """containerStatusErrors: containerWaitingError, containerTerminatedError and
    containerLastTerminationState, joined (errors.Join: one per line)."""
    if status.get("ready"):
        return []
    found = []
    waiting = status.get("state", {}).get("waiting")
    if waiting is not None and waiting.get("reason") != "ContainerCreating":
        found.append(f"[{waiting.get('reason', '')}] {trim_image_pull_msg(waiting.get('message', ''))}")
    terminated = status.get("state", {}).get("terminated")
    if terminated is not None and terminated.get("reason"):
        if terminated.get("message"):
            found.append(f"[{terminated['reason']}] {trim_image_pull_msg(terminated['message'])}")
        else:
            found.append(f'container "{status["name"]}" completed with exit code {terminated.get("exitCode", 0)}')
    last = status.get("lastState", {}).get("terminated")
    if last is not None:
        # FinishedAt.UTC().Format(time.RFC3339Nano): the fixtures' times are whole seconds in UTC.
        found.append(
            f'container "{status["name"]}" terminated at {last["finishedAt"]} ({last.get("reason", "")}: exit code {last.get("exitCode", 0)})'
        )
        if last.get("message"):
            found.append(last["message"])
    return found


def pod_error(condition: Obj, errors: list[str], name: str) -> str:
    """podError."""
    said = f"[Pod {name}]: "
    if condition.get("reason") and condition.get("message"):
        said += condition["message"]
    return said + "\n".join(errors)


def pod_scheduled(pod: Obj) -> tuple[bool, tuple[str, str] | None]:
    condition = condition_of(pod, "PodScheduled")
    if condition is None:
        return False, None
    if condition["status"] == "True":
        return True, None
    said = condition.get("message", "") if condition.get("reason") and condition.get("message") else ""  # statusFromCondition
    return False, (INFO, said) if said else None


def pod_condition(kind: str, pod: Obj) -> tuple[bool, tuple[str, str] | None]:
    """podInitialized (kind Initialized) and podReady (kind Ready, also met by a Succeeded pod)."""
    condition = condition_of(pod, kind)
    if condition is None:
        return False, None
    if condition["status"] == "True" or (kind == "Ready" and pod.get("status", {}).get("phase") == "Succeeded"):
        return True, None
    errors = [e for s in pod.get("status", {}).get("containerStatuses", []) for e in container_status_errors(s)]
    if errors or condition.get("message"):
        return False, (WARNING, pod_error(condition, errors, full_name(pod)))
    return False, None


def pod_messages(pod: Obj) -> list[str]:
    """The PodAggregator's messages for one event: the pod checker's conditions in order
    (readyDetails stops at the first not met), warnings and errors only."""
    found = []
    for check in (pod_scheduled, lambda p: pod_condition("Initialized", p), lambda p: pod_condition("Ready", p)):
        ok, message = check(pod)
        if message is not None:
            found.append(message)
        if not ok:
            break
    return [text for severity, text in found if severity in (WARNING, ERROR)]


# --------------------------------------------------------------------------- checker/job/check.go


def job_error(job: Obj) -> str:
    """jobStarted, then jobComplete's collectJobConditionErrors: for a Job that has started, a
    Failed condition whose reason is BackoffLimitExceeded or DeadlineExceeded, as `[reason] message`."""
    if job.get("status", {}).get("startTime") is None:
        return ""
    for condition in job.get("status", {}).get("conditions", []):
        if (
            condition["type"] == "Failed"
            and condition["status"] == "True"
            and condition.get("reason") in ("BackoffLimitExceeded", "DeadlineExceeded")
        ):
            return f"[{condition['reason']}] {condition.get('message', '')}"
    return ""


# --------------------------------------------------------------------------- job.go, watchers.go, provider.go


def owned_by(pod: Obj, job: Obj) -> bool:
    """isOwnedBy: the pod's owner references name the Job's UID."""
    return any(ref.get("uid") == job["metadata"].get("uid") for ref in pod["metadata"].get("ownerReferences", []))


def up_reasons(job: Obj, events: list[Obj]) -> list[str] | None:
    """What the provider answers when the watch brings `events` (the Job's and its pods'
    states, in order) for the Job `job` as created: the reasons of its partialError when the
    Job fails (the error line, then every message kept), or None while it has not failed."""
    kept: list[str] = []  # TimeOrderedLogSet: each message once, in order
    for event in events:
        if event["kind"] == "Pod":
            if owned_by(event, job):
                kept += [m for m in pod_messages(event) if m not in kept]
        elif event["metadata"]["name"] == job["metadata"]["name"]:
            error = job_error(event)
            if error:
                kept += [error] if error not in kept else []
                return [f"Resource '{job['metadata']['name']}' was created but failed to initialize", *kept]
    return None
