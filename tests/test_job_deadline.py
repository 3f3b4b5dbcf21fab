"""A Job that cannot start fails by itself: every proof Job carries a deadline
(`activeDeadlineSeconds`) sized from its pool, strictly under the time `pulumi up` waits for it,
so `up` ends with the Job's own reason (DeadlineExceeded, BackoffLimitExceeded), never on
Pulumi's timeout; and a digest is pulled only when the node lacks it."""

from __future__ import annotations

import dataclasses

import pytest
from conftest import run_cached
from support.both_modes import declares_the_same_in_both_modes

from components.gpu_stack.settings import DEFAULT_MNIST_IMAGE, GUIDE_MNIST_IMAGE
from components.pools.settings import GpuPoolConfig
from components.proof import job_deadline
from components.proof.job_deadline import AWAIT_GRACE_SECONDS, duration_seconds, job_timeout
from components.proof.job_deadline import job_deadline as deadline
from components.proof.mnist_job import MnistRun, pull_policy

JOB = "kubernetes:batch/v1:Job"
T4 = "Standard_NC4as_T4_v3"

# Every shape a pool takes: what decides how long its first node takes to serve a GPU.
SHAPES = {
    "fixed": GpuPoolConfig(vm_size=T4, node_count=1),
    "from zero": GpuPoolConfig(vm_size=T4, min_count=0, max_count=3, node_count=0),
    "autoscaled, never zero": GpuPoolConfig(vm_size=T4, min_count=1, max_count=3, node_count=1),
    "Spot from zero": GpuPoolConfig(vm_size=T4, spot=True, min_count=0, max_count=3, node_count=0),
    "Spot, fixed": GpuPoolConfig(vm_size=T4, spot=True, node_count=1),
    "AKS-managed": GpuPoolConfig(vm_size=T4, management="aks-managed", node_count=1),
    "AKS-managed from zero": GpuPoolConfig(vm_size=T4, management="aks-managed", min_count=0, max_count=3, node_count=0),
    "GPU Operator": GpuPoolConfig(vm_size=T4, management="gpu-operator", node_count=1),
    "GPU Operator from zero": GpuPoolConfig(vm_size=T4, management="gpu-operator", min_count=0, max_count=3, node_count=0),
}


@pytest.mark.parametrize("shape", SHAPES)
@pytest.mark.parametrize("max_seconds", [10, 120, 3600, None], ids=["10s", "120s", "3600s", "the image's entrypoint"])
def test_every_pool_shape_fails_its_job_before_pulumi_stops_waiting(shape, max_seconds):
    pool = SHAPES[shape]
    active = deadline(pool, max_seconds)
    waited = duration_seconds(job_timeout(pool, max_seconds))
    assert active + AWAIT_GRACE_SECONDS <= waited, "the Failed condition has time to reach pulumi-kubernetes"
    assert active < waited
    MnistRun(pool.name, create_timeout=job_timeout(pool, max_seconds), deadline_seconds=active)  # accepted as a pair


@pytest.mark.parametrize("shape", SHAPES)
def test_the_deadline_holds_every_try_of_the_training_after_a_pull(shape):
    """A proof that fails at its time limit three times still ends BackoffLimitExceeded, with
    the script's own line, not DeadlineExceeded."""
    pool = SHAPES[shape]
    tries = job_deadline.BACKOFF_LIMIT + 1  # restartPolicy Never: the Job fails when failed pods > backoffLimit
    assert job_deadline.TRIES == tries == 3
    assert deadline(pool, 120) >= job_deadline.PULL_SECONDS + tries * (120 + job_deadline.TRAIN_GRACE_SECONDS)
    assert deadline(pool, 3600) - deadline(pool, 120) == tries * (3600 - 120)


def test_a_pool_that_may_start_from_zero_or_waits_for_the_operator_gets_more_time():
    fixed, from_zero = deadline(SHAPES["fixed"], 120), deadline(SHAPES["from zero"], 120)
    assert from_zero - fixed == job_deadline.NODE_FROM_ZERO_SECONDS
    assert deadline(SHAPES["GPU Operator"], 120) - fixed == job_deadline.OPERATOR_STACK_SECONDS
    assert deadline(SHAPES["Spot from zero"], 120) == from_zero and deadline(SHAPES["AKS-managed"], 120) == fixed


