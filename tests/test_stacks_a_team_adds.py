"""A team adds its own stack file and runs `make snapshots`, as the README says: then every
check `make test` runs for a stack passes for it, whatever its cluster is called or where it
is. The stack files are written here, by the test, not taken from the repository's stacks.

`make test` runs these checks once per `Pulumi.<stack>.yaml` (each test module's
`parametrize("stack", stacks())`); here the same functions run on the added stacks, and the
Makefile is asked which Checkov settings its lint would give them.
"""

from __future__ import annotations

import re
import shlex
import subprocess
import sys
from pathlib import Path

import pytest
import yaml
from support.arm_schemas import arm_problems
from support.kubernetes_schemas import kubernetes_problems
from support.program import check_whole_guide
from support.security import check_open_checks_documented, check_pods
from support.snapshots import check_snapshot
from support.stack_schema import SCHEMA_LINE, stack_file_problems
from support.team_stacks import lint_plan

from tools import checkov_runs, render
from tools.mock_engine import run_program
from tools.stack_files import ROOT, stacks

# A team's existing cluster, not the example's: another name, group and region, in its own
# VNet on Azure CNI without overlay, as its saved `az aks show` says; two pools, one of them
# AKS-managed, one with a pod count of its own.
ML = {
    "azure-native:location": "northeurope",
    "aks-gpu:existingCluster": {"resourceGroupName": "ml-platform", "name": "ml-aks"},
    "aks-gpu:preflight": {"clusterFile": "tests/fixtures/clusters/ml-aks.json"},
    "aks-gpu:gpuPools": {
        "train": {"vmSize": "Standard_NC24ads_A100_v4", "nodeCount": 1, "maxPods": 110},
        "infer": {"vmSize": "Standard_NC4as_T4_v3", "management": "aks-managed", "nodeCount": 1},
    },
}
# A new cluster elsewhere: Entra ID sign-in, an AKS-managed pool, a budget.
STAGING = {
    "azure-native:location": "westeurope",
    "aks-gpu:access": {"mode": "entra", "deployerObjectId": "5f1c2d3e-4a5b-4c6d-8e7f-9a0b1c2d3e4f"},
    "aks-gpu:gpuPool": {"vmSize": "Standard_NC8as_T4_v3", "management": "aks-managed"},
    "aks-gpu:cost": {"budget": {"amount": 300, "contactEmails": ["ml-team@example.com"]}},
}


def free_name(wanted: str, root: Path = ROOT) -> str:
    """`wanted`, or `wanted-2`, `wanted-3`...: a stack name with no stack file and no Checkov
    settings in the repository, so that a team's own `Pulumi.ml.yaml` or
    `Pulumi.staging.yaml` is never mistaken for the test's, nor makes the test fail."""
    taken = lambda name: (root / f"Pulumi.{name}.yaml").exists() or (root / f"security/checkov-aks-{name}.yaml").exists()  # noqa: E731
    return next(name for name in (wanted, *(f"{wanted}-{n}" for n in range(2, 100))) if not taken(name))


# The stacks with Checkov settings of their own (the shipped samples have; a fork may have none).
OWN_SETTINGS = sorted(p.name[len("checkov-aks-") : -len(".yaml")] for p in (ROOT / "security").glob("checkov-aks-*.yaml"))


ADDED = {free_name("ml"): ML, free_name("staging"): STAGING}


@pytest.fixture(scope="module")
def added(tmp_path_factory) -> dict[str, Path]:
    folder = tmp_path_factory.mktemp("stacks")
    files = {}
    for stack, config in ADDED.items():
        files[stack] = folder / f"Pulumi.{stack}.yaml"
        files[stack].write_text(SCHEMA_LINE + "\n" + yaml.safe_dump({"config": config}, sort_keys=False))
    return files


@pytest.mark.parametrize("stack", ADDED)
def test_every_per_stack_check_passes_for_a_stack_a_team_adds(stack, added, tmp_path):
    run = run_program(stack, stack_file=added[stack], preview=True)  # what `make snapshots` renders
    snapshots = tmp_path / "snapshots"
    render.write(run, snapshots / stack)
    check_snapshot(run_program(stack, stack_file=added[stack], preview=True), stack, snapshots, tmp_path / "again")
    assert stack_file_problems(added[stack]) == []
    assert arm_problems(run) == []
    assert kubernetes_problems(run) == []
    check_whole_guide(run)
    check_pods(run)
    check_open_checks_documented(stack)


