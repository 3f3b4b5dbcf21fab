"""Several Checkov runs for the price of one start: `python tools/checkov_runs.py ARGS [-- ARGS ...]`.
Checkov is imported once and a child is forked per run, each running `checkov ARGS` as the command
line would, on Checkov's own virtualenv (.venv-checkov); the exit code is the first failing run's, else 0. A file to scan that does not exist
stops everything with exit 2, since Checkov would pass it with nothing checked. Why, with Checkov's
sources: docs/design/tools.md, "One Checkov start for every stack"."""

from __future__ import annotations

import os
import re
import sys


def runs(argv: list[str]) -> list[list[str]]:
    groups: list[list[str]] = [[]]
    for arg in argv:
        if arg == "--":
            groups.append([])
        else:
            groups[-1].append(arg)
    return [g for g in groups if g]


def files(args: list[str]) -> list[str]:
    """The files a run scans: every value of `-f`/`--file` (append, nargs="+" in Checkov's
    checkov/common/util/ext_argument_parser.py), and `--file=PATH`."""
    found, taking = [], False
    for arg in args:
        if arg in ("-f", "--file"):
            taking = True
        elif arg.startswith("--file="):
            found.append(arg.removeprefix("--file="))
            taking = False
        elif taking and not arg.startswith("-"):
            found.append(arg)
        else:
            taking = False
    return found


def missing(argv: list[str]) -> list[str]:
    """One line per stack whose snapshot, tests/snapshots/<stack>/, lacks a file to scan,
    naming the fix; one line per other missing file."""
    stacks: dict[str, list[str]] = {}
    others: list[str] = []
    for path in dict.fromkeys(f for args in runs(argv) for f in files(args)):
        if os.path.isfile(path):
            continue
        snapshot = re.fullmatch(r"(?:\./)?tests/snapshots/([^/]+)/([^/]+)", path)
        if snapshot:
            stacks.setdefault(snapshot[1], []).append(snapshot[2])
        else:
            others.append(f"checkov: {path} is missing: nothing to check")
    return [
        f"checkov: stack {stack} has no snapshot (tests/snapshots/{stack}/: {', '.join(names)} missing): "
        f"run `make snapshots`, then commit tests/snapshots/{stack}/"
        for stack, names in stacks.items()
    ] + others


def main(argv: list[str]) -> int:
    problems = missing(argv)
    if problems:
        print("\n".join(problems), file=sys.stderr)
        return 2
    # Run as a script, this file's directory is sys.path[0], and its schema.py would shadow
    # the `schema` package Checkov imports.
    here = os.path.dirname(os.path.abspath(__file__))
    sys.path[:] = [p for p in sys.path if os.path.abspath(p or ".") != here]
    from checkov.main import Checkov

    for args in runs(argv):
        sys.stdout.flush()
        pid = os.fork()
        if pid == 0:  # the child: one checkov run, then out without the parent's cleanup
            code = 1
            try:
                code = Checkov(argv=args).run() or 0
            finally:
                sys.stdout.flush()
                sys.stderr.flush()
                os._exit(code)
        _, status = os.waitpid(pid, 0)
        code = os.waitstatus_to_exitcode(status)
        if code != 0:
            print(f"checkov {' '.join(args)}: exit {code}", file=sys.stderr)
            return code
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