def test_the_shipped_script_waits_51_minutes_on_a_running_node_and_81_from_zero():
    """Three tries of 120 s, each with the watchdog's 60 s and a start of 425 s at worst (CUDA's
    wait and its last try, the watchdog's check of the GPU, the download), the pull and a margin
    (and 30 minutes for a node from zero), then five minutes' grace."""
    assert job_deadline.START_SECONDS == 425
    assert deadline(SHAPES["fixed"], 120) == 2745 and deadline(SHAPES["from zero"], 120) == 4545
    assert job_timeout(SHAPES["fixed"], 120) == "51m" and job_timeout(SHAPES["from zero"], 120) == "81m"


def named(pool: GpuPoolConfig, *names: str) -> list[GpuPoolConfig]:
    return [dataclasses.replace(pool, name=name) for name in names]


def test_a_groups_job_waits_until_the_autoscaler_first_tries_its_last_pool_then_a_whole_pools_time():
    """A group of three pools from zero, each try failing only at max-node-provision-time: the
    autoscaler goes back to the first pools in between (A B A B A B C), so it first tries the
    third at 5520 s (autoscaler_fallback.walk), which still gets a whole pool's time from zero;
    the second of two at 920 s. A group of the pools' shapes waits as its slowest pool does."""
    from_zero, operator = SHAPES["from zero"], SHAPES["GPU Operator from zero"]
    three = named(from_zero, "t4", "t4b", "a10")
    assert job_deadline.group_deadline(three, 120) == 5520 + 4545
    assert job_deadline.group_timeout(three, 120) == "173m"
    two = [*named(from_zero, "t4"), *named(operator, "a10")]
    assert job_deadline.group_deadline(two, 120) == 920 + deadline(operator, 120)
    assert job_deadline.group_deadline(named(from_zero, "t4"), 120) == 4545, "a group preflight left one pool"
    for pools in (two, three, [*named(from_zero, "t4", "t4b"), *named(operator, "a10")]):
        for max_seconds in (120, 3600, None):
            active = job_deadline.group_deadline(pools, max_seconds)
            assert active + AWAIT_GRACE_SECONDS <= duration_seconds(job_deadline.group_timeout(pools, max_seconds))
            MnistRun("group", create_timeout=job_deadline.group_timeout(pools, max_seconds), deadline_seconds=active)


def test_a_group_whose_last_pool_the_autoscaler_never_tries_has_no_deadline():
    """The config refuses such a group (components/pools/groups.py); a deadline for it would be a guess."""
    with pytest.raises(ValueError, match="the cluster autoscaler never tries 'd', the last of 4 pools"):
        job_deadline.group_deadline(named(SHAPES["from zero"], "a", "b", "c", "d"), 120)


def _mmss(seconds: int) -> str:
    return f"{seconds // 60} min {seconds % 60} s" if seconds % 60 else f"{seconds // 60} min"


def _timings() -> str:
    """docs/proof.md's Timings table, the one place the docs state these figures (the other
    pages link to it); `make config-docs` writes it (tools/doc_figures.py)."""
    from pathlib import Path

    page = (Path(__file__).resolve().parent.parent / "docs" / "proof.md").read_text()
    return page.split("<!-- timings:", 1)[1].split("<!-- end of timings -->", 1)[0]


