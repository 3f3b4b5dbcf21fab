"""One project file and one lock: pyproject.toml names the ranges, uv.lock the versions and
hashes, and the files exported from it for what reads no uv.lock (requirements.txt, which
Pulumi's pip toolchain installs; requirements-uv.txt, the uv bootstrap) say the same. `make lint`
also compares the exports with a fresh `uv export` byte for byte (docs/design/house.md, "Dependencies")."""

from __future__ import annotations

import re
import sys
from pathlib import Path

import pytest
from packaging.requirements import Requirement

if sys.version_info >= (3, 11):
    import tomllib
else:  # pytest's own dependency on Python 3.10
    import tomli as tomllib

ROOT = Path(__file__).resolve().parent.parent
PROJECTS = {"the program's": ROOT, "Checkov's": ROOT / "security" / "checkov"}


def normal(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def read(project: Path) -> tuple[dict, list[dict]]:
    pyproject = tomllib.loads((project / "pyproject.toml").read_text())
    return pyproject, tomllib.loads((project / "uv.lock").read_text())["package"]


def closure(packages: list[dict], roots: list[dict]) -> dict[str, set[str]]:
    """Each package the roots need, followed through dependencies and extras, with its versions."""
    by_name: dict[str, list[dict]] = {}
    for package in packages:
        by_name.setdefault(package["name"], []).append(package)
    found: dict[str, set[str]] = {}
    todo = list(roots)
    while todo:
        edge = todo.pop()
        for package in by_name[edge["name"]]:
            if "version" in edge and package["version"] != edge["version"]:
                continue
            if package["version"] in found.setdefault(package["name"], set()):
                continue
            found[package["name"]].add(package["version"])
            todo += package.get("dependencies", [])
            for extra in edge.get("extra", []):
                todo += package.get("optional-dependencies", {}).get(extra, [])
    return found


def exported(path: Path) -> dict[str, tuple[set[str], set[str]]]:
    """A requirements file's pins: each name with its versions and its hashes."""
    pins: dict[str, tuple[set[str], set[str]]] = {}
    name = ""
    for line in path.read_text().splitlines():
        if match := re.match(r"([A-Za-z0-9][\w.-]*)==([^\s;\\]+)", line):
            name = normal(match.group(1))
            pins.setdefault(name, (set(), set()))[0].add(match.group(2))
        for digest in re.findall(r"--hash=(sha256:\w+)", line):
            pins[name][1].add(digest)
    return pins


def locked_hashes(packages: list[dict], name: str, versions: set[str]) -> set[str]:
    files = [
        file
        for package in packages
        if package["name"] == name and package["version"] in versions
        for file in [package.get("sdist", {}), *package.get("wheels", [])]
    ]
    return {file["hash"] for file in files if "hash" in file}


@pytest.mark.parametrize(
    "path, roots",
    [("requirements.txt", lambda root: root.get("dependencies", [])), ("requirements-uv.txt", lambda root: root["dev-dependencies"]["uv"])],
)
def test_the_exported_requirements_pin_what_uv_lock_locks_with_its_hashes(path, roots):
    """What `pulumi up` installs (requirements.txt) is what the tests ran, hash for hash."""
    pyproject, packages = read(ROOT)
    root = next(p for p in packages if p["name"] == pyproject["project"]["name"])
    locked = closure(packages, roots(root))
    pins = exported(ROOT / path)
    assert {name: versions for name, (versions, _) in pins.items()} == locked, f"{path} is behind uv.lock: run make lock"
    for name, (versions, hashes) in pins.items():
        assert hashes and hashes == locked_hashes(packages, name, versions), f"{path}: {name}'s hashes are not uv.lock's"


def direct_requirements(pyproject: dict) -> list[tuple[str, str]]:
    groups = pyproject.get("dependency-groups", {})
    listed = [("dependencies", line) for line in pyproject["project"]["dependencies"]]
    return listed + [(group, line) for group, lines in groups.items() for line in lines if isinstance(line, str)]


@pytest.mark.parametrize("project", PROJECTS.values(), ids=PROJECTS.keys())
def test_every_direct_dependency_is_locked_within_its_range_with_hashes(project):
    pyproject, packages = read(project)
    for where, line in direct_requirements(pyproject):
        requirement = Requirement(line)
        versions = [p["version"] for p in packages if p["name"] == normal(requirement.name)]
        assert versions and all(v in requirement.specifier for v in versions), f"{where}: {line} locked at {versions}"
    unhashed = [p["name"] for p in packages if "virtual" not in p["source"] and not locked_hashes(packages, p["name"], {p["version"]})]
    assert unhashed == []


@pytest.mark.parametrize(
    "line, installed, held",
    [
        ("pulumi>=3.260,<4", "3.260.0", True),
        ("types-grpcio>=1.85,<2", "1.85.0.20261028", True),  # a stub package's dated release
        ("azure-mgmt-compute>=38,<40", "38.0.0", True),
        ("azure-mgmt-compute>=38,<40", "39.0.0", False),  # a bound nothing tested
        ("pulumi>=3.260,<4", "3.261.0", False),
    ],
)
def test_make_lowest_fails_a_dependency_that_resolved_above_its_lower_bound(line, installed, held):
    from tools.lowest import held as at_bound

    assert at_bound(Requirement(line), installed)[0] is held


def test_make_lowest_checks_the_program_and_the_test_group():
    from tools.lowest import direct

    names = {Requirement(line).name for line in direct(tomllib.loads((ROOT / "pyproject.toml").read_text()), "test")}
    assert {"pulumi", "pydantic", "pytest", "hypothesis"} <= names and "ruff" not in names and "torch" not in names
