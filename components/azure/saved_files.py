"""Saved answers of Azure that a stack names in its config (`aks-gpu:preflight.skusFile`,
`usageFile`, `pricesFile`, `clusterFile`): read once, and refused in one line that names the
key, the file and what it should hold, never a traceback and never silently empty."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Callable, Iterable, Optional

from components.errors import ConfigError


def shown(path: Path) -> str:
    """The path as the stack file would name it: relative to the project directory, where
    Pulumi runs the program, when it is inside it."""
    try:
        return str(path.resolve().relative_to(Path.cwd().resolve()))
    except ValueError:
        return str(path)


def refused(key: str, path: Path, why: str) -> ConfigError:
    return ConfigError(f"invalid config {key} = {shown(path)}: {why}")


def read_json(key: str, path: Path, holds: str) -> Any:
    """The file's JSON; `holds` says what it should be, for the message."""
    try:
        text = path.read_text()
    except OSError as error:
        raise refused(key, path, f"cannot be read ({error.strerror}); expected {holds}") from None
    try:
        return json.loads(text)
    except json.JSONDecodeError as error:
        raise refused(key, path, f"not JSON (line {error.lineno}, column {error.colno}: {error.msg}); expected {holds}") from None


def check_items(key: str, path: Path, items: Any, holds: str, bad: Callable[[dict[str, Any]], Optional[str]]) -> list[dict[str, Any]]:
    """`items` as a list of objects of which `bad` finds nothing wrong (it names what is)."""
    if not isinstance(items, list):
        raise refused(key, path, f"expected {holds}, found {type(items).__name__}")
    for index, item in enumerate(items):
        problem = "not an object" if not isinstance(item, dict) else bad(item)
        if problem:
            raise refused(key, path, f"item {index}: {problem}; expected {holds}")
    return items


def missing(item: dict[str, Any], members: Iterable[str]) -> Optional[str]:
    absent = [m for m in members if m not in item]
    return f"no {', '.join(absent)}" if absent else None


def number(item: dict[str, Any], member: str) -> Optional[str]:
    value = item.get(member)
    ok = isinstance(value, (int, float)) and not isinstance(value, bool)
    return None if ok else f"{member} is {json.dumps(value)}, not a number"