def test_the_docs_say_the_deadlines_the_program_computes():
    """The Job's deadline and `pulumi up`'s wait for a pool with a node and one from zero, and
    the tries, as docs/proof.md states them: the ones job_deadline.py computes for the defaults."""
    running, from_zero = deadline(SHAPES["fixed"], 120), deadline(SHAPES["from zero"], 120)
    waits = [duration_seconds(job_timeout(SHAPES[s], 120)) // 60 for s in ("fixed", "from zero")]
    timings = _timings()
    assert f"| the Job's deadline, a pool with a node | {running} s ({_mmss(running)}); `pulumi up` waits {waits[0]} min |" in timings
    assert f"| the Job's deadline, a pool from zero | {from_zero} s ({_mmss(from_zero)}); `pulumi up` waits {waits[1]} min |" in timings
    assert f"| tries before the Job fails | {job_deadline.TRIES} (`backoffLimit` {job_deadline.BACKOFF_LIMIT})" in timings


def test_the_docs_say_a_groups_deadline_the_program_computes():
    """A group's deadline and `pulumi up`'s wait for two and three pools from zero with the
    shipped script's 120 s, as docs/proof.md states them."""
    from_zero = SHAPES["from zero"]
    two, three = named(from_zero, "t4", "a10"), named(from_zero, "t4", "t4b", "a10")
    deadlines = [job_deadline.group_deadline(pools, 120) for pools in (two, three)]
    waits = [duration_seconds(job_deadline.group_timeout(pools, 120)) // 60 for pools in (two, three)]
    assert (deadlines, waits) == ([5465, 10065], [97, 173])
    first_tries = [deadlines[0] - deadline(from_zero, 120), deadlines[1] - deadline(from_zero, 120)]
    timings = _timings()
    for n, first_try, group, wait in zip((2, 3), first_tries, deadlines, waits, strict=True):
        assert (
            f"| a group of {n} pools from zero | the last pool first tried at {first_try} s; deadline {group} s; "
            f"`pulumi up` waits {wait} min |"
        ) in timings


def test_a_deadline_that_is_not_under_pulumis_wait_is_refused():
    with pytest.raises(ValueError, match=r"the Job's deadline \(1800 s\) must be under `pulumi up`'s wait for it \(30m\)"):
        MnistRun("gpu", create_timeout="30m", deadline_seconds=1800)
    with pytest.raises(ValueError, match="must be under"):
        MnistRun("gpu", create_timeout="30m", deadline_seconds=0)
    assert MnistRun("gpu", create_timeout="30m", deadline_seconds=1799).deadline_seconds == 1799
    assert MnistRun("gpu").deadline_seconds is None, "a Job built without one has none"


@pytest.mark.parametrize("duration, seconds", [("30m", 1800), ("1h30m", 5400), ("90s", 90), ("204m", 12240), ("2h", 7200)])
def test_pulumis_timeouts_are_read_in_seconds(duration, seconds):
    assert duration_seconds(duration) == seconds


@pytest.mark.parametrize("duration", ["", "30", "1d", "30m10", "m"])
def test_a_timeout_that_is_not_hours_minutes_and_seconds_is_refused(duration):
    with pytest.raises(ValueError, match="a timeout of whole hours, minutes and seconds"):
        duration_seconds(duration)


# --------------------------------------------------------------------------- in the program


# One run per case, a preview: the deadline and the time limit are the plan's (MnistJobArgs),
# which is the same in a deployment (declares_the_same_in_both_modes checks it each time).
@pytest.mark.parametrize(
    "pool, job",
    [
        ({"vmSize": T4}, {}),
        ({"vmSize": T4, "minCount": 0, "maxCount": 2}, {}),
        ({"vmSize": T4, "minCount": 0, "maxCount": 2, "spot": True}, {"maxSeconds": 3600}),
        ({"vmSize": T4, "management": "aks-managed"}, {}),
        ({"vmSize": T4, "management": "gpu-operator"}, {"image": GUIDE_MNIST_IMAGE}),
    ],
    ids=["fixed", "from zero", "Spot from zero, an hour's training", "AKS-managed", "GPU Operator, the guide's image"],
)
def test_each_job_carries_its_deadline_under_the_time_up_waits_for_it(pool, job):
    # mnistJob left out, not None, where the case sets none: the same run other tests of the pool read (run_cached).
    overrides = {"gpuPool": pool, **({"mnistJob": job} if job else {})}
    declares_the_same_in_both_modes("dev", **overrides)
    run = run_cached("dev", **overrides)[0]
    assert run.of_type(JOB), "the program got as far as the Job"
    for found in run.of_type(JOB):
        active = found.inputs["spec"]["activeDeadlineSeconds"]
        timeouts = found.options["customTimeouts"]
        assert 0 < active < duration_seconds(timeouts["create"]) and timeouts["update"] == timeouts["create"]


def test_every_pool_of_gpupools_gets_its_own_deadline():
    pools = {
        "t4": {"vmSize": T4, "minCount": 0, "maxCount": 3, "spot": True},
        "a100": {"vmSize": "Standard_NC24ads_A100_v4", "nodeCount": 1},
    }
    run = run_cached("dev", gpuPool=None, gpuPools=pools)[0]
    found = {r.inputs["metadata"]["name"]: r.inputs["spec"]["activeDeadlineSeconds"] for r in run.of_type(JOB)}
    assert found == {"mnist-proof-t4": 4545, "mnist-proof-a100": 2745}


# --------------------------------------------------------------------------- pulling


def test_a_digest_is_pulled_only_when_the_node_lacks_it_and_a_tag_at_every_start():
    assert pull_policy(DEFAULT_MNIST_IMAGE) == "IfNotPresent"
    assert pull_policy(f"myacr.azurecr.io/pytorch/pytorch@sha256:{'a' * 64}") == "IfNotPresent"
    assert pull_policy(GUIDE_MNIST_IMAGE) == "Always", "a tag can move"


def test_the_default_job_pulls_its_digest_if_not_present_and_records_no_checkov_skip(dev):
    job = dev.one(JOB)
    assert job.inputs["spec"]["template"]["spec"]["containers"][0]["imagePullPolicy"] == "IfNotPresent"
    # Checkov passes CKV_K8S_15 for an image pinned by digest with any policy (3.3.30,
    # ImagePullPolicyAlways.py), so there is no exception to record on the object.
    assert not [a for a in job.inputs["metadata"]["annotations"] if a.startswith("checkov.io/")]


def script_constant(name: str) -> int:
    import re
    from pathlib import Path

    script = (Path(__file__).resolve().parent.parent / "proof" / "train_mnist.py").read_text()
    found = re.search(rf"^{name} = (\d+)$", script, re.M)
    assert found is not None, f"proof/train_mnist.py sets {name}"
    return int(found[1])


def test_each_try_leaves_room_for_the_scripts_own_wait_for_cuda():
    """The script waits for CUDA on an NVSwitch node (error 802) for CUDA_WAIT_SECONDS, a retry
    every CUDA_RETRY_SECONDS, each try bounded by CUDA_PROBE_SECONDS; a try the deadline counts
    shorter would end DeadlineExceeded instead of the script's own line."""
    for name in ("CUDA_WAIT_SECONDS", "CUDA_RETRY_SECONDS", "CUDA_PROBE_SECONDS"):
        assert script_constant(name) == getattr(job_deadline, name), name
    # The last try starts before the wait is over, after a retry's sleep, and runs to its limit.
    assert job_deadline.CUDA_START_SECONDS >= (
        job_deadline.CUDA_WAIT_SECONDS + job_deadline.CUDA_RETRY_SECONDS + job_deadline.CUDA_PROBE_SECONDS
    )
    # The watchdog ends a try at --max-seconds and its grace: the deadline counts as much.
    assert script_constant("TRAIN_GRACE_SECONDS") == job_deadline.TRAIN_GRACE_SECONDS


def test_every_phase_the_scripts_watchdog_bounds_is_counted_in_a_try():
    """Each `watchdog.arm(what, limit)` in the script is a phase a try may spend its limit in:
    the check of the GPU after wait_for_cuda (CUDA_PROBE_SECONDS), and the training with its
    grace; the deadline counts both, on top of wait_for_cuda's longest."""
    import ast
    from pathlib import Path

    tree = ast.parse((Path(__file__).resolve().parent.parent / "proof" / "train_mnist.py").read_text())
    armed = [
        ast.unparse(call.args[1])
        for call in ast.walk(tree)
        if isinstance(call, ast.Call) and isinstance(call.func, ast.Attribute) and call.func.attr == "arm"
    ]
    assert armed == ["CUDA_PROBE_SECONDS", "limit"], "a new phase: count it in job_deadline.py"
    use_gpu = next(f for f in ast.walk(tree) if isinstance(f, ast.FunctionDef) and f.name == "use_gpu")
    calls = [ast.unparse(c.func) for c in ast.walk(use_gpu) if isinstance(c, ast.Call)]
    assert calls.index("wait_for_cuda") < calls.index("watchdog.arm"), "the check comes after CUDA's wait, not within it"
    assert job_deadline.START_SECONDS >= job_deadline.CUDA_START_SECONDS + script_constant("CUDA_PROBE_SECONDS")
    run = 120 + job_deadline.TRAIN_GRACE_SECONDS + job_deadline.START_SECONDS  # a try of the shipped script
    assert deadline(SHAPES["fixed"], 120) >= job_deadline.PULL_SECONDS + job_deadline.TRIES * run