def test_make_lint_checks_an_added_stack_with_the_default_checkov_settings():
    """`make lint` takes every Pulumi.*.yaml; a stack without settings of its own gets
    security/checkov-aks.yaml (the Makefile's checkov_settings), one with them its own."""
    ml, staging = ADDED
    plan = lint_plan(*OWN_SETTINGS, ml, staging)
    runs = {
        stack: settings for settings, stack in re.findall(r"--config-file (security/\S+) -f tests/snapshots/([\w.-]+)/azure\.json", plan)
    }
    assert runs == {
        **{own: f"security/checkov-aks-{own}.yaml" for own in OWN_SETTINGS},
        ml: "security/checkov-aks.yaml",
        staging: "security/checkov-aks.yaml",
    }


def test_make_lint_fails_on_an_added_stack_without_snapshots_and_names_the_fix():
    """Checkov alone logs "Template file not found" and exits 0 (tools/checkov_runs.py says
    where): `make lint`'s own Checkov line, run here as make would, stops before Checkov is
    even imported (the test's Python has no Checkov), with one line naming the stack."""
    ml, _ = ADDED
    plan = lint_plan(*stacks(), ml).replace("\\\n", " ")
    line = next(line for line in plan.splitlines() if "tools/checkov_runs.py" in line)
    args = shlex.split(line)
    args = args[args.index("tools/checkov_runs.py") + 1 :]
    run = subprocess.run([sys.executable, "tools/checkov_runs.py", *args], cwd=ROOT, capture_output=True, text=True)
    assert run.returncode == 2, run.stderr
    assert run.stderr.splitlines() == [
        f"checkov: stack {ml} has no snapshot (tests/snapshots/{ml}/: manifests.yaml, azure.json missing): "
        f"run `make snapshots`, then commit tests/snapshots/{ml}/"
    ]


def test_checkov_runs_finds_every_file_to_scan_however_it_is_given():
    args = ["--config-file", "x.yaml", "-f", "a", "b", "--compact", "--file", "c", "--file=d", "-o", "cli"]
    assert checkov_runs.files(args) == ["a", "b", "c", "d"]
    assert checkov_runs.missing(["-f", "Pulumi.yaml", "--", "-f", "nowhere.json"]) == ["checkov: nowhere.json is missing: nothing to check"]


def test_a_team_stack_file_without_the_schema_line_is_told_the_line_to_add(tmp_path):
    """The schema line is for editors; a file without it is refused with the exact line, and
    passes once that line is its first."""
    stack = tmp_path / "Pulumi.ml.yaml"
    body = yaml.safe_dump({"config": ML}, sort_keys=False)
    stack.write_text(body)
    assert stack_file_problems(stack) == [f"Pulumi.ml.yaml: add this line as its first line (the editor's schema): {SCHEMA_LINE}"]
    stack.write_text(SCHEMA_LINE + "\n" + body)
    assert stack_file_problems(stack) == []


def test_make_snapshots_renders_every_stack_file_in_the_project():
    """`make snapshots` is `tools.render --snapshots`: every Pulumi.<stack>.yaml, by glob."""
    makefile = (ROOT / "Makefile").read_text()
    assert re.search(r"^snapshots: .*\n\t\$\(VENV\)/bin/python -m tools\.render --snapshots$", makefile, re.M)
    assert re.search(r"^STACKS := \$\(patsubst Pulumi\.%\.yaml,%,\$\(wildcard Pulumi\.\*\.yaml\)\)$", makefile, re.M)


def test_a_team_stack_named_like_the_tests_own_does_not_collide(tmp_path):
    (tmp_path / "security").mkdir()
    (tmp_path / "Pulumi.ml.yaml").write_text("config: {}\n")
    (tmp_path / "security" / "checkov-aks-staging.yaml").write_text("skip-check: []\n")
    assert [free_name(name, tmp_path) for name in ("ml", "staging", "gpu")] == ["ml-2", "staging-2", "gpu"]
    assert not set(ADDED) & {*stacks(), *OWN_SETTINGS}
