"""A project's stack files as the Pulumi CLI reads them before it starts the program:
`Pulumi.yaml` (provider values and the declared defaults of project keys) merged with
`Pulumi.<stack>.yaml`, handed over as the flat `namespace:key -> string` map the CLI gives a
program (the mock engine applies no `Pulumi.yaml` defaults by itself). A stack file that is
not such a file is one line. What its values mean is components/config's alone: the offline
render reads the files a stack names from the parsed config (tools/azure_mocks.py)."""

from __future__ import annotations

import copy
import functools
from pathlib import Path
from typing import Any

import yaml

from components import files
from components.config.cli_values import as_cli_string, go_key
from components.errors import OneLine
from tools import stack_yaml

ROOT = Path(__file__).resolve().parent.parent
PROJECT_FILE = ROOT / "Pulumi.yaml"
# The folder a stack's name is looked up in: the project's, where the CLI reads
# `Pulumi.<stack>.yaml` beside `Pulumi.yaml`. The tests look names up in their own copies of
# the shipped stacks instead (tests/fixtures/stacks/, set by tests/conftest.py), and reach
# the project's stack files, whatever their names, through stacks() and explicit paths.
STACK_FOLDER = ROOT


def _yaml_file(path: Path) -> Any:
    """A YAML file's contents as Pulumi's CLI reads them (tools/stack_yaml.py), parsed once per
    version of the file (a test session reads the project and stack files for every run), with
    libyaml when PyYAML has it. A value the CLI reads otherwise than written (`017`, a date,
    `.inf`), a key given twice, or a file that is not YAML, is one line that says what to write."""
    # Read as every file a stack names is (components/files.py): a regular file, bounded.
    if why := files.problem(path):
        raise SavedFileError(f"{path.name}: {why}")
    stat = path.stat()
    try:
        return copy.deepcopy(_parsed_yaml(path, stat.st_mtime_ns, stat.st_size))
    except files.Unreadable as why:
        raise SavedFileError(f"{path.name}: {why}") from None
    except UnicodeDecodeError as error:
        raise SavedFileError(f"{path.name}: not UTF-8 text (byte {error.start}), which a stack file is") from None
    except yaml.YAMLError as error:
        raise SavedFileError(stack_yaml.not_yaml(path.name, error)) from None
    except stack_yaml.Refused as refused:
        raise SavedFileError(refused.line(path.name, None if path.name == PROJECT_FILE.name else project_name())) from None


@functools.cache
def _parsed_yaml(path: Path, mtime_ns: int, size: int) -> Any:
    return stack_yaml.read(files.read_bytes(path).decode("utf-8"))


def project_name(project_file: Path = PROJECT_FILE) -> str:
    return _yaml_file(project_file)["name"]


def project_config(project_file: Path = PROJECT_FILE) -> dict[str, str]:
    """What `Pulumi.yaml` (or another program's, `project_file`) contributes: provider values, and defaults of project keys."""
    project = _yaml_file(project_file)
    name = project["name"]
    merged: dict[str, str] = {}
    for key, decl in (project.get("config") or {}).items():
        if ":" in key:  # another namespace: a value, plain or as {value: ...}
            value = decl.get("value") if isinstance(decl, dict) else decl
        else:  # a project key: its declared default, if any
            key = f"{name}:{key}"
            value = decl.get("default") if isinstance(decl, dict) else decl
        if value is not None:
            merged[key] = as_cli_string(value)
    return merged


class SavedFileError(OneLine):
    """A stack file that the CLI could not load: one line."""


def stack_config(stack: str, path: Path | None = None, project_file: Path = PROJECT_FILE) -> dict[str, str]:
    """`Pulumi.<stack>.yaml` (or `path`) over `Pulumi.yaml` (or another program's, `project_file`), as the CLI merges them."""
    path = path or stack_file(stack)
    if not path.exists():
        raise FileNotFoundError(f"no stack file {path.name}")
    name = project_name(project_file)
    merged = project_config(project_file)
    document = _yaml_file(path) or {}
    config = document.get("config") if isinstance(document, dict) else None
    if not isinstance(document, dict) or not isinstance(config or {}, dict):
        raise SavedFileError(f"{path.name}: expected a mapping with a `config:` mapping of keys to values (Pulumi's stack file format)")
    for key, value in (config or {}).items():
        full = go_key(key) if ":" in go_key(key) else f"{name}:{go_key(key)}"
        merged[full] = as_cli_string(value)
    return merged


def stack_file(stack: str) -> Path:
    """The file a stack's name means: `Pulumi.<stack>.yaml` in STACK_FOLDER."""
    return STACK_FOLDER / f"Pulumi.{stack}.yaml"


def stacks(folder: Path | None = None) -> list[str]:
    """The stacks this repository defines (one `Pulumi.<stack>.yaml` each, whatever their
    names: none, if a team removed the samples and added none yet), or those in `folder`."""
    return sorted(p.name[len("Pulumi.") : -len(".yaml")] for p in (folder or ROOT).glob("Pulumi.*.yaml"))
