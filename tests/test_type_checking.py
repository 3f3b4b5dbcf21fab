"""The type checker reads only the provider modules the program uses (pyproject.toml's
[tool.mypy] overrides): every one the code imports or reaches by attribute is followed, so its
calls are checked, and the rest of each provider package is skipped, which is what makes a cold
mypy (before every `pulumi preview` and `up` on a fresh checkout) take seconds, not minutes.
The settings are read by mypy's own parser and resolved per module by mypy's own rules."""

from __future__ import annotations

import ast
import functools
import io
import re
from collections.abc import Iterator
from pathlib import Path

import pulumi_azure_native
import pulumi_kubernetes
import pytest
from mypy.config_parser import parse_config_file
from mypy.options import Options
from support.sources import parsed, python_files

ROOT = Path(__file__).resolve().parent.parent
PROVIDERS = {"pulumi_azure_native": Path(pulumi_azure_native.__file__).parent, "pulumi_kubernetes": Path(pulumi_kubernetes.__file__).parent}


@functools.cache
def mypy_options() -> Options:
    """The settings, read once (treat them as read-only)."""
    options = Options()
    parse_config_file(options, lambda: None, str(ROOT / "pyproject.toml"), io.StringIO(), io.StringIO())
    return options


def is_module(name: str) -> bool:
    root, *rest = name.split(".")
    if root not in PROVIDERS:
        return False
    path = PROVIDERS[root].joinpath(*rest)
    return (path / "__init__.py").is_file() or path.with_suffix(".py").is_file()


def provider_modules(source: str | Path) -> Iterator[str]:
    """Every provider module a source (or a file's, parsed once a session) names: by import, and
    by attribute from a name bound to one (`k8s.core.v1.Namespace` names pulumi_kubernetes, .core
    and .core.v1)."""
    tree = parsed(source) if isinstance(source, Path) else ast.parse(source)
    bound: dict[str, str] = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                if is_module(alias.name):
                    yield alias.name
                    bound[alias.asname or alias.name.split(".")[0]] = alias.name if alias.asname else alias.name.split(".")[0]
        elif isinstance(node, ast.ImportFrom) and node.module and is_module(node.module):
            yield node.module
            for alias in node.names:
                if is_module(f"{node.module}.{alias.name}"):
                    yield f"{node.module}.{alias.name}"
                    bound[alias.asname or alias.name] = f"{node.module}.{alias.name}"
    for node in ast.walk(tree):
        if isinstance(node, ast.Attribute):
            chain = []
            inner: ast.expr = node
            while isinstance(inner, ast.Attribute):
                chain.append(inner.attr)
                inner = inner.value
            if isinstance(inner, ast.Name) and inner.id in bound:
                name = bound[inner.id]
                for attr in reversed(chain):
                    if not is_module(f"{name}.{attr}"):
                        break
                    name = f"{name}.{attr}"
                    yield name


def checked_sources() -> Iterator[Path]:
    """The files `mypy .` checks: every .py under the root but what [tool.mypy] excludes."""
    exclude = [re.compile(pattern) for pattern in mypy_options().exclude]
    for path in python_files(ROOT):
        relative = path.relative_to(ROOT).as_posix()
        if not any(part.startswith(".") for part in path.relative_to(ROOT).parts) and not any(p.search(relative) for p in exclude):
            yield path


def not_followed(modules: set[str]) -> list[str]:
    options = mypy_options()
    return sorted(module for module in modules if options.clone_for_module(module).follow_imports != "normal")


def test_every_provider_module_the_program_uses_is_type_checked():
    used = {module for path in checked_sources() for module in provider_modules(path)}
    assert {"pulumi_azure_native.containerservice", "pulumi_kubernetes.core.v1"} <= used
    assert not_followed(used) == []


@pytest.mark.parametrize(
    "source",
    [
        "import pulumi_kubernetes as k8s\nk8s.storage.v1.StorageClass('s')",
        "from pulumi_azure_native import network\nnetwork.VirtualNetwork('v')",
        "import pulumi_azure_native.compute",
        "from pulumi_kubernetes.policy.v1 import PodDisruptionBudget",
    ],
    ids=["a kubernetes group by attribute", "an azure-native module by name", "an import of a module", "an import from a module"],
)
def test_code_that_used_a_module_the_type_checker_skips_would_fail_the_test_above(source: str):
    assert not_followed(set(provider_modules(source)))


def test_the_rest_of_each_provider_package_is_skipped():
    """What makes a cold run short: the modules each package's __init__ imports for the type
    checker alone (`if typing.TYPE_CHECKING:`), which the program never uses, are not read."""
    options = mypy_options()
    for module in (
        "pulumi_azure_native.awsconnector",
        "pulumi_azure_native.network",
        "pulumi_kubernetes.storage.v1",
        "pulumi_kubernetes.yaml",
    ):
        assert options.clone_for_module(module).follow_imports == "skip", module
    init = (PROVIDERS["pulumi_azure_native"] / "__init__.py").read_text(encoding="utf-8")
    assert "if typing.TYPE_CHECKING:\n    import pulumi_azure_native.aad as __aad" in init
