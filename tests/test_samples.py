"""The sample stacks and a project without them.

dev, prod and team ship as the README's examples. The tests keep their own copies
(tests/fixtures/stacks/): what a test says of "the dev stack" runs there, so it holds in a fork
that deletes or rewrites the project's stack files. The per-stack checks take the
Pulumi.<stack>.yaml there are, whatever their names; while a sample is there, it is checked as
the example the README says it is. Here, the cheap parts of a fork (README, "Making it
yours"): `make snapshots`, `make test`, `make lint`, `make render` and CI with other stacks
than the samples, or none. The whole suite in such a fork is not run from here.
"""

from __future__ import annotations

import ast
import os
import shutil
import subprocess
from pathlib import Path

import pytest
import yaml
from conftest import FIXTURE_STACKS, run_cached
from support.house import per_stack
from support.stack_schema import VALIDATOR
from support.team_stacks import lint_plan

from tools import render, schema, stack_files
from tools.stack_files import ROOT, stack_config, stacks

SAMPLES = stacks(FIXTURE_STACKS)
# The samples the project still ships (a fork may have deleted them).
SHIPPED = [sample for sample in SAMPLES if (ROOT / f"Pulumi.{sample}.yaml").exists()]
README = (ROOT / "README.md").read_text()


def test_the_tests_look_stack_names_up_in_their_own_copies_of_the_samples():
    assert SAMPLES == ["dev", "prod", "team"]
    assert stack_files.stack_file("dev") == FIXTURE_STACKS / "Pulumi.dev.yaml"
    assert run_cached("team")[0].config == stack_config("team", FIXTURE_STACKS / "Pulumi.team.yaml")


@pytest.mark.parametrize("sample", SAMPLES)
def test_each_copy_names_the_schema_from_where_it_lies_and_passes_it(sample):
    path = FIXTURE_STACKS / f"Pulumi.{sample}.yaml"
    first = path.read_text().splitlines()[0]
    assert first == f"# yaml-language-server: $schema={os.path.relpath(schema.SCHEMA_FILE, path.parent)}"
    assert [e.message for e in VALIDATOR.iter_errors(yaml.safe_load(path.read_text()))] == []


@pytest.mark.parametrize("sample", SHIPPED)
def test_a_sample_the_project_still_ships_is_a_documented_example_among_its_stacks(sample):
    """Checked by every per-stack test too (it is in stacks()), and snapshotted. A stack of
    a team's own under a sample's name is documented like one, in the README or docs/."""
    pages = [README, *(p.read_text() for p in sorted((ROOT / "docs").glob("*.md")))]
    assert any(f"`Pulumi.{sample}.yaml`" in page for page in pages), f"Pulumi.{sample}.yaml is documented"
    assert sample in stacks() and (render.SNAPSHOTS / sample).is_dir()


def test_the_per_stack_checks_run_once_for_each_stack_file_there_is(request):
    """In the session's collection (the whole suite, or the modules asked for), each test
    parametrized over stacks() runs for exactly the project's stack files."""
    runs: dict[str, set] = {}
    for item in request.session.items:
        spec = getattr(item, "callspec", None)
        if spec and isinstance(spec.params.get("stack"), str) and item.originalname in per_stack_functions(item.path):
            runs.setdefault(f"{item.path.name}::{item.originalname}", set()).add(spec.params["stack"])
    assert {name: sorted(found) for name, found in runs.items() if found != set(stacks())} == {}


def per_stack_functions(path: Path) -> set[str]:
    tree = ast.parse(path.read_text())
    return {node.name for node in ast.walk(tree) if isinstance(node, ast.FunctionDef) and per_stack(node)}


def test_the_stacks_are_the_stack_files_there_are_whatever_their_names(tmp_path, monkeypatch):
    monkeypatch.setattr(stack_files, "ROOT", tmp_path)
    assert stacks() == []
    for name in ("Pulumi.yaml", "Pulumi.ml.yaml", "Pulumi.gpu-lab.eu.yaml", "Pulumi.yaml.bak"):
        (tmp_path / name).write_text("config: {}\n")
    assert stacks() == ["gpu-lab.eu", "ml"]


