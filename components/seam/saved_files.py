"""Saved answers of Azure that a stack names in its config (`aks-gpu:preflight.skusFile`,
`usageFile`, `pricesFile`, `clusterFile`, `kubernetesFile`, `stateFile`): read once, and refused in one line that names the
key, the file and what it should hold, never a traceback and never silently empty."""

from __future__ import annotations

import json
import math
import os
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

from components import files
from components.config.messages import finite_float, refuse_constant
from components.errors import ConfigError, cut

# How deep a saved answer may nest (components/files.py `depth_problem`): Azure's deepest
# shape the program reads is some six levels, and Python's own walks stop near a thousand.
DEPTH = 32


def shown(path: Path) -> str:
    """The path as the stack file would name it: relative to the project directory where it is inside it."""
    # os.path.abspath, not Path.resolve: it follows no symlink, so a symlink loop is named, not a RuntimeError.
    try:
        return str(Path(os.path.abspath(path)).relative_to(Path.cwd()))
    except ValueError:
        return str(path)


def refused(key: str, path: Path, why: str) -> ConfigError:
    """One line; a long path is cut, and one with a character that is not printable is quoted, escaped."""
    where = shown(path)
    return ConfigError(f"invalid config {key} = {cut(where if where.isprintable() else repr(where))}: {why}")


def read_json(key: str, path: Path, holds: str, depth: int = DEPTH) -> Any:
    """The file's JSON; `holds` says what it should be, for the message. JSON is UTF-8 text
    (RFC 8259; a byte-order mark, which Windows tools write, is taken), and NaN or Infinity
    are not JSON, though Python's parser takes them: a saved answer of Azure never has them,
    and a NaN price would switch the cost limit off."""
    try:
        text = files.read_bytes(path).decode("utf-8-sig")
    except files.Unreadable as why:
        raise refused(key, path, f"{why}; expected {holds}") from None
    except UnicodeDecodeError as error:
        raise refused(key, path, f"not UTF-8 text (byte {error.start}); expected {holds}") from None
    try:
        found = json.loads(text, parse_constant=refuse_constant, parse_float=finite_float)
    except json.JSONDecodeError as error:
        raise refused(key, path, f"not JSON (line {error.lineno}, column {error.colno}: {error.msg}); expected {holds}") from None
    except (ValueError, RecursionError) as error:
        raise refused(key, path, f"not JSON ({str(error)[:100]}); expected {holds}") from None
    if deep := files.depth_problem(found, depth):
        raise refused(key, path, f"{deep}; expected {holds}")
    return found


def check_items(key: str, path: Path, items: Any, holds: str, bad: Callable[[dict[str, Any]], str | None]) -> list[dict[str, Any]]:
    """`items` as a list of objects of which `bad` finds nothing wrong (it names what is)."""
    if not isinstance(items, list):
        raise refused(key, path, f"expected {holds}, found {type(items).__name__}")
    for index, item in enumerate(items):
        problem = "not an object" if not isinstance(item, dict) else bad(item)
        if problem:
            raise refused(key, path, f"item {index}: {problem}; expected {holds}")
    return items


def missing(item: dict[str, Any], members: Iterable[str]) -> str | None:
    absent = [m for m in members if m not in item]
    return f"no {', '.join(absent)}" if absent else None


def number(item: dict[str, Any], member: str, least: float | None = None) -> str | None:
    """A finite number (not a bool), at least `least` when given."""
    value = item.get(member)
    ok = _finite(value)
    if ok and (least is None or value >= least):  # type: ignore[operator]  # ok: value is an int or a float
        return None
    return f"{member} is {json.dumps(value)}, not a number" + (f" of at least {least:g}" if least is not None and ok else "")


def _finite(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)


# What a member may be, for `typed`: its words, and the test of it.
STRING, NUMBER, OBJECT, STRINGS, OBJECTS, BOOL = (
    "a string",
    "a number",
    "an object",
    "a list of strings",
    "a list of objects",
    "true or false",
)
KINDS: dict[str, Callable[[Any], bool]] = {
    STRING: lambda value: isinstance(value, str),
    NUMBER: _finite,
    BOOL: lambda value: isinstance(value, bool),
    OBJECT: lambda value: isinstance(value, dict),
    STRINGS: lambda value: isinstance(value, list) and all(isinstance(v, str) for v in value),
    OBJECTS: lambda value: isinstance(value, list) and all(isinstance(v, dict) for v in value),
}


def typed(item: dict[str, Any], kinds: dict[str, str]) -> str | None:
    """What member of `item` is not of its kind (null counts as absent), or None: every member the
    program reads of an untrusted file is checked before it is used, so a wrong type is one line."""
    for member, kind in kinds.items():
        value = item.get(member)
        if value is not None and not KINDS[kind](value):
            return f"{member} is {json.dumps(value)[:80]}, not {kind}"
    return None
