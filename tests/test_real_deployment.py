"""The scheduled real deployment (.github/workflows/real-deployment.yml): a throwaway stack the
program accepts, a proof check that passes only on the Job's PROOF OK line from a T4, and a
teardown that runs whatever happened and leaves nothing billing. Its steps' commands are run
here as a runner runs them (bash -e), with stand-ins for pulumi, az and kubectl that record
what they were asked."""

from __future__ import annotations

import functools
import json
import os
import re
import subprocess
from pathlib import Path
from typing import Any

import pytest
import yaml

from components.stack import parse
from tools.stack_files import ROOT

WORKFLOW = ROOT / ".github" / "workflows" / "real-deployment.yml"
STACK, GROUP = "proof-42-1", "aks-gpu-proof-42-1-rg"

# Each stand-in appends its arguments to $CALLS (each ended by the unit separator, the call by
# the record separator: bash alone, no interpreter started a call), and answers from the
# environment: `az group exists` says whether the group exists ($GROUP_EXISTS, false once a
# `group delete` is made); kubectl prints $JOB_LOG's last line; pulumi a stack output's value.
STAND_INS = {
    "pulumi": """
case "$1 $2" in
  "stack output") case "$3" in mnistJobNamespace) echo gpu-workloads ;; mnistJobName) echo mnist-proof ;; kubeconfig) echo "apiVersion: v1" ;; esac ;;
esac
""",
    "az": """
if [ "$1 $2" = "group exists" ]; then cat "$STATE/group"; fi
if [ "$1 $2" = "group delete" ]; then echo false > "$STATE/group"; fi
""",
    "kubectl": 'printf "%s\\n" "$JOB_LOG" | tail -n 1\n',  # what `--tail 1` asks for (the tests check it is asked)
}


@functools.cache
def workflow() -> dict[str, Any]:
    return yaml.safe_load(WORKFLOW.read_text())


def steps() -> list[dict[str, Any]]:
    return workflow()["jobs"]["deploy"]["steps"]


def step(name: str) -> dict[str, Any]:
    return next(s for s in steps() if s.get("name") == name)


def run_step(name: str, tmp_path: Path, **env: str) -> tuple[subprocess.CompletedProcess, list[list[str]]]:
    """A step's command, run with bash -e in a checkout-like folder, with the job's env and
    the stand-ins first on the PATH; what it printed, and the stand-ins' calls."""
    bin_dir, state = tmp_path / "bin", tmp_path / "state"
    bin_dir.mkdir(exist_ok=True)
    state.mkdir(exist_ok=True)
    calls = tmp_path / "calls"
    for tool, body in STAND_INS.items():
        (bin_dir / tool).write_text(
            f'#!/bin/bash\n{{ for a in "$@"; do printf "%s\\037" "$a"; done; printf "\\036"; }} >> "$CALLS"\n{body}'
        )
        (bin_dir / tool).chmod(0o755)
    (state / "group").write_text(env.pop("GROUP_EXISTS", "false") + "\n")
    job_env = {k: str(v) for k, v in workflow()["jobs"]["deploy"]["env"].items() if "${{" not in str(v)}
    environment = {
        **os.environ,
        **job_env,
        "STACK": STACK,
        "RESOURCE_GROUP": GROUP,
        "LOCATION": "eastus",
        "RUNNER_TEMP": str(tmp_path),
        "CALLS": str(calls),
        "STATE": str(state),
        "PATH": f"{bin_dir}{os.pathsep}{os.environ['PATH']}",
        **env,
    }
    (tmp_path / f"Pulumi.{STACK}.yaml").write_text("config: {}\n")
    done = subprocess.run(["bash", "-e", "-c", step(name)["run"]], cwd=tmp_path, env=environment, capture_output=True, text=True)
    said = [call.split("\x1f")[:-1] for call in calls.read_text().split("\x1e")[:-1]] if calls.exists() else []
    return done, said


# --------------------------------------------------------------------------- how it runs


def test_it_runs_by_hand_and_on_a_schedule_one_run_at_a_time_within_a_time_limit():
    on = workflow()[True]  # YAML 1.1 reads the key `on` as True
    assert set(on) == {"workflow_dispatch", "schedule"} and on["schedule"][0]["cron"]
    assert workflow()["concurrency"]["cancel-in-progress"] is False, "a run's teardown is never cancelled by the next"
    deploy = workflow()["jobs"]["deploy"]
    assert deploy["timeout-minutes"] > step("pulumi up")["timeout-minutes"] + 30, "the teardown keeps its time"


def test_only_its_one_job_may_ask_for_an_oidc_token_and_it_reads_the_code_only():
    assert workflow()["permissions"] == {}
    assert [job["permissions"] for job in workflow()["jobs"].values()] == [{"contents": "read", "id-token": "write"}]


def test_every_action_is_pinned_to_a_commit_and_no_credential_stays_in_the_checkout():
    used = [s for s in steps() if "uses" in s]
    assert used and all(re.fullmatch(r"[\w.-]+/[\w.-]+@[0-9a-f]{40}", s["uses"]) for s in used), [s["uses"] for s in used]
    checkout = next(s for s in used if s["uses"].startswith("actions/checkout@"))
    assert checkout["with"] == {"persist-credentials": False}


