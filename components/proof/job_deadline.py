"""How long a proof Job may run (its `activeDeadlineSeconds`), and how long `pulumi up` waits
for it (its create timeout): sized from what its pool needs, the deadline strictly first.

Not a component: the numbers MnistJob's Jobs carry (components/proof/mnist_job.py), one
pair per pool (or per capacity group), from the pool's shape and the script's time limit.
"""

from __future__ import annotations

import math
import re
from collections.abc import Sequence

from components.catalog import autoscaler_fallback
from components.pools.settings import GpuPoolConfig

# Retries before the Job is Failed. Each try is a pod of its own (restartPolicy Never), so two
# retries are three tries and every failed pod keeps its log; Kubernetes' 6 would hold a
# smoke test that fails for good for minutes of back-off. docs/design/proof.md, "The failed pods stay"
# and "The deadline".
BACKOFF_LIMIT = 2
#: Tries before the Job fails BackoffLimitExceeded: one, and a retry per backoffLimit.
TRIES = BACKOFF_LIMIT + 1


# A Job whose pod cannot start never fails by itself: its deadline fails it, whatever its
# backoffLimit, and the await with it (docs/design/proof.md, "The deadline"). It is what a pool needs:
#: The cluster autoscaler's scale-up, a GPU VM's provisioning and its driver, for a pool that
#: may have no node (the 30 minutes job_timeout has always given it).
NODE_FROM_ZERO_SECONDS = 30 * 60
#: The GPU Operator installs the driver, toolkit and device plugin on a node after Helm's wait
#: (components/gpu_stack/gpu_operator.py): a driver container, and a kernel module to load.
OPERATOR_STACK_SECONDS = 10 * 60
#: Pulling the image on a node that has none of it (PyTorch's size: components/catalog/
#: proof_images.py PYTORCH, its one place; docs/proof.md "Pulling the image"): two to four
#: minutes at a VM's bandwidth; more than twice that here.
PULL_SECONDS = 10 * 60
#: CUDA's start on a node whose NVSwitch fabric manager is still coming up: the script tries
#: again for this long (proof/train_mnist.py CUDA_WAIT_SECONDS; a test holds the two equal).
CUDA_WAIT_SECONDS = 120
#: The script's sleep between two tries of CUDA's start (CUDA_RETRY_SECONDS there), and how long
#: one try, a new process, may take before the script calls the driver hung (CUDA_PROBE_SECONDS).
CUDA_RETRY_SECONDS = 5
CUDA_PROBE_SECONDS = 120
#: wait_for_cuda at its longest: its last try starts before CUDA_WAIT_SECONDS have passed, after
#: a retry's sleep, and may run until its own time limit (proof/train_mnist.py wait_for_cuda: the
#: wait is checked only after a try returns).
CUDA_START_SECONDS = CUDA_WAIT_SECONDS + CUDA_RETRY_SECONDS + CUDA_PROBE_SECONDS
#: Then use_gpu arms the watchdog for CUDA's start in the script's own process and a matrix
#: product on the GPU, CUDA_PROBE_SECONDS again, before the training's own limit begins.
CUDA_CHECK_SECONDS = CUDA_PROBE_SECONDS
#: MNIST's four files from the mirror (about 11 MB).
DOWNLOAD_SECONDS = 60
#: Each try's own start, at worst: CUDA's start, its check, the MNIST download.
START_SECONDS = CUDA_START_SECONDS + CUDA_CHECK_SECONDS + DOWNLOAD_SECONDS
#: What the script's watchdog allows past --max-seconds for the first steps' one-time work and
#: the test pass, before it ends the try (proof/train_mnist.py TRAIN_GRACE_SECONDS; a test
#: holds the two equal).
TRAIN_GRACE_SECONDS = 60
#: A try of the guide's image, which runs its own `--max_steps` and has no time limit: about
#: three minutes of training on the guide's K80, and some room.
GUIDE_TRY_SECONDS = 5 * 60
MARGIN_SECONDS = 5 * 60
#: Between the deadline and Pulumi's time limit: the Job controller's sync that writes Failed,
#: and the watch that brings it to pulumi-kubernetes; Pulumi's clock starts before the Job's.
AWAIT_GRACE_SECONDS = 5 * 60


def job_deadline(pool: GpuPoolConfig, max_seconds: int | None) -> int:
    """The Job's `activeDeadlineSeconds`: a node (from zero, and the Operator's GPU stack), the
    pull, and every try the backoffLimit allows at its longest (`max_seconds`, the script's
    time limit, and its watchdog's grace; None: the guide's image) with the Job controller's
    back-off between them, and a margin. A proof that fails its last try still ends
    BackoffLimitExceeded, with the script's own line."""
    node = (NODE_FROM_ZERO_SECONDS if pool.can_scale_to_zero else 0) + (OPERATOR_STACK_SECONDS if pool.mode == "gpu-operator" else 0)
    back_off = sum(10 * 2**n for n in range(BACKOFF_LIMIT))  # the Job controller's 10 s, doubling
    run = (GUIDE_TRY_SECONDS if max_seconds is None else max_seconds + TRAIN_GRACE_SECONDS) + START_SECONDS
    return node + PULL_SECONDS + TRIES * run + back_off + MARGIN_SECONDS


def job_timeout(pool: GpuPoolConfig, max_seconds: int | None = None) -> str:
    """How long `pulumi up` waits for the Job: its deadline and the grace for the Failed
    condition to reach the provider, in whole minutes (51 for a running node with the shipped
    script's 120 s, 81 from zero), so a Job that cannot start ends on its own reason, never on
    Pulumi's timeout."""
    return timeout_of(job_deadline(pool, max_seconds))


def group_deadline(pools: Sequence[GpuPoolConfig], max_seconds: int | None) -> int:
    """A capacity group's Job's `activeDeadlineSeconds`: until the cluster autoscaler first tries
    the last pool of the list when every try before fails only at max-node-provision-time (the
    slowest way a failure shows: it goes back to the first pools in between;
    catalog/autoscaler_fallback.py `walk`), then a whole pool's time from zero (the slowest of
    the pools' own deadlines), so the last pool still has it. docs/design/capacity-groups.md, "How long
    until a node of the next pool"."""
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
