"""`make urns`: every URN the 1.0 sample stacks declare, one a line, as the engine names them.

tests/fixtures/stacks-1.0/ holds the dev, prod and team stack files as 1.0 shipped them, and
urns.txt there the URNs they declared, written once by `make urns > tests/fixtures/stacks-1.0/urns.txt`;
tests/test_urns.py checks that every one is still declared or aliased. Run it again only to
pin a URN a release gives up on purpose, and say so in the CHANGELOG.
"""

from __future__ import annotations

from pathlib import Path

from tools.mock_engine import ProgramRun, run_program

ROOT = Path(__file__).resolve().parent.parent
STACKS_1_0 = ROOT / "tests" / "fixtures" / "stacks-1.0"


def stack_files(folder: Path = STACKS_1_0) -> dict[str, Path]:
    """Each stack's name and its file in `folder`."""
    return {path.name.split(".")[1]: path for path in sorted(folder.glob("Pulumi.*.yaml"))}


def engine_urns(run: ProgramRun) -> set[str]:
    """The run's URNs as the engine makes them (`as_the_engine_names_them`)."""
    return set(as_the_engine_names_them(run).values())


def as_the_engine_names_them(run: ProgramRun) -> dict[str, str]:
    """Each of the run's URNs, and the URN the engine makes for it: a resource's type follows its
    parent's whole qualified type, the root Stack's excepted (pulumi/pulumi 1b594989
    pkg/resource/deploy/deployment.go `generateURN`). The stock mock monitor keeps the Stack's type
    and a parent's last type alone (pulumi/runtime/mocks.py `make_urn`)."""
    by_urn = {r.urn: r for r in run.resources}

    def qualified(urn: str) -> str:
        resource = by_urn[urn]
        return f"{qualified(resource.parent)}${resource.type}" if resource.parent in by_urn else resource.type

    return {r.urn: f"urn:pulumi:{run.stack}::{run.project}::{qualified(r.urn)}::{r.name}" for r in run.resources}


def main() -> None:
    urns = set().union(*(engine_urns(run_program(stack, stack_file=path, preview=True)) for stack, path in stack_files().items()))
    print("\n".join(sorted(urns)))


if __name__ == "__main__":
    main()
