"""The pull-request workflow previews every stack file there is, not a list written into it:
its preview matrix is the output of a job that lists `Pulumi.<stack>.yaml` in the checkout,
and that job's command, run here as a runner would, finds a stack a team adds."""

from __future__ import annotations

import json
import os
import subprocess

import pytest
import yaml

from tools.stack_files import ROOT, stacks

PR = ROOT / ".github" / "workflows" / "pr.yml"


def jobs() -> dict:
    return yaml.safe_load(PR.read_text())["jobs"]


def listing_step() -> dict:
    return next(step for step in jobs()["stacks"]["steps"] if step.get("id") == "list")


def run_listing(folder, output) -> subprocess.CompletedProcess:
    """The listing step's command, run with bash in `folder` as a runner runs it."""
    return subprocess.run(
        ["bash", "-e", "-c", listing_step()["run"]],
        cwd=folder,
        env={**os.environ, "GITHUB_OUTPUT": str(output)},
        capture_output=True,
        text=True,
    )


def listed(folder, tmp_path) -> list[str]:
    """The stacks the listing step writes to $GITHUB_OUTPUT, as one `stacks=<JSON>` line."""
    output = tmp_path / "github_output"
    run = run_listing(folder, output)
    assert run.returncode == 0, run.stderr
    (line,) = output.read_text().splitlines()
    name, _, value = line.partition("=")
    assert name == "stacks"
    return json.loads(value)


def test_the_preview_matrix_is_the_listing_jobs_output():
    preview, listing = jobs()["preview"], jobs()["stacks"]
    assert "stacks" in preview["needs"]
    assert preview["strategy"]["matrix"] == {"stack": "${{ fromJSON(needs.stacks.outputs.stacks) }}"}
    assert listing["outputs"] == {"stacks": "${{ steps.list.outputs.stacks }}"}
    assert "${{" not in listing_step()["run"], "nothing from the event reaches the shell"


def test_the_listing_finds_every_stack_file_of_the_repository(tmp_path):
    if not stacks():
        pytest.skip("no Pulumi.<stack>.yaml: the listing stops (below)")
    assert listed(ROOT, tmp_path) == stacks()


def test_the_listing_finds_a_stack_a_team_adds_and_not_the_project_file(tmp_path):
    """Whatever the stacks are called: a team that replaced the samples has none of theirs."""
    checkout = tmp_path / "checkout"
    checkout.mkdir()
    for name in ("Pulumi.yaml", "Pulumi.GPU_lab2.yaml", "Pulumi.ml-team.yaml", "Pulumi.staging.eu.yaml", "README.md"):
        (checkout / name).write_text("config: {}\n")
    assert listed(checkout, tmp_path) == ["GPU_lab2", "ml-team", "staging.eu"]


def test_the_listing_stops_when_there_is_no_stack_file(tmp_path):
    (tmp_path / "checkout").mkdir()
    run = run_listing(tmp_path / "checkout", tmp_path / "github_output")
    assert run.returncode != 0 and "no Pulumi.<stack>.yaml in the checkout" in run.stderr


def test_the_listing_job_keeps_the_workflows_posture():
    """No token beyond reading the code, and no credential left in the checkout."""
    workflow = yaml.safe_load(PR.read_text())
    assert workflow["permissions"] == {}
    listing = jobs()["stacks"]
    assert listing["permissions"] == {"contents": "read"}
    checkout = next(step for step in listing["steps"] if step.get("uses", "").startswith("actions/checkout@"))
    assert checkout["with"] == {"persist-credentials": False}
