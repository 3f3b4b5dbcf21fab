"""`make lowest`'s check: each direct dependency as installed, at its lower bound's release.

Run by .venv-lowest's Python after `uv pip compile --resolution lowest-direct` installed
pyproject.toml's dependencies and test group. It prints each one's version and exits non-zero
naming those that resolved above their bound: a bound nothing tested (docs/design/house.md,
"Dependencies"). 34 is 34.0.0; 1.85 is also 1.85.0.20261028, a stub package's dated release.
"""

from __future__ import annotations

import sys
from collections.abc import Iterable
from importlib.metadata import version
from pathlib import Path

from packaging.requirements import Requirement
from packaging.version import Version

if sys.version_info >= (3, 11):
    import tomllib
else:  # pytest's own dependency on Python 3.10 (pytest 8 and 9 require tomli there)
    import tomli as tomllib

PYPROJECT = Path(__file__).resolve().parent.parent / "pyproject.toml"


def direct(pyproject: dict, group: str) -> list[str]:
    """The project's dependencies and one dependency group's, include-group followed (PEP 735)."""
    groups = pyproject.get("dependency-groups", {})

    def of(name: str) -> Iterable[str]:
        for item in groups[name]:
            yield from of(item["include-group"]) if isinstance(item, dict) else [item]

    return [*pyproject["project"]["dependencies"], *of(group)]


def held(requirement: Requirement, got: str) -> tuple[bool, str | None]:
    bound = next((s.version for s in requirement.specifier if s.operator in (">=", "==", "~=")), None)
    low = Version(bound).release if bound else ()
    return (Version(got).release + (0,) * len(low))[: len(low)] == low, bound


def main() -> int:
    pyproject = tomllib.loads(PYPROJECT.read_text())
    print("The direct dependencies at their lowest:")
    above = []
    for line in direct(pyproject, "test"):
        requirement = Requirement(line)
        if requirement.marker and not requirement.marker.evaluate():
            continue
        got = version(requirement.name)
        ok, bound = held(requirement, got)
        print(f"  {requirement.name}=={got}" + ("" if ok else f"  above its lower bound {bound}"))
        above += [] if ok else [requirement.name]
    if above:
        print(f"above their lower bounds: {', '.join(above)}; raise them to what resolved", file=sys.stderr)
    return 1 if above else 0


if __name__ == "__main__":
    sys.exit(main())
