"""What a person sees when the program stops on bad input: one line on stderr and exit 1,
from `make render` and from the path `pulumi preview` and `pulumi up` take (the language
host's run_in_stack, tools/language_host.py), with every Python warning shown: no "Task was
destroyed but it is pending!", no "coroutine ... was never awaited" after it; and a `make render`
that ends well closes every event loop its runs made. Each is a Python of its own, forked from
one that made its imports once (tests/support/forked_python.py)."""

from __future__ import annotations

import re
import subprocess
import sys
from collections.abc import Iterator

import pytest
from conftest import FIXTURE_STACKS_PRELUDE
from support.forked_python import ForkedPython, forked_python, imports_of

from tools.stack_files import ROOT

BAD_POOL = '{"nodeCount": -1}'
SAYS = "error: invalid config aks-gpu:gpuPool.nodeCount = -1: expected a whole number from 0 to 1000"


@pytest.fixture(scope="module")
def python() -> Iterator[ForkedPython]:
    """`python -W always -c ...`: every warning shown, each time (ResourceWarning included);
    asyncio's own logger left on. The imports of the language host and the program made once."""
    yield from forked_python(["-W", "always"], imports_of(ROOT / "tools" / "language_host.py", ROOT / "__main__.py"), ROOT)


def language_host(python: ForkedPython, *args: str) -> subprocess.CompletedProcess:
    """`python -m tools.language_host ARGS`, its stack names the tests' own (tests/conftest.py)."""
    return python.run(FIXTURE_STACKS_PRELUDE + "import runpy; runpy.run_module('tools.language_host', run_name='__main__')", *args)


# One mode each below: a config error is raised by the program's `config.load()`, an argument
# evaluated before the plan is asked anything, and a saved file is refused by that load or by the
# language host's read of it before the engine is told the mode; `preview` and `update` take the
# same path to the line (tools/language_host.py main, __main__.py main). The stop after the checks
# is a deployment's.
def test_a_config_error_under_the_language_hosts_run_is_one_line_and_exit_1(python):
    done = language_host(python, "dev", "update", f"aks-gpu:gpuPool={BAD_POOL}")
    assert (done.returncode, done.stderr.splitlines()) == (1, [SAYS])


def test_a_stop_after_the_checks_under_the_language_hosts_run_is_one_line(python):
    """A cost limit without prices stops a deployment after config, the cluster read and
    preflight have run: still one line (the warnings before it are the preview's own)."""
    done = language_host(python, "prod", "update", 'aks-gpu:cost={"maxHourly": 1}')
    errors = [line for line in done.stderr.splitlines() if line.startswith("error:")]
    assert done.returncode == 1 and len(errors) == 1 and errors[0].endswith("(nothing was created)")
    assert not [line for line in done.stderr.splitlines() if "Task was destroyed" in line or "never awaited" in line]


def test_a_config_error_in_make_render_is_one_line_and_exit_1(python, tmp_path):
    script = FIXTURE_STACKS_PRELUDE + (
        "import sys, json; from tools import render; real = render.run_program\n"
        f"render.run_program = lambda stack, overrides, **kw: real(stack, overrides={{**overrides, 'gpuPool': json.loads({BAD_POOL!r})}}, **kw)\n"
        f"sys.exit(render.main(['--stack', 'dev', '--out', {str(tmp_path)!r}]))"
    )
    done = python.run(script)
    assert (done.returncode, done.stderr.splitlines()) == (1, [SAYS])


EXISTING = 'aks-gpu:existingCluster={"resourceGroupName": "team-rg", "name": "team-aks"}'


