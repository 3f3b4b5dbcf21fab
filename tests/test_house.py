"""The house stays easy to walk: no function over a screenful, no import circle."""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SOURCES = sorted([ROOT / "__main__.py", *(ROOT / "components").rglob("*.py"), *(ROOT / "tools").glob("*.py")])
MAX_FUNCTION_LINES = 100


def test_no_function_is_longer_than_a_hundred_lines():
    long = []
    for path in SOURCES:
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                lines = node.end_lineno - node.lineno + 1
                if lines > MAX_FUNCTION_LINES:
                    long.append(f"{path.relative_to(ROOT)}:{node.lineno} {node.name} ({lines} lines)")
    assert long == []


def module_name(path: Path) -> str:
    """components/azure/prices.py -> components.azure.prices (a package: its __init__'s name)."""
    parts = path.relative_to(ROOT).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


COMPONENTS = sorted((ROOT / "components").rglob("*.py"))


def imports_of(path: Path) -> set[str]:
    """The components modules a module imports, at run time or for type checking:
    `from components.config import cluster` imports the module components.config.cluster,
    `from components.config import parse` the package components.config."""
    modules = {module_name(p) for p in COMPONENTS}
    found = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.ImportFrom) and node.module and node.module.startswith("components"):
            found |= {f"{node.module}.{a.name}" if f"{node.module}.{a.name}" in modules else node.module for a in node.names}
        elif isinstance(node, ast.Import):
            found |= {alias.name for alias in node.names if alias.name.startswith("components")}
    return found


def test_the_components_import_no_circle():
    graph = {module_name(p): imports_of(p) for p in COMPONENTS}
    graph = {name: {m for m in imports if m in graph and m != name} for name, imports in graph.items()}

    def reaches(start: str, target: str, seen: frozenset = frozenset()) -> bool:
        return any(n == target or (n not in seen and reaches(n, target, seen | {n})) for n in graph.get(start, ()))

    assert [m for m in graph if reaches(m, m)] == []


def lock_pins(lock: str) -> dict[str, list[str]]:
    pins: dict[str, list[str]] = {}
    for line in lock.split("\n"):
        if line and not line.startswith((" ", "#")):
            name, _, rest = line.partition("==")
            pins.setdefault(name.strip().lower().replace("_", "-"), []).append(rest.split()[0].rstrip("\\").split(";")[0])
    return pins


def test_the_tests_run_the_versions_the_program_is_locked_to():
    program = lock_pins((ROOT / "requirements.txt").read_text())
    tests = lock_pins((ROOT / "requirements-test.txt").read_text())
    assert {name: tests.get(name) for name in program} == program


def test_every_lock_pins_each_direct_dependency_within_its_range_with_hashes():
    """`make lock` output: requirements*.in name the ranges, requirements*.txt the versions."""
    from packaging.requirements import Requirement

    for source in sorted(ROOT.glob("requirements*.in")):
        lock = (ROOT / source.name.replace(".in", ".txt")).read_text()
        pins = lock_pins(lock)
        assert lock.count("--hash=sha256:") >= len(pins), f"{source.name}: every pin has a hash"
        for line in source.read_text().splitlines():
            if line.strip() and not line.startswith(("#", "-")):  # -r / -c: other files
                requirement = Requirement(line)
                versions = pins.get(requirement.name.lower().replace("_", "-"), [])
                assert versions and all(v in requirement.specifier for v in versions), f"{source.name}: {line}"
