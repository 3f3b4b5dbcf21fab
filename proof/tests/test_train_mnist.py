"""The proof script as a user meets it, run by `make proof-local` with the PyTorch the Job's
image carries: it refuses to train without a GPU unless told to, trains on the CPU when told,
fails under its accuracy threshold, checks what it downloads, and ends with one line, however
it fails.

The real MNIST mirror is out of reach from where these run; a local HTTP server on 127.0.0.1
serves small IDX files in MNIST's format instead, and the script is pointed at it. No GPU is
here either: what CUDA says (not ready, ready, one device or two, a MIG slice) comes from fakes
of CUDA's start and of torch.cuda, and time from a fake clock."""

from __future__ import annotations

import gzip
import hashlib
import http.server
import os
import re
import shutil
import signal
import subprocess
import sys
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from types import SimpleNamespace

import pytest
import torch

SCRIPT = Path(__file__).resolve().parents[1] / "train_mnist.py"
ROOT = SCRIPT.parents[1]
sys.path.insert(0, str(SCRIPT.parent))
import train_mnist  # noqa: E402

SUMMARY = re.compile(r"^PROOF OK gpu=.+ data=(mnist|synthetic) steps=\d+ accuracy=[01]\.\d{4} seconds=\d+\.\d$")


def run(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, str(SCRIPT), *args], capture_output=True, text=True, timeout=600)


@pytest.mark.skipif(torch.cuda.is_available(), reason="this machine has a GPU")
def test_without_a_gpu_it_fails_at_once_in_one_line_and_trains_nothing():
    done = run("--data", "synthetic")
    assert done.returncode == 1
    lines = done.stdout.splitlines()
    assert lines == [lines[-1]] and lines[-1].startswith("PROOF FAILED: no CUDA GPU is visible to PyTorch")
    assert ": RuntimeError: " in lines[-1], "CUDA's own words, as torch.cuda.init() raised them"
    assert "step" not in done.stdout and "Traceback" not in done.stdout + done.stderr


def test_on_the_cpu_when_told_it_trains_the_drawn_digits_and_ends_with_one_summary_line():
    done = run("--device", "cpu", "--data", "synthetic", "--max-steps", "20", "--min-accuracy", "0.05")
    assert done.returncode == 0, done.stdout + done.stderr
    last = done.stdout.splitlines()[-1]
    assert SUMMARY.match(last), last
    assert "gpu=none (--device cpu" in last and "steps=20 " in last


def test_a_tenth_of_the_steps_does_not_reach_the_mark_on_the_drawn_digits():
    """Passing 0.9 says the network trained: after 50 of its 500 steps it has learnt (far above
    chance, 0.1) but is well under the mark (docs/design/proof.md, "The drawn digits")."""
    done = run("--device", "cpu", "--data", "synthetic", "--max-steps", "50")
    assert done.returncode == 1
    said = re.fullmatch(r"PROOF FAILED: test accuracy (0\.\d{4}) after 50 steps is under --min-accuracy 0\.9", done.stdout.splitlines()[-1])
    assert said is not None, done.stdout
    assert 0.2 < float(said[1]) < 0.8


def test_under_its_accuracy_threshold_the_job_fails():
    done = run("--device", "cpu", "--data", "synthetic", "--max-steps", "1", "--min-accuracy", "0.99")
    assert done.returncode == 1
    assert re.fullmatch(r"PROOF FAILED: test accuracy 0\.\d{4} after 1 steps is under --min-accuracy 0\.99", done.stdout.splitlines()[-1])


def test_a_time_limit_stops_training_before_its_steps():
    done = run("--device", "cpu", "--data", "synthetic", "--max-steps", "100000", "--max-seconds", "3", "--min-accuracy", "0.05")
    assert done.returncode == 0, done.stdout + done.stderr
    steps = int(re.search(r"steps=(\d+)", done.stdout.splitlines()[-1]).group(1))
    assert 1 <= steps < 100000


def idx(array: torch.Tensor, magic: int) -> bytes:
    """An IDX file as MNIST's are: magic, big-endian sizes, unsigned bytes."""
    head = magic.to_bytes(4, "big") + b"".join(n.to_bytes(4, "big") for n in array.shape)
    return gzip.compress(head + array.to(torch.uint8).numpy().tobytes())


