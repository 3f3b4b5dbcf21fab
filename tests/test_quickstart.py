"""The quick starts (docs/quickstart.md) run as written. Each `## ` section with fenced `sh` or
`console` blocks is run in page order, in one copy of the project without the sample stacks
(a fork may have deleted them): an `sh` block as a bash script, a `console` block's `$ ` lines as
commands whose output must begin with the lines the page shows, up to its first `...`, and
hold the lines after it in order. `az` and `kubectl` are stood in for by scripts that answer the
guide's saved cluster (examples/guide-cluster/) to exactly the commands the page shows."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from tools.stack_files import ROOT

PAGE = ROOT / "docs" / "quickstart.md"
EXAMPLE = ROOT / "examples" / "guide-cluster"
FENCE = re.compile(r"^```(\w*)[^\n]*\n(.*?)^```", re.MULTILINE | re.DOTALL)
LEFT_OUT = "..."
# What the copy leaves out: the checkout's own state, the tests, and what make builds.
NOT_COPIED = (".git", ".venv*", ".uv", "build", "tests", "__pycache__", ".*_cache", ".hypothesis")
# The stand-ins answer these exact commands, which docs/existing-cluster.md and the example's
# stack file give for saving a cluster (its `kubectl get` with --all-namespaces and managed fields).
STAND_INS = {
    "az": {
        "aks get-credentials --resource-group ml-rg --name ml-prod": "echo 'Merged \"ml-prod\" as current context in ~/.kube/config'",
        "aks show --resource-group ml-rg --name ml-prod --output json": f"cat {EXAMPLE / 'cluster.json'}",
    },
    "kubectl": {
        "get namespaces,daemonsets --all-namespaces --show-managed-fields --output json": f"cat {EXAMPLE / 'kubernetes.json'}",
    },
}


@dataclass
class Command:
    line: str
    shown: list[str]


@dataclass
class Section:
    title: str
    steps: list[str | Command] = field(default_factory=list)  # a script (sh) or a command with its output (console)


def sections(page: str) -> list[Section]:
    """The page's `## ` sections that hold `sh` or `console` blocks, in page order."""
    found = []
    for part in re.split(r"^## ", page, flags=re.MULTILINE)[1:]:
        title, _, body = part.partition("\n")
        section = Section(title.strip())
        for lang, block in FENCE.findall(body):
            if lang == "sh":
                section.steps.append(block)
            elif lang == "console":
                section.steps.extend(console_commands(block))
        if section.steps:
            found.append(section)
    return found


def console_commands(block: str) -> list[Command]:
    commands: list[Command] = []
    for line in block.splitlines():
        if line.startswith("$ "):
            commands.append(Command(line[2:], []))
        elif commands:
            commands[-1].shown.append(line)
    return commands


def mismatch(shown: list[str], printed: list[str]) -> str | None:
    """Why `printed` is not what the page shows, or None: the lines before the first `...` are
    its first lines; every later shown line comes after them, in order."""
    head = shown[: shown.index(LEFT_OUT)] if LEFT_OUT in shown else shown
    if printed[: len(head)] != head:
        return f"begins {printed[: len(head)]}, the page shows {head}"
    at = len(head)
    for line in (s for s in shown[len(head) :] if s != LEFT_OUT):
        if line not in printed[at:]:
            return f"has no {line!r} after line {at}"
        at = printed.index(line, at) + 1
    return None


def project_copy(dest: Path) -> Path:
    """The project as a fork that deleted the sample stacks has it, with this checkout's virtualenvs."""
    shutil.copytree(ROOT, dest, ignore=shutil.ignore_patterns(*NOT_COPIED))
    for sample in dest.glob("Pulumi.*.yaml"):
        sample.unlink()
    for built in (".venv", ".uv"):
        if (ROOT / built).exists():
            (dest / built).symlink_to(ROOT / built)
    return dest


def stand_ins(folder: Path) -> Path:
    folder.mkdir()
    for tool, answers in STAND_INS.items():
        cases = "".join(f'  "{asked}") {answer} ;;\n' for asked, answer in answers.items())
        script = folder / tool
        script.write_text(
            f'#!/bin/sh\ncase "$*" in\n{cases}  *) echo "{tool} asked $*: not a command the page shows" >&2; exit 2 ;;\nesac\n'
        )
        script.chmod(0o755)
    return folder


def walk(page: str, copy: Path, bin_dir: Path) -> dict[str, list[str]]:
    """Every section run in page order; what did not go as the page says, by section."""
    env = {**os.environ, "PATH": f"{bin_dir}{os.pathsep}{os.environ['PATH']}"}
    env.pop("MAKEFLAGS", None)
    env.pop("MAKELEVEL", None)
    found: dict[str, list[str]] = {}
    for section in sections(page):
        wrong = found.setdefault(section.title, [])
        for step in section.steps:
            script = step.line if isinstance(step, Command) else f"set -e\n{step}"
            done = subprocess.run(["bash", "-c", script], cwd=copy, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
            if isinstance(step, Command):
                if why := mismatch(step.shown, done.stdout.splitlines()):
                    wrong.append(f"`{step.line}` {why}")
            elif done.returncode:
                wrong.append(f"a block failed ({done.returncode}): {done.stdout.strip()}")
    return found


def test_the_page_has_a_quick_start_for_each_way_in_each_with_what_it_prints():
    found = sections(PAGE.read_text())
    titles = [s.title for s in found]
    assert titles[:3] == ["A new cluster", "Your cluster as it is", "Adopting what the guide made"]
    for section in found:
        shown = [s for s in section.steps if isinstance(s, Command)]
        assert shown and all(c.shown and c.shown[0] != LEFT_OUT for c in shown), f"{section.title}: each command shows its first line"


def test_each_quick_start_runs_as_written_and_prints_the_lines_the_page_shows(tmp_path):
    copy = project_copy(tmp_path / "project")
    found = walk(PAGE.read_text(), copy, stand_ins(tmp_path / "bin"))
    assert list(found)[:3] == ["A new cluster", "Your cluster as it is", "Adopting what the guide made"]
    assert {title: wrong for title, wrong in found.items() if wrong} == {}


def test_the_quick_starts_make_render_is_the_module_make_runs():
    """The page shows make's own echo of its recipe: the Makefile's line, as make expands it."""
    planned = subprocess.run(
        ["make", "-n", "--no-print-directory", "render", "STACK=quickstart"], cwd=ROOT, capture_output=True, text=True, check=True
    ).stdout.splitlines()
    assert ".venv/bin/python -m tools.render --stack quickstart" in planned
    assert ".venv/bin/python -m tools.render --stack quickstart" in PAGE.read_text()


@pytest.mark.parametrize(
    ("shown", "printed", "wrong"),
    [
        (["a", "...", "z"], ["a", "b", "z"], False),
        (["a", "b"], ["a", "b", "c"], False),
        (["a", "b"], ["a", "c"], True),
        (["a", "...", "z"], ["a", "b"], True),
        (["a", "...", "c", "b"], ["a", "b", "c"], True),
    ],
)
def test_a_command_prints_what_the_page_shows_only_when_its_first_lines_match_and_the_rest_follow_in_order(shown, printed, wrong):
    assert (mismatch(shown, printed) is not None) is wrong
