"""A project's stack files as the Pulumi CLI reads them before it starts the program:
`Pulumi.yaml` (provider values and the declared defaults of project keys) merged with
`Pulumi.<stack>.yaml`, handed over as the flat `namespace:key -> string` map the CLI gives a
program (the mock engine applies no `Pulumi.yaml` defaults by itself). A stack file that is
not such a file is one line. What its values mean is components/config's alone: the offline
render reads the files a stack names from the parsed config (tools/azure_mocks.py)."""

from __future__ import annotations

import copy
import functools
import json
import math
import re
from decimal import Decimal
from pathlib import Path
from typing import Any

import yaml

from components import files
from components.errors import OneLine
from tools import stack_yaml

ROOT = Path(__file__).resolve().parent.parent
PROJECT_FILE = ROOT / "Pulumi.yaml"
# The folder a stack's name is looked up in: the project's, where the CLI reads
# `Pulumi.<stack>.yaml` beside `Pulumi.yaml`. The tests look names up in their own copies of
# the shipped stacks instead (tests/fixtures/stacks/, set by tests/conftest.py), and reach
# the project's stack files, whatever their names, through stacks() and explicit paths.
STACK_FOLDER = ROOT


def as_cli_string(value: Any) -> str:
    """A config value as the CLI hands it to a program (pulumi/pulumi sdk/go/common/resource/
    config/object.go `unmarshalObject`, `MarshalString`): a string as it is; null as "" (a
    stack file's key set to null); anything else as Go's encoding/json writes it (keys sorted,
    no spaces). Infinity and NaN, which the CLI cannot load (stack_yaml refuses them first),
    are written as Python's json writes them, so that a test can still hand them to the program."""
    if isinstance(value, str):
        return value
    if value is None:
        return ""
    try:
        return cli_json(value)
    except ValueError:
        return json.dumps(value, sort_keys=True, separators=(",", ":"))


# No library writes JSON as Go's encoding/json does, which is what the program gets from the CLI.
def _go_float(value: float, json_format: bool) -> str:
    """Go's shortest form of a float: encoding/json's (`e` below 1e-6 and from 1e21), or
    `%v`'s (`'g'`: `e` below 1e-4 and from 1e6)."""
    if not math.isfinite(value):
        raise ValueError(f"json: unsupported value: {value}")
    digits = Decimal(repr(value))
    exponent = digits.adjusted()
    small, large = (-7, 21) if json_format else (-5, 6)
    if value != 0 and (exponent <= small or exponent >= large):
        mantissa, _, power = f"{digits.normalize():e}".partition("e")
        text = f"{mantissa}e{power[0]}{int(power[1:]):02d}"
        return re.sub(r"e-0(\d)$", r"e-\1", text) if json_format else text
    text = format(digits, "f")
    return text.rstrip("0").rstrip(".") if "." in text else text


def go_key(key: Any) -> str:
    """A mapping key as unmarshalObject names it: `fmt.Sprintf("%v", key)`."""
    if isinstance(key, str):
        return key
    if key is None:
        return "<nil>"
    if isinstance(key, bool):
        return "true" if key else "false"
    if isinstance(key, float):
        return _go_float(key, json_format=False)
    return str(key)


def _go_string(text: str) -> str:
    quoted = json.dumps(text, ensure_ascii=False)
    for char, escape in (("<", "\\u003c"), (">", "\\u003e"), ("&", "\\u0026"), ("\u2028", "\\u2028"), ("\u2029", "\\u2029")):
        quoted = quoted.replace(char, escape)
    return quoted


def cli_json(value: Any) -> str:
    """`value` as Go's encoding/json writes it (json.Marshal): keys sorted, no spaces, `<`, `>`
    and `&` escaped, floats in Go's shortest form. Infinity and NaN raise ValueError."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        return _go_float(value, json_format=True)
    if isinstance(value, str):
        return _go_string(value)
    if isinstance(value, dict):
        members = sorted((go_key(k), v) for k, v in value.items())
        return "{" + ",".join(f"{_go_string(k)}:{cli_json(v)}" for k, v in members) + "}"
    if isinstance(value, (list, tuple)):
        return "[" + ",".join(cli_json(v) for v in value) + "]"
    raise TypeError(f"no JSON for {type(value).__name__}")


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
