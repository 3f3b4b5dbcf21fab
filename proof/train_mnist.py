"""The GPU proof: train a small network on MNIST on the GPU this pod was given.

aks-gpu mounts this file into each pool's MNIST Job from a ConfigMap and runs it with the
image's Python. It needs PyTorch and nothing else. It:
  - stops, in one line and with exit status 1, when CUDA cannot start (saying CUDA's own
    words, and which of a PyTorch built without CUDA, a driver that hangs, a fabric manager
    that never came up or a GPU the pod did not get it is), when not exactly one device is
    visible, or when a kernel cannot run on it: it never trains quietly on the CPU. While CUDA
    says the system is not yet initialised (error 802: an NVSwitch node's fabric manager is
    still starting), it tries again, for 120 s;
  - says what it runs on: the GPU, its compute capability, the driver, CUDA, the MIG slice
    (from CUDA's name for the device), and keeps its CPU threads within the pod's CPU limit;
  - trains for at most --max-steps steps or --max-seconds seconds, whichever comes first,
    on MNIST fetched from a mirror and checked against its SHA-256 (--data mnist), or on
    digits it draws itself when the pod has no egress (--data synthetic);
  - stops with exit status 1 if the test accuracy is under --min-accuracy;
  - ends with one line: PROOF OK gpu=... steps=... accuracy=... seconds=..., or, whatever
    stops it, foreseen or not, PROOF FAILED: ... (never a traceback): a command line it
    refuses, a GPU that stops answering mid-run (a watchdog thread bounds the training), and
    the SIGTERM Kubernetes sends at the Job's deadline included. That line is also the
    container's termination message (/dev/termination-log), which `pulumi up` prints when
    the Job fails.

Locally, without a GPU: python proof/train_mnist.py --device cpu --data synthetic
On a machine with a CUDA GPU and PyTorch: make proof-gpu
"""

from __future__ import annotations

import argparse
import ctypes
import gzip
import hashlib
import http.client
import math
import os
import re
import select
import signal
import socket
import subprocess
import sys
import threading
import time
import urllib.request
from collections.abc import Callable
from pathlib import Path

try:
    import torch
    from torch import nn
except Exception as error:  # noqa: BLE001 - an image whose python has no PyTorch, or a broken one: one line, not a traceback
    print(
        f"PROOF FAILED: cannot import PyTorch in {sys.executable}: {type(error).__name__}: {' '.join(str(error).split())}; "
        "nothing was trained",
        flush=True,
    )
    sys.exit(1)

