"""The proof script as a user meets it, run by `make proof-local` with the PyTorch the Job's
image carries: it refuses to train without a GPU unless told to, trains on the CPU when told,
fails under its accuracy threshold, checks what it downloads, and ends with one line.

The real MNIST mirror is out of reach from where these run; a local HTTP server on 127.0.0.1
serves small IDX files in MNIST's format instead, and the script is pointed at it."""

from __future__ import annotations

import gzip
import hashlib
import http.server
import re
import subprocess
import sys
import threading
from pathlib import Path

import pytest
import torch

SCRIPT = Path(__file__).resolve().parents[1] / "train_mnist.py"
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
    assert "step" not in done.stdout


def test_on_the_cpu_when_told_it_trains_the_drawn_digits_and_ends_with_one_summary_line():
    done = run("--device", "cpu", "--data", "synthetic", "--max-steps", "60")
    assert done.returncode == 0, done.stdout + done.stderr
    last = done.stdout.splitlines()[-1]
    assert SUMMARY.match(last), last
    assert "gpu=none (--device cpu" in last and "steps=60 " in last
    assert float(re.search(r"accuracy=(\S+)", last).group(1)) >= 0.9


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
    args = ["--device", "cpu", "--data", "mnist", "--data-dir", str(tmp_path / "mnist"), "--mirror", url, "--max-steps", "40"]
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
    assert last.startswith("PROOF FAILED: cannot download http://127.0.0.1:9/train-images-idx3-ubyte.gz") and "--data synthetic" in last
