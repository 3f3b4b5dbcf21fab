"""How long a proof Job may run (its `activeDeadlineSeconds`), and how long `pulumi up` waits
for it (its create timeout), from what its pool needs, the deadline strictly first. Why each
figure: docs/design/proof.md, "The deadline" and "A group's deadline".
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping, Sequence

from components.catalog import autoscaler_fallback
from components.pools.settings import GpuPoolConfig

# Retries before the Job is Failed, each try a pod of its own (restartPolicy Never); Kubernetes'
# 6 would hold a smoke test that fails for good for minutes of back-off.
BACKOFF_LIMIT = 2
TRIES = BACKOFF_LIMIT + 1
#: A node for a pool that may have none: the autoscaler's scale-up, a GPU VM and its driver.
NODE_FROM_ZERO_SECONDS = 30 * 60
#: The GPU Operator's driver, toolkit and device plugin on a new node.
OPERATOR_STACK_SECONDS = 10 * 60
#: Pulling PyTorch's image on a node that has none of it (components/catalog/proof_images.py): more than twice its minutes.
PULL_SECONDS = 10 * 60
#: proof/train_mnist.py's CUDA_WAIT_SECONDS, CUDA_RETRY_SECONDS and CUDA_PROBE_SECONDS (a test holds them equal):
#: how long it tries CUDA's start again, its sleep between tries, and one try's time limit.
CUDA_WAIT_SECONDS = 120
CUDA_RETRY_SECONDS = 5
CUDA_PROBE_SECONDS = 120
#: wait_for_cuda at its longest: its last try starts before CUDA_WAIT_SECONDS, after a sleep, and runs to its limit.
CUDA_START_SECONDS = CUDA_WAIT_SECONDS + CUDA_RETRY_SECONDS + CUDA_PROBE_SECONDS
#: The watchdog again for CUDA's start in the script's own process and a matrix product.
CUDA_CHECK_SECONDS = CUDA_PROBE_SECONDS
#: MNIST's four files from the mirror (about 11 MB).
DOWNLOAD_SECONDS = 60
START_SECONDS = CUDA_START_SECONDS + CUDA_CHECK_SECONDS + DOWNLOAD_SECONDS
#: What the script's watchdog allows past --max-seconds (proof/train_mnist.py TRAIN_GRACE_SECONDS; a test holds them equal).
TRAIN_GRACE_SECONDS = 60
#: A try of the guide's image, which runs its own `--max_steps` with no time limit (about three minutes on a K80).
GUIDE_TRY_SECONDS = 5 * 60
MARGIN_SECONDS = 5 * 60
#: Between the deadline and Pulumi's time limit: the Job controller's sync that writes Failed, and its way to pulumi-kubernetes.
AWAIT_GRACE_SECONDS = 5 * 60


def job_deadline(pool: GpuPoolConfig, max_seconds: int | None) -> int:
    """The Job's `activeDeadlineSeconds`: a node, the pull, and every try the backoffLimit allows
    at its longest (`max_seconds`: the script's time limit; None: the guide's image) with the Job
    controller's back-off between them, and a margin."""
    node = (NODE_FROM_ZERO_SECONDS if pool.can_scale_to_zero else 0) + (OPERATOR_STACK_SECONDS if pool.mode == "gpu-operator" else 0)
    back_off = sum(10 * 2**n for n in range(BACKOFF_LIMIT))  # the Job controller's 10 s, doubling
    run = (GUIDE_TRY_SECONDS if max_seconds is None else max_seconds + TRAIN_GRACE_SECONDS) + START_SECONDS
    return node + PULL_SECONDS + TRIES * run + back_off + MARGIN_SECONDS


def job_timeout(pool: GpuPoolConfig, max_seconds: int | None = None) -> str:
    """How long `pulumi up` waits for the Job (timeout_of its deadline), so a Job that cannot
    start ends on its own reason, never on Pulumi's timeout."""
    return timeout_of(job_deadline(pool, max_seconds))


def group_deadline(pools: Sequence[GpuPoolConfig], max_seconds: int | None) -> int:
    """A capacity group's Job's `activeDeadlineSeconds`: until the cluster autoscaler first tries
    the last pool when every try before fails only at max-node-provision-time (autoscaler_fallback
    `walk`), then the slowest of the pools' own deadlines (docs/design/capacity-groups.md)."""
    last = pools[-1].name
    last_try = autoscaler_fallback.walk([pool.name for pool in pools]).first_try(last)
    if last_try is None:  # components/pools/groups.py refuses such a group
        raise ValueError(f"the cluster autoscaler never tries {last!r}, the last of {len(pools)} pools")
    return last_try + max(job_deadline(pool, max_seconds) for pool in pools)


def group_timeout(pools: Sequence[GpuPoolConfig], max_seconds: int | None = None) -> str:
    """How long `pulumi up` waits for a capacity group's Job (job_timeout's rule on group_deadline)."""
    return timeout_of(group_deadline(pools, max_seconds))


def timeout_of(deadline: int) -> str:
    """A deadline and the grace for the Failed condition to reach the provider, in whole minutes."""
    return f"{math.ceil((deadline + AWAIT_GRACE_SECONDS) / 60)}m"


def duration_seconds(duration: str) -> int:
    """Seconds of a Pulumi custom timeout ("30m", "1h30m", "90s"; Go's time.ParseDuration units h, m, s)."""
    parts = re.fullmatch(r"(?:(\d+)h)?(?:(\d+)m)?(?:(\d+)s)?", duration)
    if not duration or parts is None:
        raise ValueError(f"a timeout of whole hours, minutes and seconds, such as '30m', not {duration!r}")
    hours, minutes, seconds = (int(p or 0) for p in parts.groups())
    return hours * 3600 + minutes * 60 + seconds


def unwatched_line(deadlines: Mapping[str, int]) -> str:
    """What a proof awaited without its watch gives up, with each Job's deadline (`deadlines`, by
    the Job's name). pulumi-kubernetes' Job await ends only on the Job's conditions: Complete, or
    Failed for BackoffLimitExceeded or DeadlineExceeded (pulumi-kubernetes@94977969
    provider/pkg/await/checker/job/check.go `jobComplete`, `collectJobConditionErrors`); a pod's
    waiting reason is a status, and events only the Job's own (await/job.go `processPodMessages`,
    await/watchers.go `NewEventAggregator`): a pod that never starts fails nothing before the
    Job controller's deadline. A pod that runs and fails ends the Job at its backoffLimit, as with
    the watch."""
    each = ", ".join(f"{job}: {seconds} s" for job, seconds in deadlines.items())
    return (
        "proof: without its watch, a Pulumi dynamic resource this run cannot declare, `pulumi up` waits for each proof Job with "
        "pulumi-kubernetes' await alone: a Job whose pod cannot start (no node is added, its image cannot be pulled, a taint) "
        f"fails `up` only when its deadline passes ({each}), as pulumi-kubernetes' '[DeadlineExceeded] Job was active longer "
        "than specified deadline' with the pod's last status, not within minutes in the cluster's words; and the outputs "
        "servedBy, resultCommand and jobResultCommand, which the watch records, are not set"
    )