# The MNIST files as TensorFlow Datasets fetches them, with the sizes and SHA-256 it checks
# (tensorflow/datasets tensorflow_datasets/image_classification/mnist.py and its checksums file).
MIRROR = "https://storage.googleapis.com/cvdf-datasets/mnist/"
FILES = {
    "train-images-idx3-ubyte.gz": "440fcabf73cc546fa21475e81ea370265605f56be210a4024d2ca8f203523609",
    "train-labels-idx1-ubyte.gz": "3552534a0a558bbed6aed32b30c495cca23d567ec52cac8be1a0730e8010255c",
    "t10k-images-idx3-ubyte.gz": "8d422c7b0a1c1c79245a5bcf07fe86e33eeafee792b84584aec276f5a2dbc4e6",
    "t10k-labels-idx1-ubyte.gz": "f7ae60f92e00ec6debd23a6088c31dbd2371eca3ffa0defaefb259924204aec6",
}
BATCH = 128
# The drawn digits' difficulty (synthetic): turn, move, blanked patch and noise, chosen so that
# on the CPU the network passes 0.9 late in its 500 steps (docs/proof.md, "The drawn digits").
SYNTHETIC_DEGREES = 20
SYNTHETIC_SHIFT = 4
SYNTHETIC_PATCH = (6, 10)
SYNTHETIC_NOISE = 0.6
# CUDA's cudaErrorSystemNotReady, "system not yet initialized": on NVSwitch sizes (ND96asr_v4,
# ND96isr_H100_v5, ND96isr_H200_v5) CUDA answers it until the node's fabric manager is up
# (pytorch/pytorch#35710; microsoft/lisa#2823 on ND96asr_v4). NVIDIA's validator retries every
# 5 s, in a new process each time (gpu-operator cmd/nvidia-validator/main.go,
# defaultSleepIntervalSeconds and runCommandWithWait); so does this, for at most 120 s.
NOT_READY = re.compile(r"\b802\b|not yet initiali[sz]ed", re.IGNORECASE)
CUDA_RETRY_SECONDS = 5
CUDA_WAIT_SECONDS = 120
# A process that starts CUDA and has not finished in this long is stuck in the driver.
CUDA_PROBE_SECONDS = 120
# PyTorch's words when it was built without CUDA (torch/cuda/__init__.py, _lazy_init).
CPU_ONLY = re.compile(r"Torch not compiled with CUDA enabled")
# Training and its test pass end within --max-seconds and this: the first steps' one-time
# work (cuDNN's choice of kernels, loading CUDA's modules) and the test pass. Past it, a
# watchdog thread ends the proof (components/proof/job_deadline.py counts it).
TRAIN_GRACE_SECONDS = 60
# Where the kubelet mounts the container's termination message (its terminationMessagePath,
# /dev/termination-log by default): what is written there becomes the container status's
# message, which pulumi-kubernetes prints when the Job fails (docs/proof.md, "When it fails").
TERMINATION_LOG = Path(os.environ.get("PROOF_TERMINATION_LOG", "/dev/termination-log"))
# The kubelet keeps the file's last 4096 bytes (MaxContainerTerminationMessageLength, read with
# tail.ReadAtMost: kubernetes/kubernetes pkg/kubelet/kuberuntime/kuberuntime_container.go
# getTerminationMessage), so a longer line would lose its start, "PROOF FAILED:" with it.
TERMINATION_MESSAGE_BYTES = 4096
# torch.cuda.init() raises with CUDA's own words, where is_available() only says False.
CUDA_START = """
import torch
try:
    torch.cuda.init()
except Exception as error:
    print(f"{type(error).__name__}: {error}")
    raise SystemExit(1)
"""


class ProofFailed(Exception):
    """What stops the proof, said in one line."""


class Parser(argparse.ArgumentParser):
    """argparse, whose refusal is a ProofFailed (one line) instead of a usage text and exit status 2."""

    def error(self, message: str):  # type: ignore[override]
        raise ProofFailed(f"the command line is refused: {message}; nothing was trained")


def finish(line: str) -> None:
    """The last line: printed, and written where the kubelet reads the termination message
    (only where that file exists: the kubelet creates it, 0666, in every container)."""
    print(line, flush=True)
    try:
        if TERMINATION_LOG.is_file():
            # At most the bytes the kubelet keeps, cut at the end and on a whole character, so
            # what it keeps is the line's start: a line of 4000 characters may be 16000 bytes.
            kept = line.encode()[:TERMINATION_MESSAGE_BYTES].decode(errors="ignore")
            TERMINATION_LOG.write_bytes(kept.encode())
    except OSError:
        pass


