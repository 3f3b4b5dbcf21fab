"""The Pulumi CLI the program needs is enforced, not hoped for: Pulumi.yaml's
requiredPulumiVersion (which `pulumi up`, `preview`, `refresh`, `destroy` and `import` check
before anything runs: pulumi/pulumi ValidatePulumiVersionRange) refuses a CLI without
pulumi/pulumi#23818 (a replaced cluster replaces what is deletedWith it, first in 3.260.0), and
every workflow installs a CLI that satisfies it, the SDK's locked version."""

from __future__ import annotations

import re

import pytest
import yaml
from packaging.version import Version

from tools.stack_files import ROOT

WORKFLOWS = sorted((ROOT / ".github" / "workflows").glob("*.yml"))


def required() -> str:
    return yaml.safe_load((ROOT / "Pulumi.yaml").read_text())["requiredPulumiVersion"]


def admits(version: str) -> bool:
    """Pulumi.yaml's range as blang/semver reads a single `>=X.Y.Z` (the one form it uses)."""
    match = re.fullmatch(r">=(\d+\.\d+\.\d+)", required())
    assert match, f"requiredPulumiVersion {required()!r} is not one `>=X.Y.Z` bound"
    return Version(version) >= Version(match.group(1))


def locked_sdk() -> str:
    return re.search(r"^pulumi==([\d.]+) ", (ROOT / "requirements.txt").read_text(), re.M).group(1)


@pytest.mark.parametrize("cli, runs", [("3.259.0", False), ("3.173.0", False), ("3.260.0", True)])
def test_a_cli_without_the_deleted_with_cascade_is_refused_and_one_with_it_runs(cli, runs):
    assert admits(cli) is runs


def test_the_locked_sdks_cli_runs_the_program():
    assert admits(locked_sdk())


@pytest.mark.parametrize("workflow", WORKFLOWS, ids=lambda p: p.name)
def test_every_workflow_installs_the_locked_cli_which_the_project_admits(workflow):
    steps = [s for job in yaml.safe_load(workflow.read_text())["jobs"].values() for s in job.get("steps", [])]
    pulumi = [s for s in steps if str(s.get("uses", "")).startswith("pulumi/actions@")]
    assert pulumi, f"{workflow.name} runs no pulumi/actions step"
    for step in pulumi:
        assert str(step["with"].get("pulumi-version")) == locked_sdk()
