"""Several Checkov runs for the price of one start: `python tools/checkov_runs.py ARGS [-- ARGS ...]`.

Checkov spends about 5 s of a run importing itself (its checks for every framework) and well
under a second checking this project's files. `make lint` runs it once per stack with that
stack's settings, so this script imports Checkov once and forks a child per run: each child
is a fresh copy of the imported process and runs `checkov ARGS` exactly as the command line
would (checkov.main.Checkov, the class behind the `checkov` command). One Checkov object does
not survive a second run in one process (its results carry over), hence the fork. The exit
code is the first failing run's, else 0. Runs on Checkov's virtualenv's Python (.venv-checkov); POSIX only.

A file to scan that does not exist stops everything with exit 2, before Checkov is even
imported: one line per stack whose snapshot lacks it, naming `make snapshots`. Checkov itself logs "Template file not found" and
still exits 0 (Checkov 3.3.30, as security/checkov/pyproject.toml pins it): the Kubernetes runner's
parser, checkov/kubernetes/parser/parser.py parse(), returns None for a missing file and
checkov/kubernetes/kubernetes_utils.py get_files_definitions() drops the file without a
word; the ARM runner, checkov/arm/utils.py get_files_definitions(), records it only as a
parsing error, and checkov/common/output/report.py Report.get_exit_code() fails a run on
parsing errors only when CKV_PARSE_ERROR_FAIL=true, else on failed checks alone. A stack a
team added without `make snapshots` would then pass `make lint` with nothing checked.
"""

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