class Watchdog:
    """Ends the proof with its one line from a thread of its own: on SIGTERM (Kubernetes stops
    a pod so at the Job's deadline), or when a phase overruns its limit. A thread, because the
    main thread may be stuck inside CUDA, where Python runs no signal handler (they run in the
    main thread, between bytecodes: Python's `signal` docs); the signal's C handler still
    writes its number to the wakeup fd this thread reads (`signal.set_wakeup_fd`)."""

    def __init__(self, clock: Callable[[], float] = time.monotonic) -> None:
        self.clock, self.began, self.note = clock, clock(), ""
        self.phase: tuple[str, float, float] | None = None  # what runs, its limit in seconds, and when that is
        self.stopped = False

    def __enter__(self) -> Watchdog:
        self.read, self.write = socket.socketpair()
        self.write.setblocking(False)
        self.old_fd = signal.set_wakeup_fd(self.write.fileno())
        self.old_handler = signal.signal(signal.SIGTERM, lambda signum, frame: None)
        self.thread = threading.Thread(target=self.watch, name="proof-watchdog", daemon=True)
        self.thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self.stopped = True
        self.poke()
        self.thread.join()
        signal.signal(signal.SIGTERM, self.old_handler)
        signal.set_wakeup_fd(self.old_fd)
        self.read.close()
        self.write.close()

    def poke(self) -> None:
        self.write.send(b"\0")  # no signal's number: look again

    def arm(self, what: str, seconds: float) -> None:
        self.phase, self.note = (what, seconds, self.clock() + seconds), ""
        self.poke()

    def disarm(self) -> None:
        self.phase = None
        self.poke()

    def watch(self) -> None:
        while not self.stopped:
            phase = self.phase
            wait = None if phase is None else max(0.0, phase[2] - self.clock())
            if select.select([self.read], [], [], wait)[0]:
                if signal.SIGTERM in self.read.recv(64):
                    now = self.phase
                    doing = f"during {now[0]}" if now else "before its training began or after it ended"
                    self.fail(
                        f"stopped by SIGTERM after {self.clock() - self.began:.0f} s, {doing}: Kubernetes stops a pod so at "
                        "its Job's deadline (activeDeadlineSeconds; the Job then fails DeadlineExceeded), or when the pod "
                        "is deleted or evicted; nothing more was trained"
                    )
            elif phase is not None and phase is self.phase and self.clock() >= phase[2]:
                self.fail(
                    f"{phase[0]} did not end within {phase[1]:g} s{self.note}: the GPU stopped answering (a hung kernel or an Xid "
                    "error: `nvidia-smi` and the node's kernel log say which); nothing more was trained"
                )

    def fail(self, reason: str) -> None:
        finish(f"PROOF FAILED: {reason}")
        os._exit(1)  # the main thread is stuck: no exception can reach it


def parse_args(argv: list[str]) -> argparse.Namespace:
    parser = Parser(description="Train MNIST on this pod's GPU, or fail saying why.")
    parser.add_argument("--max-steps", type=int, default=500, help="training steps at most (default 500)")
    parser.add_argument("--max-seconds", type=float, default=120, help="training seconds at most (default 120)")
    parser.add_argument("--min-accuracy", type=float, default=0.9, help="the least test accuracy that passes (default 0.9)")
    parser.add_argument("--data", choices=("mnist", "synthetic"), default="mnist", help="MNIST from its mirror, or digits drawn here")
    parser.add_argument("--data-dir", default=os.environ.get("MNIST_DIR", "/tmp/mnist"), help="where MNIST is kept")
    parser.add_argument("--device", choices=("cuda", "cpu"), default="cuda", help="cpu: the local check, which proves no GPU")
    parser.add_argument("--mirror", default=MIRROR, help=argparse.SUPPRESS)
    return parser.parse_args(argv)


def first_line(error: BaseException) -> str:
    """An exception as one line: its type and the first line of what it says."""
    said = str(error).strip().splitlines()
    return f"{type(error).__name__}: {said[0]}" if said else type(error).__name__


def cuda_start_error(code: str = CUDA_START, timeout: float = CUDA_PROBE_SECONDS) -> str | None:
    """None when CUDA starts in a new Python process, else CUDA's words, in one line. A new
    process each time: PyTorch counts CUDA's devices once per process and keeps the answer
    (c10/cuda/CUDAFunctions.cpp, device_count's static), so a CUDA that was not ready stays
    unavailable in the process that asked. A process that does not finish is a driver that
    hangs: that stops the proof at once."""
    try:
        done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        raise ProofFailed(
            f"CUDA did not start within {timeout:g} s (torch.cuda.init() in a new process never returned): the GPU or its "
            "driver hangs (a GPU fallen off the bus, an Xid error: `nvidia-smi` and the node's kernel log say which); "
            "nothing was trained"
        ) from None
    if done.returncode == 0:
        return None
    said = done.stdout.strip() or (done.stderr.strip().splitlines() or [""])[-1]
    return " ".join(said.split()) or f"a Python process that starts CUDA ended with exit status {done.returncode}"


