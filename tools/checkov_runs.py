"""Several Checkov runs for the price of one start: `python tools/checkov_runs.py ARGS [-- ARGS ...]`.

Checkov spends about 5 s of a run importing itself (its checks for every framework) and well
under a second checking this project's files. `make lint` runs it once per stack with that
stack's settings, so this script imports Checkov once and forks a child per run: each child
is a fresh copy of the imported process and runs `checkov ARGS` exactly as the command line
would (checkov.main.Checkov, the class behind the `checkov` command). One Checkov object does
not survive a second run in one process (its results carry over), hence the fork. The exit
code is the first failing run's, else 0. Runs on the lint virtualenv's Python; POSIX only.
"""

from __future__ import annotations

import os
import sys


def runs(argv: list[str]) -> list[list[str]]:
    groups: list[list[str]] = [[]]
    for arg in argv:
        if arg == "--":
            groups.append([])
        else:
            groups[-1].append(arg)
    return [g for g in groups if g]


def main(argv: list[str]) -> int:
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