@pytest.fixture
def mirror(tmp_path: Path):
    """Small MNIST-shaped files (the drawn digits) on a local server, and their SHA-256."""
    train_x, train_y, test_x, test_y = train_mnist.synthetic(train=2000, test=500)
    files = {
        "train-images-idx3-ubyte.gz": idx((train_x[:, 0] * 255).round(), 2051),
        "train-labels-idx1-ubyte.gz": idx(train_y, 2049),
        "t10k-images-idx3-ubyte.gz": idx((test_x[:, 0] * 255).round(), 2051),
        "t10k-labels-idx1-ubyte.gz": idx(test_y, 2049),
    }
    served = tmp_path / "served"
    served.mkdir()
    for name, data in files.items():
        (served / name).write_bytes(data)
    handler = lambda *a: http.server.SimpleHTTPRequestHandler(*a, directory=str(served))  # noqa: E731
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    yield f"http://127.0.0.1:{server.server_port}/", {n: hashlib.sha256(d).hexdigest() for n, d in files.items()}
    server.shutdown()
    server.server_close()


def test_downloaded_files_are_checked_parsed_trained_on_and_kept(mirror, tmp_path, monkeypatch, capsys):
    url, sums = mirror
    monkeypatch.setattr(train_mnist, "FILES", sums)
    # The drawn digits are hard (synthetic): 40 steps learn them only in part.
    args = [
        "--device",
        "cpu",
        "--data",
        "mnist",
        "--min-accuracy",
        "0.05",
        "--data-dir",
        str(tmp_path / "mnist"),
        "--mirror",
        url,
        "--max-steps",
        "40",
    ]
    assert train_mnist.main(args) == 0
    out = capsys.readouterr().out
    assert "data: mnist, 2000 training and 500 test images" in out and SUMMARY.match(out.splitlines()[-1])
    # Kept: a second run needs no mirror.
    assert train_mnist.main([*args[:-4], "--mirror", "http://127.0.0.1:9/", "--max-steps", "1", "--min-accuracy", "0.01"]) == 0


def test_a_file_whose_sha256_differs_is_refused_in_one_line(mirror, tmp_path, capsys):
    url, _ = mirror  # the served files are not MNIST: the script's own checksums refuse them
    assert train_mnist.main(["--device", "cpu", "--data-dir", str(tmp_path / "m"), "--mirror", url]) == 1
    last = capsys.readouterr().out.splitlines()[-1]
    assert re.fullmatch(rf"PROOF FAILED: {re.escape(url)}train-images-idx3-ubyte.gz has SHA-256 [0-9a-f]{{64}}, expected 440fcabf\w+", last)


def test_without_egress_the_download_fails_in_one_line_naming_the_way_out(tmp_path, capsys):
    assert train_mnist.main(["--device", "cpu", "--data-dir", str(tmp_path / "m"), "--mirror", "http://127.0.0.1:9/"]) == 1
    last = capsys.readouterr().out.splitlines()[-1]
    assert last.startswith("PROOF FAILED: cannot download http://127.0.0.1:9/train-images-idx3-ubyte.gz") and "egress: false" in last


# --------------------------------------------------------------------------- every failure, one line


def last_line(capsys) -> str:
    out = capsys.readouterr().out
    assert "Traceback" not in out
    return out.splitlines()[-1]


def test_a_data_directory_that_cannot_be_created_fails_in_one_line(tmp_path, capsys):
    (tmp_path / "a-file").write_text("")
    assert train_mnist.main(["--device", "cpu", "--data-dir", str(tmp_path / "a-file" / "mnist")]) == 1
    assert last_line(capsys).startswith(f"PROOF FAILED: cannot create --data-dir {tmp_path}/a-file/mnist: [Errno")


class CutShort(http.server.BaseHTTPRequestHandler):
    """Promises 1000 bytes, sends 10 and hangs up: what a dropped connection looks like."""

    def do_GET(self):
        self.send_response(200)
        self.send_header("Content-Length", "1000")
        self.end_headers()
        self.wfile.write(b"x" * 10)

    def log_message(self, *args):
        pass


@contextmanager
def serving(handler) -> Iterator[str]:
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        yield f"http://127.0.0.1:{server.server_port}/"
    finally:
        server.shutdown()
        server.server_close()


