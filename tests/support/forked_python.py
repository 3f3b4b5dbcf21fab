"""`python -W always -c CODE ARGS` as a test starts it to see what a person sees (its stderr, its
exit status), without a second of imports each time: one Python makes the imports such a
process makes before it does anything (the language host's, the program's: the top-level
import statements of their files, `imports_of`), then forks a child per command. The child is
that process from there on: its stdout and stderr are files of its own, `sys.argv` and a fresh
`__main__` are what `-c` gives, the code runs as `-c` runs it, and it exits as a Python exits
(`sys.exit`'s status, an uncaught exception's traceback with two frames of the parent's loop
above the code's, the warnings and "Exception ignored" lines of its shutdown). What the imports
would have printed is not lost: the parent's own stderr must stay empty, or every command fails
with it. The modules are imported, not run: a `runpy.run_module` of one of them would warn
that it is in sys.modules already, so the statements are the files' imports, not the files.
What the imports made is frozen for the garbage collector once they are done, as the suite's
workers freeze theirs (tests/conftest.py), after a collection in the parent (where what it
finalizes would warn on the parent's stderr): a child's collections walk only what its command
made, which halves each child's CPU."""

from __future__ import annotations

import ast
import json
import select
import subprocess
import sys
import tempfile
from collections.abc import Iterator, Sequence
from pathlib import Path

# Runs as `python <flags> -c PARENT IMPORTS`: makes the imports, says so, then one command per
# line of stdin ({"code", "args", "stdout", "stderr"}), answering each with the exit status.
# The child runs the code in the `__main__` the imports saw (dill keeps the one it was imported
# under, as any `import __main__` does), its dict as a `-c` process starts with it, then
# returns from the loop and ends the script: from there on it is the `-c` process.
PARENT = """
initial = dict(globals())
def serve(initial):
    import gc, json, os, sys
    exec(sys.argv[1], {"__name__": "imports"})
    gc.collect()
    gc.freeze()
    sys.argv = ["-c"]
    print("ready", flush=True)
    for line in sys.stdin:
        command = json.loads(line)
        sys.stdout.flush()
        sys.stderr.flush()
        child = os.fork()
        if child == 0:
            for fd, path in ((1, command["stdout"]), (2, command["stderr"])):
                opened = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
                os.dup2(opened, fd)
                os.close(opened)
            sys.argv = ["-c", *command["args"]]
            main = sys.modules["__main__"].__dict__
            main.clear()
            main.update(initial)
            exec(compile(command["code"], "<string>", "exec"), main)
            return
        _, status = os.waitpid(child, 0)
        print(json.dumps(os.waitstatus_to_exitcode(status)), flush=True)
serve(initial)
"""


class ForkedPython:
    """The parent: `run(code, *args)` answers as `subprocess.run([*flags, "-c", code, *args],
    capture_output=True, text=True)` would."""

    def __init__(self, flags: Sequence[str], imports: str, cwd: Path, folder: Path) -> None:
        self.flags, self.folder, self.count = list(flags), folder, 0
        self.stderr = folder / "parent.stderr"
        with self.stderr.open("w") as stderr:
            self.process = subprocess.Popen(
                [*self.flags, "-c", PARENT, imports], cwd=cwd, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=stderr, text=True
            )
        assert self._answer(timeout=120) == "ready\n"

    def _answer(self, timeout: float) -> str:
        """The parent's next line, once its stderr is known to be empty."""
        assert self.process.stdout is not None
        ready, _, _ = select.select([self.process.stdout], [], [], timeout)
        line = self.process.stdout.readline() if ready else ""
        said = self.stderr.read_text()
        assert said == "", f"the parent Python printed what every child would have printed: {said}"
        assert line, f"the parent Python did not answer within {timeout} s (exit status {self.process.poll()})"
        return line

    def run(self, code: str, *args: str, timeout: float = 300) -> subprocess.CompletedProcess:
        assert self.process.stdin is not None
        self.count += 1
        out, err = self.folder / f"{self.count}.stdout", self.folder / f"{self.count}.stderr"
        self.process.stdin.write(json.dumps({"code": code, "args": list(args), "stdout": str(out), "stderr": str(err)}) + "\n")
        self.process.stdin.flush()
        status = json.loads(self._answer(timeout))
        return subprocess.CompletedProcess([*self.flags, "-c", code, *args], status, out.read_text(), err.read_text())

    def close(self) -> None:
        assert self.process.stdin is not None
        self.process.stdin.close()
        self.process.wait(timeout=60)
        assert self.process.stdout is not None
        self.process.stdout.close()
        said = self.stderr.read_text()
        assert (self.process.returncode, said) == (0, ""), f"the parent Python ended with {self.process.returncode}: {said}"


def imports_of(*files: Path) -> str:
    """The top-level import statements of `files`, in order (`from __future__` left out: it
    changes how a file compiles, and imports nothing)."""
    statements = [
        ast.unparse(node)
        for file in files
        for node in ast.parse(file.read_text(encoding="utf-8")).body
        if isinstance(node, (ast.Import, ast.ImportFrom)) and not (isinstance(node, ast.ImportFrom) and node.module == "__future__")
    ]
    return "\n".join(statements)


def forked_python(flags: Sequence[str], imports: str, cwd: Path) -> Iterator[ForkedPython]:
    """For a fixture: the parent, started with the interpreter and its `flags` in `cwd`, having
    run `imports` (`imports_of`)."""
    with tempfile.TemporaryDirectory(prefix="forked-python-") as folder:
        parent = ForkedPython([sys.executable, *flags], imports, cwd, Path(folder))
        try:
            yield parent
        finally:
            parent.close()