@pytest.mark.parametrize("what, mode", [("a device", "preview"), ("a member of another type", "update")])
def test_a_bad_saved_file_under_the_language_hosts_run_is_one_line_and_exit_1(python, tmp_path, what, mode):
    """#44: a clusterFile that is /dev/zero, or a saved cluster whose pool has `osType: 5`."""
    path = "/dev/zero"
    if what == "a member of another type":
        from tools.azure_mocks import existing_cluster

        described = existing_cluster(agentPoolProfiles=[{"name": "gpunp", "vmSize": "Standard_NC4as_T4_v3", "osType": 5}])
        (tmp_path / "cluster.json").write_text(__import__("json").dumps(described))
        path = str(tmp_path / "cluster.json")
    done = language_host(python, "dev", mode, EXISTING, f'aks-gpu:preflight={{"clusterFile": "{path}"}}')
    says = "is a character device, not a regular file" if what == "a device" else "agentPoolProfiles[gpunp].osType is 5, not a string"
    assert done.returncode == 1 and len(done.stderr.splitlines()) == 1, done.stderr[-2000:]
    # The device is refused by the config's own check, which quotes the value (components/config/
    # preflight.py), before the offline reader would read the file; the saved cluster by its read.
    shown = f"'{path}'" if what == "a device" else path
    assert done.stderr.startswith(f"error: invalid config aks-gpu:preflight.clusterFile = {shown}: ") and says in done.stderr


# The render's runs, in a `make render` (tools/render.py's `__main__`), with every event loop made
# from the start of the render kept (none is made by the imports the parent made).
LOOPS_CLOSED_AT_EXIT = (
    """
import asyncio.base_events, runpy, sys
made = []  # held here, so none is collected before it is counted
init = asyncio.base_events.BaseEventLoop.__init__
def recording(self, *args, **kwargs):
    init(self, *args, **kwargs)
    made.append(self)
asyncio.base_events.BaseEventLoop.__init__ = recording
"""
    + FIXTURE_STACKS_PRELUDE
    + """sys.argv = ["render", "--stack", "dev", "--out", sys.argv[1]]
try:
    runpy.run_module("tools.render", run_name="__main__")
except SystemExit as done:
    print(done.code, len(made), sum(not loop.is_closed() for loop in made))
"""
)


def test_make_render_closes_every_event_loop_the_runs_made(python, tmp_path):
    """The SDK's mock monitor gives each of its worker threads an event loop; one left open
    was collected at exit, sometimes after its socket, and `make render` printed an
    "Exception ignored in BaseEventLoop.__del__" traceback one run in three. Every loop the
    render made is closed by its exit, whatever the collector's order."""
    done = python.run(LOOPS_CLOSED_AT_EXIT, str(tmp_path))
    code, made, open_loops = done.stdout.split()[-3:]
    assert (code, open_loops) == ("0", "0") and int(made) >= 2, done.stderr
    assert "Exception ignored" not in done.stderr


# A command that ends as the tests above must not: a coroutine never awaited, a socket left open
# where the module defines a function (its globals are then a cycle only the collector frees),
# an exit status of its own.
LEAVES_BEHIND = """import asyncio, socket, sys
async def never_awaited():
    pass
never_awaited()
left_open = socket.socket()
print(sys.argv[1:])
sys.exit(3)
"""


def _warnings(stderr: str) -> list[str]:
    """The warnings a Python printed, without where (the same code runs a line lower in a real
    Python, which makes the imports first)."""
    return sorted(re.sub(r"fd=\d+", "fd=N", line.split(": ", 1)[1]) for line in stderr.splitlines() if re.match(r"\S+: \w+Warning: ", line))


def test_a_forked_python_ends_as_the_python_it_stands_for_with_every_warning_of_its_shutdown(python):
    """The fixture's claim (tests/support/forked_python.py): a child ends as `python -W always
    -c CODE` does after making the same imports; were a shutdown's warning lost, the tests above
    could pass where a person sees more than one line. The real Python makes the imports itself."""
    forked = python.run(LEAVES_BEHIND, "an argument")
    imports = imports_of(ROOT / "tools" / "language_host.py", ROOT / "__main__.py")
    real = subprocess.run(
        [sys.executable, "-W", "always", "-c", f"{imports}\n{LEAVES_BEHIND}", "an argument"], cwd=ROOT, capture_output=True, text=True
    )
    assert (forked.returncode, forked.stdout) == (real.returncode, real.stdout) == (3, "['an argument']\n")
    assert _warnings(forked.stderr) == _warnings(real.stderr)
    assert any("ResourceWarning: unclosed <socket.socket" in w for w in _warnings(real.stderr)), real.stderr
    assert any("never_awaited' was never awaited" in w for w in _warnings(real.stderr)), real.stderr