def test_a_download_cut_short_fails_in_one_line(tmp_path, capsys):
    """http.client.IncompleteRead is no OSError: it reached the log as a traceback."""
    with serving(CutShort) as url:
        assert train_mnist.main(["--device", "cpu", "--data-dir", str(tmp_path / "m"), "--mirror", url]) == 1
    assert last_line(capsys) == (
        f"PROOF FAILED: cannot download {url}train-images-idx3-ubyte.gz: IncompleteRead(10 bytes read, 990 more expected); "
        "with no way out, set aks-gpu:mnistJob.egress: false to train on drawn digits"
    )


def test_anything_unforeseen_fails_in_one_line_naming_its_type(monkeypatch, capsys):
    def broken(*args, **kwargs):
        raise ValueError("a bug nobody foresaw\nand its second line")

    monkeypatch.setattr(train_mnist, "synthetic", broken)
    assert train_mnist.main(["--device", "cpu", "--data", "synthetic"]) == 1
    assert last_line(capsys) == "PROOF FAILED: ValueError: a bug nobody foresaw"


# --------------------------------------------------------------------------- CUDA not ready yet

NOT_READY = (
    "RuntimeError: Unexpected error from cudaGetDeviceCount(). Did you run some cuda functions before calling "
    "NumCudaDevices() that might have already set an error? Error 802: system not yet initialized"
)


class FakeTime:
    """A clock that moves only when the script sleeps."""

    def __init__(self):
        self.now, self.slept = 1000.0, []

    def clock(self) -> float:
        return self.now

    def sleep(self, seconds: float) -> None:
        self.slept.append(seconds)
        self.now += seconds


def test_cuda_not_ready_is_tried_again_every_five_seconds_until_it_starts(capsys):
    answers, time = iter([NOT_READY, NOT_READY, None]), FakeTime()
    train_mnist.wait_for_cuda(lambda: next(answers), time.clock, time.sleep)
    assert time.slept == [5, 5]
    assert capsys.readouterr().out.splitlines() == [f"CUDA is not ready yet ({NOT_READY}); trying again in 5 s"] * 2


def test_cuda_never_ready_fails_after_120_seconds_in_one_line_with_cudas_words():
    tries, time = [], FakeTime()
    with pytest.raises(train_mnist.ProofFailed) as failed:
        train_mnist.wait_for_cuda(lambda: tries.append(time.now) or NOT_READY, time.clock, time.sleep)
    assert len(tries) == 25 and time.now - 1000 == 120
    said = str(failed.value)
    assert said.startswith(f"CUDA still answered error 802 after 120 s: {NOT_READY}; on NVSwitch sizes CUDA waits")
    assert "usually for good: the fabric manager is not running, or its version is not the driver's" in said
    assert "\n" not in said


def test_another_cuda_error_stops_at_once_with_its_words():
    time = FakeTime()
    said = "RuntimeError: The NVIDIA driver on your system is too old (found version 11040)."
    with pytest.raises(train_mnist.ProofFailed, match=re.escape(f"(CUDA {torch.version.cuda}): {said}; the pod got no")):
        train_mnist.wait_for_cuda(lambda: said, time.clock, time.sleep)
    assert time.slept == []


def test_a_pytorch_built_without_cuda_says_so_not_that_the_pod_got_no_gpu():
    time = FakeTime()
    said = "AssertionError: Torch not compiled with CUDA enabled"
    with pytest.raises(train_mnist.ProofFailed) as failed:
        train_mnist.wait_for_cuda(lambda: said, time.clock, time.sleep)
    assert str(failed.value) == (
        f"this PyTorch {torch.__version__} is built without CUDA ({said}): mnistJob.image must carry a CUDA build "
        "of PyTorch, as the default image does; nothing was trained"
    )
    assert time.slept == []


def test_a_cuda_start_that_never_returns_says_the_driver_hangs():
    """A real process that does not finish, as a torch.cuda.init() stuck in the driver."""
    with pytest.raises(train_mnist.ProofFailed) as failed:
        train_mnist.cuda_start_error("import time; time.sleep(60)", timeout=1)
    assert str(failed.value).startswith(
        "CUDA did not start within 1 s (torch.cuda.init() in a new process never returned): the GPU or its driver hangs"
    )


# --------------------------------------------------------------------------- what it ran on


class FakeCuda:
    """torch.cuda as the script reads it, showing these devices."""

    def __init__(self, *names: str):
        self.names = names

    def init(self) -> None:
        pass

    def device_count(self) -> int:
        return len(self.names)

    def get_device_name(self, index: int) -> str:
        return self.names[index]

    def get_device_properties(self, index: int) -> SimpleNamespace:
        return SimpleNamespace(name=self.names[index], major=8, minor=0, total_memory=10 * 2**30, multi_processor_count=14)


