"""A file a stack names (a saved answer of Azure, `Pulumi.<stack>.yaml`), read as untrusted
input: a regular file only, never more than a bound, and each failure said in words that the
caller puts in its one line (`invalid config <key> = <path>: <why>`).

Standard library only: `make lint` runs tools/stack_yaml.py from .venv-lint, which has
neither Pulumi nor the program's own packages."""

from __future__ import annotations

import os
import stat
from pathlib import Path

# The largest file the program reads: the biggest saved answer (`az vm list-skus --all` for one
# region) is a few MiB; 64 MiB is well above it, and small enough that reading it whole can never
# take the machine's memory (a /dev/zero, a file that grows while it is read).
LIMIT = 64 * 2**20


class Unreadable(ValueError):
    """Why a file cannot be read, in words: `is a FIFO, not a regular file`."""


KINDS = {stat.S_IFDIR: "a directory", stat.S_IFIFO: "a FIFO (a named pipe)", stat.S_IFCHR: "a character device"}
KINDS |= {stat.S_IFBLK: "a block device", stat.S_IFSOCK: "a socket"}


def kind(mode: int) -> str:
    """What a file that is not a regular one is, as `ls -l` would tell it."""
    return KINDS.get(stat.S_IFMT(mode), "not a regular file")


def _limit() -> str:
    return f"{LIMIT // 2**20} MiB" if LIMIT % 2**20 == 0 else f"{LIMIT:,} bytes"


def _why(error: OSError) -> str:
    return f"cannot be read ({error.strerror or error})"


def problem(path: str | Path) -> str | None:
    """What keeps `path` from being read as a regular file (None: nothing). Only a stat, so it never
    blocks: opening a FIFO waits for a writer (fifo(7)), and a device such as /dev/zero never ends."""
    try:
        found = os.stat(path)
    except ValueError:  # os.stat's "embedded null byte"
        return "the path contains a NUL character, which no file name can"
    except OSError as error:  # missing, a symlink loop (ELOOP), a name too long
        return _why(error)
    if not stat.S_ISREG(found.st_mode):
        return f"is {kind(found.st_mode)}, not a regular file"
    if found.st_size > LIMIT:
        return f"is {found.st_size:,} bytes, more than the {_limit()} a file the program reads may be"
    return None


def read_bytes(path: str | Path) -> bytes:
    """The file's bytes: a regular file of at most LIMIT bytes, or Unreadable. Opened without
    blocking and checked again once open: a file swapped for a FIFO after the stat cannot hang the run."""
    if why := problem(path):
        raise Unreadable(why)
    try:
        descriptor = os.open(path, os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0))
    except OSError as error:
        raise Unreadable(_why(error)) from None
    with os.fdopen(descriptor, "rb") as file:
        opened = os.fstat(file.fileno())
        if not stat.S_ISREG(opened.st_mode):
            raise Unreadable(f"is {kind(opened.st_mode)}, not a regular file")
        try:
            data = file.read(LIMIT + 1)
        except OSError as error:
            raise Unreadable(_why(error)) from None
    if len(data) > LIMIT:  # it grew after the stat
        raise Unreadable(f"is more than the {_limit()} a file the program reads may be")
    return data


def depth_problem(value: object, limit: int) -> str | None:
    """Where `value` (decoded JSON or YAML) is nested deeper than `limit` objects and lists, walked
    without recursion, or None: a deeper one would end in a RecursionError in whatever walks it next."""
    stack: list[tuple[object, int]] = [(value, 0)]
    while stack:
        item, depth = stack.pop()
        if isinstance(item, (dict, list)):
            if depth >= limit:
                return f"it is nested more than {limit} levels deep"
            stack.extend((inner, depth + 1) for inner in (item.values() if isinstance(item, dict) else item))
    return None