def wait_for_cuda(
    start_error: Callable[[], str | None] = cuda_start_error,
    clock: Callable[[], float] = time.monotonic,
    sleep: Callable[[float], None] = time.sleep,
    limit: float = CUDA_WAIT_SECONDS,
) -> None:
    """Returns once CUDA starts. While it says the system is not yet initialised, tries again
    every 5 s for at most `limit` seconds; any other error stops the proof at once, saying
    which of the causes it is."""
    began = clock()
    while (error := start_error()) is not None:
        waited = clock() - began
        if CPU_ONLY.search(error):
            raise ProofFailed(
                f"this PyTorch {torch.__version__} is built without CUDA ({error}): mnistJob.image must carry a CUDA build "
                "of PyTorch, as the default image does; nothing was trained"
            )
        if not NOT_READY.search(error):
            raise ProofFailed(
                f"no CUDA GPU is visible to PyTorch {torch.__version__} (CUDA {torch.version.cuda}): {error}; the pod got no "
                "nvidia.com/gpu, or the node's driver is missing or older than this CUDA needs; nothing was trained"
            )
        if waited >= limit:
            # cudaErrorSystemNotReady (802): "verify ... all required driver daemons are actively running" (CUDA
            # Runtime API, cudaError). The fabric manager checks the loaded driver's version at start "and if the
            # loaded driver stack version is not compatible, aborts the process" (NVIDIA Fabric Manager User Guide).
            raise ProofFailed(
                f"CUDA still answered error 802 after {waited:.0f} s: {error}; on NVSwitch sizes CUDA waits for the node's "
                "NVIDIA fabric manager (nvidia-fabricmanager), and an 802 that outlasts its start is usually for good: "
                "the fabric manager is not running, or its version is not the driver's, which it must match exactly "
                "(`systemctl status nvidia-fabricmanager` and `nvidia-smi` on the node say which); nothing was trained"
            )
        print(f"CUDA is not ready yet ({error}); trying again in {CUDA_RETRY_SECONDS} s", flush=True)
        sleep(CUDA_RETRY_SECONDS)


def nvml_driver() -> str:
    """The driver's version, through the NVIDIA management library the container runtime
    mounts; "unknown" where it is not there."""
    try:
        nvml = ctypes.CDLL("libnvidia-ml.so.1")
    except OSError:
        return "unknown"
    text = ctypes.create_string_buffer(96)
    if nvml.nvmlInit_v2() != 0:
        return "unknown"
    driver = text.value.decode() if nvml.nvmlSystemGetDriverVersion(text, 96) == 0 else "unknown"
    nvml.nvmlShutdown()
    return driver


def mig_slice(name: str) -> str:
    """The MIG slice in CUDA's name for a device ("NVIDIA A100-SXM4-80GB MIG 1g.10gb": 1g.10gb;
    NVIDIA's MIG user guide, "MIG Device Names"), or "" for a whole GPU. CUDA's name says it
    however the GPU reached the pod: under the GPU Operator's CDI mode (its default since
    v25.10) no NVIDIA_VISIBLE_DEVICES names the slice."""
    found = re.search(r" MIG (\S+)$", name)
    return found.group(1) if found else ""


def the_one_gpu(cuda=torch.cuda):
    """The properties of the one device CUDA shows this process. The pod asked for one
    nvidia.com/gpu: more than one visible means the GPUs are not isolated."""
    try:
        cuda.init()
    except RuntimeError as error:
        raise ProofFailed(f"CUDA started in a new process but not in this one: {first_line(error)}") from error
    count = cuda.device_count()
    if count != 1:
        names = ", ".join(cuda.get_device_name(i) for i in range(count))
        raise ProofFailed(
            f"{count} CUDA devices are visible ({names}), expected exactly one: the pod asked for one nvidia.com/gpu, "
            "so the GPUs are not isolated (the node gave it devices the device plugin did not allocate)"
        )
    return cuda.get_device_properties(0)