@pytest.mark.parametrize(
    "name, slice_",
    [
        ("NVIDIA A100-SXM4-80GB MIG 1g.10gb", "1g.10gb"),
        ("NVIDIA H100 80GB HBM3 MIG 3g.40gb", "3g.40gb"),
        ("NVIDIA A100-SXM4-40GB MIG 1c.3g.20gb", "1c.3g.20gb"),
        ("NVIDIA A100 80GB PCIe", ""),
        ("Tesla T4", ""),
    ],
)
def test_the_mig_slice_is_named_from_cudas_device_name_whatever_the_environment(name, slice_, monkeypatch, capsys):
    monkeypatch.delenv("NVIDIA_VISIBLE_DEVICES", raising=False)  # under CDI, nothing there names the slice
    props = train_mnist.the_one_gpu(FakeCuda(name))
    train_mnist.describe(props, train_mnist.mig_slice(props.name))
    assert capsys.readouterr().out.splitlines()[-1].endswith(f"; MIG slice: {slice_ or 'none'}")


def test_two_visible_devices_fail_naming_how_many_and_which():
    with pytest.raises(train_mnist.ProofFailed) as failed:
        train_mnist.the_one_gpu(FakeCuda("NVIDIA H100 80GB HBM3", "NVIDIA H100 80GB HBM3"))
    assert str(failed.value).startswith(
        "2 CUDA devices are visible (NVIDIA H100 80GB HBM3, NVIDIA H100 80GB HBM3), expected exactly one: the pod asked for one nvidia.com/gpu"
    )


@pytest.mark.parametrize(
    "files, threads",
    [
        ({"cpu.max": "400000 100000\n"}, 4),  # cgroup v2: the Job's limit of 4 CPUs
        ({"cpu.max": "250000 100000\n"}, 2),  # 2.5 CPUs: the whole ones
        ({"cpu.max": "50000 100000\n"}, 1),  # half a CPU: still one thread
        ({"cpu.max": "max 100000\n"}, 96),  # no limit
        ({"cpu/cpu.cfs_quota_us": "300000\n", "cpu/cpu.cfs_period_us": "100000\n"}, 3),  # cgroup v1
        ({"cpu/cpu.cfs_quota_us": "-1\n", "cpu/cpu.cfs_period_us": "100000\n"}, 96),  # v1, no limit
        ({"cpu.max": "20000000 100000\n"}, 96),  # a limit above the node's cores changes nothing
        ({}, 96),  # no cgroup to read
    ],
)
def test_the_cpu_threads_stay_within_the_pods_cpu_limit(files, threads, tmp_path, monkeypatch, capsys):
    for name, text in files.items():
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text(text)
    told = []
    monkeypatch.setattr(train_mnist.torch, "get_num_threads", lambda: 96)  # a node's cores
    monkeypatch.setattr(train_mnist.torch, "set_num_threads", told.append)
    assert train_mnist.bound_cpu_threads(tmp_path) == threads
    assert told == ([] if threads == 96 else [threads])
    assert capsys.readouterr().out.startswith(f"cpu: {threads} threads (CPU limit: ")


# --------------------------------------------------------------------------- make proof-gpu


