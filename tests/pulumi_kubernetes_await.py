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
- provider/pkg/provider/provider.go Create (the await's error wrapped: `resource "<urn>" was
  successfully created, but the Kubernetes API server reported that it failed to fully
  initialize or become live: ...`) and partialError: the reasons sent to the engine;
- job.go processJobEvent's and processPodMessages' LogStatus: what `pulumi up` shows in the
  Job's row while it waits, every pod message but those that contain "containers with unready
  status", which are kept for the error only.
And how `pulumi up` prints those reasons, at pulumi/pulumi 1b594989: sdk/go/common/resource/
plugin/provider_plugin.go InitError.Error() (each reason through hashicorp/go-multierror v1.1.1,
pinned by sdk/go.mod, whose ListFormatFunc at 9974e9ec writes `N errors occurred:` and a `\t* `
line each), pkg/engine/update.go OnResourceStepPost (the error as a diagnostic of the Job's
URN) and pkg/backend/display/progress.go printDiagnostics (`Diagnostics:`, the resource's
`  <type> (<name>):`, each line of `error: <message>` indented four spaces, trailing blanks cut).
And, from kubernetes/kubernetes: pkg/kubelet/kuberuntime/kuberuntime_container.go at fbba6b47
getTerminationMessage and convertToKubeContainerStatus, which fill a container status's message
(the file read with pkg/util/tail ReadAtMost: its last 4096 bytes); pkg/kubelet/status/generate.go
at 004b6af5 GeneratePodReadyCondition, the Ready condition the kubelet sets on a pod whose
container is not ready (being created, its image pulled, or ended).
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
    terminationMessagePath, of which `tail.ReadAtMost(path, MaxContainerTerminationMessageLength)`
    keeps the last 4096 bytes ("reads at most max bytes from the end of the file",
    kubernetes/kubernetes pkg/util/tail/tail.go at 04791b49); when it is empty, the container
    failed and the policy is FallbackToLogsOnError, the log's last 80 lines (at most 2048 bytes)
    instead. A cut through a character: Go's string keeps the stray bytes, and the API server's
    JSON writes each as U+FFFD (encoding/json: "invalid UTF-8 is coerced to valid UTF-8 by
    replacing invalid bytes with the Unicode replacement rune")."""
    fallback = policy == "FallbackToLogsOnError" and exit_code != 0 and reason != "ContainerCannotRun"
    data = file_text.encode()[-MESSAGE_BYTES:].decode(errors="replace")
    if data or not fallback:
        return data
    tail = "".join(log.splitlines(keepends=True)[-LOG_LINES:]).encode()
    return tail[-LOG_BYTES:].decode(errors="ignore")


def ready_condition(pod: Obj) -> Obj:
    """GeneratePodReadyCondition (through GenerateContainersReadyCondition) for a pod without
    init containers or readiness gates: False with PodFailed for a Failed pod (no message),
    PodCompleted for a Succeeded one; otherwise False, ContainersNotReady and "containers with
    unready status: [a b]" (Go's %s of a []string) while any container is not ready, which is
    every container being created, pulled for, or ended; else True."""
    phase = pod.get("status", {}).get("phase")
    if phase in ("Failed", "Succeeded"):
        return {"type": "Ready", "status": "False", "reason": "PodFailed" if phase == "Failed" else "PodCompleted"}
    statuses = {s["name"]: s for s in pod.get("status", {}).get("containerStatuses", [])}
    names = [c["name"] for c in pod.get("spec", {}).get("containers", [])] or list(statuses)
    unknown = [n for n in names if n not in statuses]
    unready = [n for n in names if n in statuses and not statuses[n].get("ready")]
    said = [f"containers with {kind} status: [{' '.join(found)}]" for kind, found in (("unknown", unknown), ("unready", unready)) if found]
    if said:
        return {"type": "Ready", "status": "False", "reason": "ContainersNotReady", "message": ", ".join(said)}
    return {"type": "Ready", "status": "True"}


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


# job.go's comment on the messages it does not show: "The unready status condition always occurs
# as a normal part of a Job running, so don't print this as a warning. If the Job fails to
# complete, this warning will be included in the subErrors."
HIDDEN = "containers with unready status"


def job_status(job: Obj) -> list[str]:
    """processJobEvent's LogStatus(diag.Info, ...) of each result readyDetails returns: jobStarted's
    description, then, for a Job that has started, jobComplete's with its counts."""
    name = full_name(job)
    said = [f'Waiting for Job "{name}" to start']
    status = job.get("status", {})
    if status.get("startTime") is not None:
        counts = f"(Active: {status.get('active', 0)} | Succeeded: {status.get('succeeded', 0)} | Failed: {status.get('failed', 0)})"
        said.append(f'Waiting for Job "{name}" to succeed {counts}')
    return said


def await_job(job: Obj, events: list[Obj], urn: str) -> tuple[list[str], list[str] | None]:
    """What the await does as the watch brings `events` (the Job's and its pods' states, in
    order) for the Job `job` as created: (each status it logs while it waits, in order; the
    reasons of its partialError when the Job fails, or None while it has not). The reasons are
    Create's error (the await's, wrapped with the URN), then every message kept."""
    kept: list[str] = []  # TimeOrderedLogSet: each message once, in order
    shown: list[str] = []
    for event in events:
        if event["kind"] == "Pod":
            if owned_by(event, job):
                for message in pod_messages(event):
                    kept += [message] if message not in kept else []
                    shown += [message] if HIDDEN not in message else []
        elif event["metadata"]["name"] == job["metadata"]["name"]:
            error = job_error(event)
            kept += [error] if error and error not in kept else []
            shown += job_status(event)
            if error:
                initialization = f"Resource '{job['metadata']['name']}' was created but failed to initialize"
                created = (
                    f'resource "{urn}" was successfully created, but the Kubernetes API server reported that it failed '
                    f"to fully initialize or become live: {initialization}"
                )
                return shown, [created, *kept]
    return shown, None


def up_reasons(job: Obj, events: list[Obj], urn: str) -> list[str] | None:
    """The reasons of the partialError the provider answers when the Job fails, or None."""
    return await_job(job, events, urn)[1]


def live_status(job: Obj, events: list[Obj], urn: str) -> list[str]:
    """What `pulumi up` shows in the Job's row while it waits, in order."""
    return await_job(job, events, urn)[0]


# --------------------------------------------------------------------------- how `pulumi up` prints it


def init_error(reasons: list[str]) -> str:
    """InitError.Error(): the reasons through go-multierror's ListFormatFunc."""
    if len(reasons) == 1:
        return f"1 error occurred:\n\t* {reasons[0]}\n\n"
    return f"{len(reasons)} errors occurred:\n\t" + "\n\t".join(f"* {r}" for r in reasons) + "\n\n"


def diagnostics(type_: str, name: str, reasons: list[str]) -> str:
    """printDiagnostics for the one error of the resource `type_ (name)`: each line of
    `error: <InitError>` indented four spaces, trailing whitespace cut, trailing blank lines dropped
    (splitIntoDisplayableLines), then a blank line."""
    lines = f"error: {init_error(reasons)}".rstrip().split("\n")
    body = [f"    {line}".rstrip() for line in lines]
    return "\n".join(["Diagnostics:", f"  {type_} ({name}):", *body, ""]) + "\n"
