"""`make mutation`: how much of what the tests watch really is watched, by cosmic-ray. Prints each
module's score (killed over mutants, less mutation/equivalent.txt) and every survivor, and exits 1
under 90%. Each module runs in a copy of the project with no bytecode, two at once, so the working
tree is never mutated and no stale bytecode hides a mutant. When to run it, and how: docs/design/mutation.md."""

from __future__ import annotations

import argparse
import importlib
import json
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Iterable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any

# tomllib is Python 3.11's (make mutation's); the program, and mypy's check of it, start at 3.10.
tomllib: Any = importlib.import_module("tomllib")

ROOT = Path(__file__).resolve().parent.parent
CONFIGS = ROOT / "mutation"
EQUIVALENT = CONFIGS / "equivalent.txt"
TARGET = 0.90
# What the copy leaves out: environments, caches and build output (the copy links .venv).
LEFT_OUT = {".git", ".venv", ".venv-lint", ".venv-checkov", ".uv", "build", "__pycache__", ".pytest_cache"}


@dataclass(frozen=True)
class Mutant:
    module: str
    operator: str
    line: int
    #: The line as the module has it, and as the mutant has it, stripped: what equivalent.txt names.
    text: str
    mutated: str
    outcome: str  # killed, survived, or skipped (an operator left out)
    diff: str

    @property
    def key(self) -> tuple[str, str, str, str]:
        return self.module, self.operator, self.text, self.mutated


@dataclass(frozen=True)
class Score:
    module: str
    mutants: tuple[Mutant, ...]
    equivalent: frozenset[tuple[str, str, str, str]]

    @property
    def counted(self) -> list[Mutant]:
        return [m for m in self.mutants if m.outcome != "skipped" and m.key not in self.equivalent]

    @property
    def killed(self) -> int:
        return sum(m.outcome == "killed" for m in self.counted)

    @property
    def survivors(self) -> list[Mutant]:
        return [m for m in self.counted if m.outcome != "killed"]

    @property
    def rate(self) -> float:
        return self.killed / len(self.counted) if self.counted else 1.0


def equivalent_mutants(path: Path = EQUIVALENT) -> dict[tuple[str, str, str, str], str]:
    """equivalent.txt: `module | operator | line => mutated line | reason`, one mutant a line."""
    listed = {}
    for number, raw in enumerate(path.read_text().splitlines(), 1):
        if not raw.strip() or raw.lstrip().startswith("#"):
            continue
        try:
            module, operator, rest = (part.strip() for part in raw.split(" | ", 2))
            change, reason = (part.strip() for part in rest.rsplit(" | ", 1))
            text, mutated = (part.strip() for part in change.split(" => ", 1))
        except ValueError:
            raise SystemExit(f"{path.relative_to(ROOT)}:{number}: expected `module | operator | line => mutated line | reason`") from None
        if not reason:
            raise SystemExit(f"{path.relative_to(ROOT)}:{number}: a listed mutant needs its reason")
        listed[(module, operator, text, mutated)] = reason
    return listed


def copy_project(into: Path) -> None:
    """The project's files, without environments or bytecode; .venv linked, not copied."""

    def ignore(folder: str, names: list[str]) -> set[str]:
        return {n for n in names if n in LEFT_OUT or n.endswith(".pyc")}

    shutil.copytree(ROOT, into, ignore=ignore, symlinks=True)
    (into / ".venv").symlink_to(ROOT / ".venv")


def cosmic_ray(*args: str, cwd: Path) -> str:
    tool = ROOT / ".venv" / "bin" / args[0]
    done = subprocess.run([str(tool), *args[1:]], cwd=cwd, capture_output=True, text=True)
    if done.returncode != 0:
        raise RuntimeError(f"{' '.join(args)} failed in {cwd}:\n{done.stderr[-2000:]}")
    return done.stdout


