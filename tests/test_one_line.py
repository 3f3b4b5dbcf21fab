"""What a person sees when the program stops on bad input: one line on stderr and exit 1,
from `make render` and from the path `pulumi preview` and `pulumi up` take (the language
host's run_in_stack, tools/language_host.py), with every Python warning shown: no "Task was
destroyed but it is pending!", no "coroutine ... was never awaited" after it."""

from __future__ import annotations

import subprocess
import sys

import pytest
from conftest import FIXTURE_STACKS_PRELUDE

from tools.stack_files import ROOT

BAD_POOL = '{"nodeCount": -1}'
SAYS = "error: invalid config aks-gpu:gpuPool.nodeCount = -1: expected a whole number from 0 to 1000"
# Every warning shown, each time (ResourceWarning included); asyncio's own logger left on.
STRICT = [sys.executable, "-W", "always"]


def run(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([*STRICT, *args], cwd=ROOT, capture_output=True, text=True, timeout=300, check=False)


def language_host(*args: str) -> subprocess.CompletedProcess:
    """`python -m tools.language_host ARGS`, its stack names the tests' own (tests/conftest.py)."""
    return run("-c", FIXTURE_STACKS_PRELUDE + "import runpy; runpy.run_module('tools.language_host', run_name='__main__')", *args)


@pytest.mark.parametrize("mode", ["preview", "update"])
def test_a_config_error_under_the_language_hosts_run_is_one_line_and_exit_1(mode):
    done = language_host("dev", mode, f"aks-gpu:gpuPool={BAD_POOL}")
    assert (done.returncode, done.stderr.splitlines()) == (1, [SAYS])


def test_a_stop_after_the_checks_under_the_language_hosts_run_is_one_line():
    """A cost limit without prices stops a deployment after config, the cluster read and
    preflight have run: still one line (the warnings before it are the preview's own)."""
    done = language_host("prod", "update", 'aks-gpu:cost={"maxHourly": 1}')
    errors = [line for line in done.stderr.splitlines() if line.startswith("error:")]
    assert done.returncode == 1 and len(errors) == 1 and errors[0].endswith("(nothing was created)")
    assert not [line for line in done.stderr.splitlines() if "Task was destroyed" in line or "never awaited" in line]


def test_a_config_error_in_make_render_is_one_line_and_exit_1(tmp_path):
    script = FIXTURE_STACKS_PRELUDE + (
        "import sys, json; from tools import render; real = render.run_program\n"
        f"render.run_program = lambda stack, overrides, **kw: real(stack, overrides={{**overrides, 'gpuPool': json.loads({BAD_POOL!r})}}, **kw)\n"
        f"sys.exit(render.main(['--stack', 'dev', '--out', {str(tmp_path)!r}]))"
    )
    done = run("-c", script)
    assert (done.returncode, done.stderr.splitlines()) == (1, [SAYS])