def describe(props, mig: str) -> None:
    print(
        f"gpu: {props.name}, compute capability {props.major}.{props.minor}, {props.total_memory / 2**30:.1f} GiB, "
        f"{props.multi_processor_count} SMs",
        flush=True,
    )
    print(
        f"driver {nvml_driver()}, CUDA {torch.version.cuda} (PyTorch {torch.__version__}, kernels for "
        f"{' '.join(torch.cuda.get_arch_list())}); MIG slice: {mig or 'none'}",
        flush=True,
    )


def use_gpu(watchdog: Watchdog) -> tuple[torch.device, str]:
    """The CUDA GPU, checked the way NVIDIA's validators check one: CUDA starts, and a kernel
    runs on it and gives the right answer. Returns the device and how to name it in the summary."""
    wait_for_cuda()
    watchdog.arm("CUDA's start in this process and a matrix product on the GPU", CUDA_PROBE_SECONDS)
    props = the_one_gpu()
    capability = f"{props.major}.{props.minor}"
    describe(props, mig_slice(props.name))
    device = torch.device("cuda", 0)
    try:
        a = torch.arange(1.0, 65.0, device=device).reshape(8, 8)
        ok = bool(torch.allclose((a @ a).cpu(), a.cpu() @ a.cpu()))
    except RuntimeError as error:  # "no kernel image is available for execution on the device"
        raise ProofFailed(f"a CUDA kernel failed on {props.name} (compute capability {capability}): {error}".replace("\n", " ")) from error
    if not ok:
        raise ProofFailed(f"a matrix product on {props.name} gave a wrong answer")
    watchdog.disarm()
    return device, f"{props.name} (compute capability {capability})"


def cpu_limit(cgroup: Path) -> float | None:
    """The pod's CPU limit, in CPUs, from its cgroup: v2's cpu.max ("$MAX $PERIOD", "max" for
    none) or v1's cpu/cpu.cfs_quota_us over cpu.cfs_period_us (-1 for none); None without one."""
    try:
        quota, period = (cgroup / "cpu.max").read_text().split()
    except (OSError, ValueError):
        try:
            quota, period = ((cgroup / "cpu" / name).read_text().strip() for name in ("cpu.cfs_quota_us", "cpu.cfs_period_us"))
        except OSError:
            return None
    try:
        return int(quota) / int(period) if int(quota) > 0 and int(period) > 0 else None
    except ValueError:  # "max"
        return None


def bound_cpu_threads(cgroup: Path = Path("/sys/fs/cgroup")) -> int:
    """PyTorch starts a thread per core of the node, not of the pod's CPU limit; past the limit
    they are throttled. So no more threads than the limit's whole CPUs (at least one)."""
    threads, limit = torch.get_num_threads(), cpu_limit(cgroup)
    if limit is not None and limit < threads:
        threads = max(1, math.floor(limit))
        torch.set_num_threads(threads)
    print(f"cpu: {threads} threads (CPU limit: {'none' if limit is None else f'{limit:g}'})", flush=True)
    return threads


def fetch_mnist(data_dir: Path, mirror: str) -> dict[str, bytes]:
    """The four MNIST files, downloaded once and checked against their SHA-256."""
    try:
        data_dir.mkdir(parents=True, exist_ok=True)
    except OSError as error:
        raise ProofFailed(f"cannot create --data-dir {data_dir}: {error}") from error
    found = {}
    for name, sha256 in FILES.items():
        path = data_dir / name
        if not path.exists() or hashlib.sha256(path.read_bytes()).hexdigest() != sha256:
            try:
                with urllib.request.urlopen(mirror + name, timeout=60) as answer:
                    body = answer.read()
            except (OSError, http.client.HTTPException) as error:  # a download cut short is an IncompleteRead, no OSError
                raise ProofFailed(
                    f"cannot download {mirror}{name}: {error}; with no way out, set aks-gpu:mnistJob.egress: false to train on drawn digits"
                ) from error
            try:
                path.write_bytes(body)
            except OSError as error:
                raise ProofFailed(f"cannot keep {path}: {error}") from error
        got = hashlib.sha256(path.read_bytes()).hexdigest()
        if got != sha256:
            raise ProofFailed(f"{mirror}{name} has SHA-256 {got}, expected {sha256}")
        found[name] = gzip.decompress(path.read_bytes())
    return found