def run(config: Path, work: Path) -> list[Mutant]:
    """One configuration's session, in a copy of the project under `work`."""
    copy = work / config.stem
    copy_project(copy)
    settings = copy / "mutation" / config.name
    session = work / f"{config.stem}.sqlite"
    cosmic_ray("cosmic-ray", "init", str(settings), str(session), cwd=copy)
    cosmic_ray("cr-filter-operators", str(session), str(settings), cwd=copy)
    cosmic_ray("cosmic-ray", "exec", str(settings), str(session), cwd=copy)
    source = (ROOT / tomllib.loads(settings.read_text())["cosmic-ray"]["module-path"]).read_text().splitlines()
    return [mutant(json.loads(line), source) for line in cosmic_ray("cosmic-ray", "dump", str(session), cwd=copy).splitlines() if line]


def mutant(record: list[Any], source: list[str]) -> Mutant:
    item, result = record
    [mutation] = item["mutations"]
    line = mutation["start_pos"][0]
    result = result or {}
    outcome = "skipped" if result.get("worker_outcome") == "skipped" else result.get("test_outcome") or "not run"
    diff = result.get("diff") or ""
    added = [row[1:] for row in diff.splitlines() if row.startswith("+") and not row.startswith("+++")]
    return Mutant(
        module=mutation["module_path"],
        operator=mutation["operator_name"],
        line=line,
        text=source[line - 1].strip(),
        mutated=added[0].strip() if added else "",
        outcome=outcome,
        diff=diff,
    )


def changed_lines(diff: str) -> str:
    return "\n".join(f"      {row}" for row in diff.splitlines() if row.startswith(("-", "+")) and not row.startswith(("---", "+++")))


def report(scores: Iterable[Score], listed: dict[tuple[str, str, str, str], str]) -> int:
    scores = list(scores)
    worst = 1.0
    for score in scores:
        equivalent = sum(m.key in score.equivalent for m in score.mutants if m.outcome != "skipped")
        print(
            f"{score.module}: {score.killed} of {len(score.counted)} mutants killed ({score.rate:.1%}); "
            f"{equivalent} listed as equivalent, {sum(m.outcome == 'skipped' for m in score.mutants)} operators left out"
        )
        for m in score.survivors:
            print(f"  survived: {m.module}:{m.line} {m.operator}\n{changed_lines(m.diff)}")
            print(f"    to list it: {m.module} | {m.operator} | {m.text} => {m.mutated} | <why no user could notice>")
        worst = min(worst, score.rate)
    seen = {m.key for s in scores for m in s.mutants}
    stale = [key for key in listed if key[0] in {s.module for s in scores} and key not in seen]
    for module, operator, text, mutated in stale:
        print(f"equivalent.txt names a mutant that no longer exists: {module} | {operator} | {text} => {mutated}")
    print(f"lowest: {worst:.1%} (target {TARGET:.0%})")
    return 0 if worst >= TARGET and not stale else 1


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("names", nargs="*", help="configurations of mutation/ to run (default: all), such as cost")
    parser.add_argument("--jobs", type=int, default=2, help="configurations run at once (default 2)")
    args = parser.parse_args(argv)
    configs = [CONFIGS / f"{n}.toml" for n in args.names] or sorted(CONFIGS.glob("*.toml"))
    missing = [c.name for c in configs if not c.exists()]
    if missing:
        print(f"error: no configuration {', '.join(missing)} in mutation/", file=sys.stderr)
        return 2
    listed = equivalent_mutants()
    with tempfile.TemporaryDirectory(prefix="aks-gpu-mutation-") as work, ThreadPoolExecutor(args.jobs) as pool:
        results = list(pool.map(lambda c: (c, run(c, Path(work))), configs))
    scores = [Score(tomllib.loads(c.read_text())["cosmic-ray"]["module-path"], tuple(found), frozenset(listed)) for c, found in results]
    return report(scores, listed)


if __name__ == "__main__":
    sys.exit(main())
