"""The program as `pulumi preview` and `pulumi up` start it (pulumi-language-python-exec's
`run_in_stack` on a fresh loop), against the mock monitor: what a person sees on the terminal when
the program stops. What it copies from the real host, and the one difference (asyncio's logger
stays on): docs/design/tools.md, "The language host".

It runs the program under another name than `__main__` and calls its `main` with the mocks'
reader (the real host's `run_path(program, run_name='__main__')` runs the last line, which
hands `main` the live reader).

    python -m tools.language_host <stack> [preview|update] [key=value ...]"""

from __future__ import annotations

import asyncio
import runpy
import sys
import traceback

import pulumi
from pulumi.runtime import mocks as pulumi_mocks
from pulumi.runtime import settings

from components.seam.reader import AzureReader
from tools.azure_mocks import AzureMocks
from tools.mock_engine import RecordingMonitor
from tools.stack_files import ROOT, project_name, stack_config


def run_program(path: str, reader: AzureReader) -> None:
    """As the exec script runs it, but under another name than `__main__`, so the program's
    last line (the live reader) does not run: its `main` is handed the mocks' reader."""
    runpy.run_path(path, run_name="aks_gpu_program")["main"](reader)


def main(argv: list[str] | None = None) -> int:
    args = list(sys.argv[1:] if argv is None else argv)
    stack, preview = args[0], (args[1:2] or ["preview"])[0] == "preview"
    mocks = AzureMocks()
    try:  # the stack file and the saved files it names, read before the engine starts: one line each
        config = stack_config(stack)
        for pair in args[2:]:
            key, value = pair.split("=", 1)
            config[key] = value
        mocks.offline(config, stack)
    except pulumi.RunError as error:
        print(f"error: {error}", file=sys.stderr)
        return 1
    loop = asyncio.new_event_loop()  # the exec script's `asyncio.new_event_loop()`
    asyncio.set_event_loop(loop)
    monitor = RecordingMonitor(mocks)
    pulumi_mocks.set_mocks(monitor.mocks, project=project_name(), stack=stack, preview=preview, monitor=monitor)
    pulumi.runtime.set_all_config(config)
    settings.ROOT.set(None)  # run_in_stack registers the root Stack itself
    program = str(ROOT / "__main__.py")
    sys.path.insert(0, str(ROOT))
    try:
        loop.run_until_complete(pulumi.runtime.run_in_stack(lambda: run_program(program, mocks.reader)))
        return 0
    except pulumi.RunError as error:
        print(f"error: {error}", file=sys.stderr)
    except Exception:  # noqa: BLE001 - the exec script prints any other exception's traceback
        print(traceback.format_exc(), file=sys.stderr)
    finally:
        loop.close()
        sys.stdout.flush()
        sys.stderr.flush()
    return 1


if __name__ == "__main__":
    sys.exit(main())