def test_make_render_without_a_dev_stack_names_the_stacks_there_are(tmp_path, monkeypatch, capsys):
    monkeypatch.setattr(stack_files, "STACK_FOLDER", tmp_path)
    assert render.main([]) == 2
    assert capsys.readouterr().err == (
        'error: no stack file Pulumi.dev.yaml, nor any other Pulumi.<stack>.yaml: write one (README, "Making it yours")\n'
    )
    for name in ("ml", "gpu-lab"):
        (tmp_path / f"Pulumi.{name}.yaml").write_text("config: {}\n")
    assert render.main([]) == 2
    assert capsys.readouterr().err == "error: no stack file Pulumi.dev.yaml; the stacks here: gpu-lab, ml (make render STACK=gpu-lab)\n"


def test_make_snapshots_removes_the_snapshots_of_stacks_gone_and_nothing_else(tmp_path, monkeypatch):
    monkeypatch.setattr(render, "SNAPSHOTS", tmp_path / "snapshots")
    for stack in ("dev", "ml", "odd"):
        (tmp_path / "snapshots" / stack).mkdir(parents=True)
        for name in render.RENDERED_FILES:
            (tmp_path / "snapshots" / stack / name).write_text("x\n")
    (tmp_path / "snapshots" / "odd" / "notes.md").write_text("kept\n")
    (tmp_path / "snapshots" / "README.md").write_text("kept\n")
    lines = render.prune_snapshots(["ml"])
    assert [line.split(": ", 1)[1] for line in lines] == [
        "removed, no Pulumi.dev.yaml",
        "its rendered files removed, no Pulumi.odd.yaml; kept notes.md",
    ]
    assert sorted(str(p.relative_to(tmp_path)) for p in tmp_path.rglob("*") if p.is_file()) == sorted(
        [*(f"snapshots/ml/{name}" for name in render.RENDERED_FILES), "snapshots/README.md", "snapshots/odd/notes.md"]
    )


def test_make_lint_checks_the_stack_files_there_are_and_none_when_there_is_none():
    one = lint_plan("ml")
    assert "check-jsonschema --schemafile schema/stack.schema.json Pulumi.ml.yaml\n" in one
    assert "-f tests/snapshots/ml/manifests.yaml -- --config-file security/checkov-aks.yaml -f tests/snapshots/ml/azure.json" in one
    none = lint_plan()
    assert "stack.schema.json" not in none and "checkov_runs" not in none
    assert "zizmor" in none and "vendor.github-workflows" in none, "the rest of the linters still run"


def test_ci_renders_every_stack_there_is_whatever_their_names(tmp_path):
    """.ci/run with `make` stood in for by a script that writes down what it was asked."""
    (tmp_path / ".ci").mkdir()
    shutil.copy(ROOT / ".ci" / "run", tmp_path / ".ci" / "run")
    (tmp_path / "bin").mkdir()
    (tmp_path / "bin" / "make").write_text(f'#!/bin/sh\necho "$*" >> {tmp_path / "asked"}\n')
    (tmp_path / "bin" / "make").chmod(0o755)
    env = {**os.environ, "PATH": f"{tmp_path / 'bin'}:{os.environ['PATH']}"}
    for name in ("Pulumi.yaml", "Pulumi.ml.yaml", "Pulumi.gpu-lab.eu.yaml"):
        (tmp_path / name).write_text("config: {}\n")
    subprocess.run(["bash", str(tmp_path / ".ci" / "run")], env=env, check=True, capture_output=True)
    asked = (tmp_path / "asked").read_text().splitlines()
    assert [line for line in asked if line.startswith("render")] == ["render STACK=gpu-lab.eu", "render STACK=ml"]
    assert "test" in asked