def test_nothing_from_the_event_reaches_a_shell():
    assert not [s["run"] for s in steps() if "run" in s and "${{" in s["run"]]


# --------------------------------------------------------------------------- the stack


def written_config(calls: list[list[str]]) -> dict[str, str]:
    """The CLI's flat config map, as `pulumi config set [--path] KEY VALUE [--type T]` leaves it."""
    nested: dict[str, Any] = {}
    for call in calls:
        if call[:2] != ["config", "set"]:
            continue
        args = [a for a in call[2:] if a != "--path"]
        kind = args[args.index("--type") + 1] if "--type" in args else "string"
        key, value = [a for i, a in enumerate(args) if a != "--type" and (i == 0 or args[i - 1] != "--type")]
        typed = {"int": int, "float": float, "bool": lambda v: v == "true", "string": str}[kind](value)
        top, _, path = key.partition(".")
        if path:
            nested.setdefault(top, {})[path] = typed
        else:
            nested[top] = typed
    return {k: v if isinstance(v, str) else json.dumps(v) for k, v in nested.items()}


def test_the_throwaway_stack_is_one_t4_pool_from_zero_with_the_proof_and_a_low_cost_limit(tmp_path):
    done, calls = run_step("a throwaway stack", tmp_path)
    assert done.returncode == 0, done.stderr
    assert calls[0][:1] == ["login"] and calls[0][1].startswith(f"file://{tmp_path}"), "the state stays on the runner"
    assert calls[1] == ["stack", "init", STACK, "--secrets-provider", "passphrase"]
    cfg = parse(written_config(calls), "aks-gpu", STACK, ROOT)
    [pool] = cfg.gpu_pools
    assert (pool.vm_size, pool.min_count, pool.max_count, pool.node_count) == ("Standard_NC4as_T4_v3", 0, 1, 0)
    assert cfg.mnist_job.enabled and cfg.existing_cluster is None
    assert cfg.cost.max_hourly is not None and cfg.cost.max_hourly <= 1
    assert cfg.resource_group_name == GROUP, "the group the teardown deletes is the stack's"


# --------------------------------------------------------------------------- the proof


@pytest.mark.parametrize(
    "last, passes",
    [
        ("PROOF OK gpu=Tesla T4 (compute capability 7.5) data=mnist steps=500 accuracy=0.9812 seconds=21.3", True),
        ("PROOF OK gpu=NVIDIA A100 80GB PCIe (compute capability 8.0) data=mnist steps=500 accuracy=0.98 seconds=9.1", False),
        ("PROOF FAILED: no CUDA GPU is visible to PyTorch", False),
        ("", False),
    ],
)
def test_the_run_passes_only_on_the_jobs_proof_ok_line_from_a_t4(tmp_path, last, passes):
    done, calls = run_step("the proof's last line", tmp_path, JOB_LOG=f"gpu: ...\n{last}")
    assert (done.returncode == 0) is passes, done.stdout + done.stderr
    assert ["logs", "--namespace", "gpu-workloads", "job/mnist-proof", "--tail", "1"] == calls[-1][2:]
    assert not (tmp_path / "kubeconfig").exists(), "the credential is not left on the runner"
    if not passes:
        assert "::error::the proof's last line is not PROOF OK on a T4" in done.stdout


# --------------------------------------------------------------------------- the teardown


def test_the_teardown_runs_whatever_happened_once_the_stack_exists_in_order():
    names = [s.get("name", s.get("uses", "")) for s in steps()]
    teardown = names[names.index("the proof's last line") + 1 :]
    assert [n for n in teardown if not n.startswith("azure/login@")] == ["pulumi destroy", "nothing left billing", "pulumi stack rm"]
    for s in steps()[names.index("the proof's last line") + 1 :]:
        assert s["if"] == "always() && steps.stack.outcome != 'skipped'"


def test_a_destroy_clears_a_lock_a_killed_up_left_first(tmp_path):
    done, calls = run_step("pulumi destroy", tmp_path)
    assert done.returncode == 0 and calls == [["cancel", "--yes", "--stack", STACK], ["destroy", "--yes", "--stack", STACK]]


def test_a_group_that_outlived_the_destroy_is_deleted(tmp_path):
    done, calls = run_step("nothing left billing", tmp_path, GROUP_EXISTS="true")
    assert done.returncode == 0 and ["group", "delete", "--name", GROUP, "--yes"] in calls
    assert f"::warning::{GROUP} outlived pulumi destroy" in done.stdout
    gone = tmp_path / "gone"
    gone.mkdir()
    done, calls = run_step("nothing left billing", gone, GROUP_EXISTS="false")
    assert done.returncode == 0 and calls == [["group", "exists", "--name", GROUP]]


def test_a_destroyed_stack_is_removed_and_none_whose_group_still_runs(tmp_path):
    done, calls = run_step("pulumi stack rm", tmp_path, GROUP_EXISTS="false")
    assert done.returncode == 0 and calls[-1] == ["stack", "rm", "--yes", "--force", "--stack", STACK]
    kept = tmp_path / "kept"
    kept.mkdir()
    done, calls = run_step("pulumi stack rm", kept, GROUP_EXISTS="true")
    assert done.returncode != 0 and not [c for c in calls if c[:2] == ["stack", "rm"]]
    assert f"::error::{GROUP} still exists: delete it (az group delete --name {GROUP})" in done.stdout