def idx(raw: bytes, dims: int) -> torch.Tensor:
    """An IDX file (MNIST's format): a 4-byte magic, one big-endian size per dimension, then bytes."""
    shape = [int.from_bytes(raw[4 + 4 * i : 8 + 4 * i], "big") for i in range(dims)]
    return torch.frombuffer(bytearray(raw[4 + 4 * dims :]), dtype=torch.uint8).reshape(shape)


def mnist(data_dir: Path, mirror: str) -> tuple[torch.Tensor, ...]:
    files = fetch_mnist(data_dir, mirror)
    images = [idx(files[f"{part}-images-idx3-ubyte.gz"], 3).float().div(255).unsqueeze(1) for part in ("train", "t10k")]
    labels = [idx(files[f"{part}-labels-idx1-ubyte.gz"], 1).long() for part in ("train", "t10k")]
    return images[0], labels[0], images[1], labels[1]


def synthetic(train: int = 20_000, test: int = 2_000) -> tuple[torch.Tensor, ...]:
    """Digits drawn here, for a pod with no egress: ten fixed 28x28 stroke patterns, each
    sample one of them turned by up to 20 degrees, moved by up to 4 pixels either way, with a
    patch of 6 to 10 pixels blanked out and strong noise (SYNTHETIC_NOISE). Hard enough that
    the network passes --min-accuracy 0.9 only late in its 500 steps (docs/proof.md, "The
    drawn digits"), so passing says it trained; it proves the GPU, not a data set."""
    gen = torch.Generator().manual_seed(0)
    shapes = (torch.rand(10, 1, 7, 7, generator=gen) > 0.5).float()
    shapes = nn.functional.interpolate(shapes, size=(20, 20), mode="nearest")

    def draw(count: int) -> tuple[torch.Tensor, torch.Tensor]:
        labels = torch.randint(0, 10, (count,), generator=gen)
        canvas = torch.zeros(count, 1, 28, 28)
        canvas[:, :, 4:24, 4:24] = shapes[labels]
        # One affine map per sample: a turn, and a move in grid_sample's units (14 pixels = 1).
        angle = (torch.rand(count, generator=gen) * 2 - 1) * math.radians(SYNTHETIC_DEGREES)
        move = (torch.rand(count, 2, generator=gen) * 2 - 1) * SYNTHETIC_SHIFT / 14
        cos, sin = angle.cos(), angle.sin()
        theta = torch.stack([torch.stack([cos, -sin, move[:, 0]], 1), torch.stack([sin, cos, move[:, 1]], 1)], 1)
        grid = nn.functional.affine_grid(theta, [count, 1, 28, 28], align_corners=False)
        images = nn.functional.grid_sample(canvas, grid, align_corners=False)
        # A square patch blanked out, centred anywhere on the image.
        size = torch.randint(SYNTHETIC_PATCH[0], SYNTHETIC_PATCH[1] + 1, (count, 1), generator=gen)
        corner = torch.randint(0, 28, (count, 2), generator=gen) - size // 2
        span = torch.arange(28)
        rows = (span >= corner[:, :1]) & (span < corner[:, :1] + size)
        cols = (span >= corner[:, 1:]) & (span < corner[:, 1:] + size)
        images = images.masked_fill((rows[:, :, None] & cols[:, None, :]).unsqueeze(1), 0.0)
        return (images + SYNTHETIC_NOISE * torch.randn(images.shape, generator=gen)).clamp(0, 1), labels

    return (*draw(train), *draw(test))