@pytest.mark.skipif(torch.cuda.is_available() or not shutil.which("make"), reason="this machine has a GPU, or no make")
def test_make_proof_gpu_without_a_gpu_fails_in_one_line_and_keeps_its_log(tmp_path):
    log = tmp_path / "proof-gpu.log"
    done = subprocess.run(
        ["make", "--no-print-directory", "proof-gpu", f"PYTHON={sys.executable}", "PROOF_GPU_DATA=synthetic", f"PROOF_GPU_LOG={log}"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert done.returncode != 0
    [failed] = [line for line in done.stdout.splitlines() if line.startswith("PROOF")]
    assert failed.startswith("PROOF FAILED: no CUDA GPU is visible to PyTorch") and "--device cuda --data synthetic" in done.stdout
    assert log.read_text().splitlines()[-1] == failed


# --------------------------------------------------------------------------- the last line, wherever it ends


@pytest.fixture
def termination_log(tmp_path, monkeypatch) -> Path:
    """The file the kubelet creates at the container's terminationMessagePath."""
    path = tmp_path / "termination-log"
    path.write_text("")
    monkeypatch.setattr(train_mnist, "TERMINATION_LOG", path)
    monkeypatch.setenv("PROOF_TERMINATION_LOG", str(path))
    return path


def test_the_last_line_is_also_the_termination_message_pulumi_up_prints(termination_log, capsys):
    assert train_mnist.main(["--device", "cpu", "--data", "synthetic", "--max-steps", "1", "--min-accuracy", "0.99"]) == 1
    assert termination_log.read_text() == last_line(capsys)
    assert train_mnist.main(["--device", "cpu", "--data", "synthetic", "--max-steps", "1", "--min-accuracy", "0.01"]) == 0
    assert termination_log.read_text() == last_line(capsys) and termination_log.read_text().startswith("PROOF OK gpu=none")


def test_without_the_kubelets_file_nothing_is_written(tmp_path, monkeypatch, capsys):
    """Run by hand, as root even, the script creates no /dev/termination-log."""
    absent = tmp_path / "termination-log"
    monkeypatch.setattr(train_mnist, "TERMINATION_LOG", absent)
    assert train_mnist.main(["--device", "cpu", "--data", "synthetic", "--max-steps", "1", "--min-accuracy", "0.99"]) == 1
    assert not absent.exists() and last_line(capsys).startswith("PROOF FAILED: test accuracy")


def test_a_refused_command_line_fails_in_one_line(termination_log, capsys):
    """argparse would print its usage and exit with status 2, outside the one line."""
    assert train_mnist.main(["--max-steps", "many"]) == 1
    out, err = capsys.readouterr()
    assert out.splitlines() == [
        "PROOF FAILED: the command line is refused: argument --max-steps: invalid int value: 'many'; nothing was trained"
    ]
    assert err == "" and termination_log.read_text() == out.splitlines()[-1]


def running(termination_log: Path, *args: str, code: str | None = None) -> subprocess.Popen[str]:
    command = [sys.executable, "-c", code] if code else [sys.executable, str(SCRIPT)]
    env = {**os.environ, "PROOF_TERMINATION_LOG": str(termination_log), "PYTHONUNBUFFERED": "1"}
    return subprocess.Popen([*command, *args], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)


def test_sigterm_at_the_jobs_deadline_ends_in_one_line_naming_it(termination_log):
    """Kubernetes stops the pod with SIGTERM when the Job passes activeDeadlineSeconds."""
    proof = running(termination_log, "--device", "cpu", "--data", "synthetic", "--max-steps", "100000", "--max-seconds", "600")
    assert proof.stdout is not None
    # A step's loss is printed from inside the training loop: the signal then lands during
    # training, whatever the machine's speed ("data: ..." comes before the phase begins).
    for line in proof.stdout:
        if line.startswith("step "):
            break
    proof.send_signal(signal.SIGTERM)
    out, err = proof.communicate(timeout=60)
    assert proof.returncode == 1, out + err
    last = out.splitlines()[-1]
    assert re.fullmatch(
        r"PROOF FAILED: stopped by SIGTERM after \d+ s, during training and its test pass \(--max-seconds 600, and 60 s more\): "
        r"Kubernetes stops a pod so at its Job's deadline \(activeDeadlineSeconds; the Job then fails DeadlineExceeded\), "
        r"or when the pod is deleted or evicted; nothing more was trained",
        last,
    ), last
    assert termination_log.read_text() == last and "Traceback" not in out + err


def test_a_gpu_that_stops_answering_mid_training_is_ended_by_the_watchdog(termination_log):
    """A step that never returns: --max-seconds is read between steps, so only the watchdog
    thread can end it, with the line (here a second's grace, and a step that sleeps)."""
    code = (
        f"import sys, time; sys.path.insert(0, {str(SCRIPT.parent)!r}); import train_mnist as t; "
        "t.TRAIN_GRACE_SECONDS = 1; t.train = lambda *a: time.sleep(600); sys.exit(t.main(sys.argv[1:]))"
    )
    proof = running(termination_log, "--device", "cpu", "--data", "synthetic", "--max-seconds", "1", code=code)
    out, err = proof.communicate(timeout=300)
    assert proof.returncode == 1, out + err
    assert out.splitlines()[-1] == (
        "PROOF FAILED: training and its test pass (--max-seconds 1, and 1 s more) did not end within 2 s: the GPU stopped "
        "answering (a hung kernel or an Xid error: `nvidia-smi` and the node's kernel log say which); nothing more was trained"
    )
    assert termination_log.read_text() == out.splitlines()[-1]