def network() -> nn.Module:
    """PyTorch's examples/mnist network, without dropout."""
    return nn.Sequential(
        nn.Conv2d(1, 32, 3),
        nn.ReLU(),
        nn.Conv2d(32, 64, 3),
        nn.ReLU(),
        nn.MaxPool2d(2),
        nn.Flatten(),
        nn.Linear(9216, 128),
        nn.ReLU(),
        nn.Linear(128, 10),
    )


def train(model: nn.Module, images: torch.Tensor, labels: torch.Tensor, args: argparse.Namespace, watchdog: Watchdog) -> int:
    """Trains until --max-steps or --max-seconds; returns the steps taken. --max-seconds is
    read between steps: a step that never returns is the watchdog's (run arms it)."""
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
    order = torch.randperm(len(images), generator=torch.Generator().manual_seed(1)).to(images.device)
    start, step = time.monotonic(), 0
    while step < args.max_steps and time.monotonic() - start < args.max_seconds:
        batch = order[(step * BATCH) % len(images) :][:BATCH]
        loss = nn.functional.cross_entropy(model(images[batch]), labels[batch])
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        step += 1
        watchdog.note = f" (it was past step {step})"
        if step % 100 == 0:
            print(f"step {step}: loss {loss.item():.4f}", flush=True)
    return step


@torch.no_grad()
def accuracy(model: nn.Module, images: torch.Tensor, labels: torch.Tensor) -> float:
    right = sum(int((model(images[i : i + 1000]).argmax(1) == labels[i : i + 1000]).sum()) for i in range(0, len(images), 1000))
    return right / len(images)


def run(args: argparse.Namespace, watchdog: Watchdog) -> str:
    if not 0 < args.min_accuracy <= 1 or args.max_steps < 1 or args.max_seconds <= 0:
        raise ProofFailed("expected --min-accuracy in (0, 1], --max-steps >= 1 and --max-seconds > 0")
    torch.manual_seed(0)
    if args.device == "cuda":
        device, gpu = use_gpu(watchdog)
    else:
        device, gpu = torch.device("cpu"), "none (--device cpu: a local check, which proves no GPU)"
        print(f"gpu: none; training on the CPU as asked (PyTorch {torch.__version__})", flush=True)
    bound_cpu_threads()
    data = mnist(Path(args.data_dir), args.mirror) if args.data == "mnist" else synthetic()
    train_x, train_y, test_x, test_y = (t.to(device) for t in data)
    print(f"data: {args.data}, {len(train_x)} training and {len(test_x)} test images", flush=True)
    model = network().to(device)
    start = time.monotonic()
    limit = args.max_seconds + TRAIN_GRACE_SECONDS
    watchdog.arm(f"training and its test pass (--max-seconds {args.max_seconds:g}, and {TRAIN_GRACE_SECONDS} s more)", limit)
    steps = train(model, train_x, train_y, args, watchdog)
    model.eval()
    score = accuracy(model, test_x, test_y)
    watchdog.disarm()
    seconds = time.monotonic() - start
    if score < args.min_accuracy:
        raise ProofFailed(f"test accuracy {score:.4f} after {steps} steps is under --min-accuracy {args.min_accuracy}")
    return f"PROOF OK gpu={gpu} data={args.data} steps={steps} accuracy={score:.4f} seconds={seconds:.1f}"


def main(argv: list[str]) -> int:
    with Watchdog() as watchdog:
        try:
            line = run(parse_args(argv), watchdog)
        except ProofFailed as failed:
            finish(f"PROOF FAILED: {failed}")
            return 1
        except Exception as error:  # noqa: BLE001 - the unforeseen (a CUDA error mid-run, out of memory, a lost device): one line, never a traceback
            finish(f"PROOF FAILED: {first_line(error)}")
            return 1
        finish(line)
        return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
