"""An azure-native invoke the program makes before it registers anything (the existing cluster's
getManagedCluster and listClusterUserCredential: components/azure/live/reader.py), with a
deadline of its own.

The SDK gives an invoke none: `pulumi.runtime.invoke` sends the engine's Invoke on the event
loop's default executor and waits for it (pulumi/runtime/invoke.py `_invoke`: `run_in_executor(None,
do_invoke)`; `monitor.Invoke(req)` without a gRPC timeout), so a provider that never answers
holds the run. Here the invoke runs on a daemon thread the program stops waiting for at the
deadline (deadline.gather), inside a copy of the program's context (the SDK keeps its
settings, the monitor among them, in context variables: pulumi/runtime/settings.py
`contextproperty`), with three things of its own, so that nothing it leaves behind touches the
program's run:
  - an event loop: `_sync_await` runs the invoke to completion on the thread's loop
    (pulumi/runtime/sync_await.py `_ensure_event_loop`);
  - that loop's executor runs on daemon threads: the interpreter joins a ThreadPoolExecutor's
    workers when it exits (concurrent.futures.thread `_python_exit`), which would hold the
    program after the deadline until the engine answered;
  - an RPCManager: the program's awaits every RPC it records when the program ends
    (pulumi/runtime/stack.py `wait_for_rpcs`), and one left pending on the abandoned thread's
    loop would hold or fail that end. A failed invoke raises here, as it would in the program.
"""

from __future__ import annotations

import asyncio
import contextvars
import threading
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor
from typing import Any, TypeVar

from components.azure.live.deadline import gather
from components.azure.reader import InvokeFailed

T = TypeVar("T")

# An invoke's first call starts azure-native's plugin (some seconds on a slow runner), then ARM
# answers in one or two; AKS's own calls are not long-running.
INVOKE_SECONDS = 120.0


class DaemonExecutor(ThreadPoolExecutor):
    """Runs each call on a daemon thread of its own, which nothing joins at exit. A subclass,
    since an event loop's default executor must be a ThreadPoolExecutor (asyncio
    base_events.py `set_default_executor`)."""

    def submit(self, fn: Callable[..., Any], /, *args: Any, **kwargs: Any) -> Future[Any]:
        future: Future[Any] = Future()

        def run() -> None:
            if not future.set_running_or_notify_cancel():
                return
            try:
                future.set_result(fn(*args, **kwargs))
            except BaseException as error:  # noqa: BLE001 - handed to the future's waiter
                future.set_exception(error)

        threading.Thread(target=run, daemon=True, name="aks-gpu-invoke").start()
        return future


def typed(call: Callable[[], T]) -> T:
    """`call()`, an invoke: its failure, a bare Exception in the SDK (reader.py `InvokeFailed`
    cites it), raised as InvokeFailed with the same words; any other error as it is."""
    try:
        return call()
    except Exception as error:
        if type(error) is Exception:
            raise InvokeFailed(str(error)) from error
        raise


def within(call: Callable[[], T], what: str, seconds: float = INVOKE_SECONDS) -> T:
    """`call()` (an invoke, made as the program makes it), or TimeoutError naming `what` once
    `seconds` have passed; its own errors as they are, a failed invoke's as InvokeFailed (`typed`)."""
    context = contextvars.copy_context()

    def isolated() -> T:
        from pulumi.runtime import settings
        from pulumi.runtime.rpc_manager import RPCManager

        settings.SETTINGS.rpc_manager = RPCManager()  # a context variable: this copy's only
        loop = asyncio.new_event_loop()
        loop.set_default_executor(DaemonExecutor())
        asyncio.set_event_loop(loop)
        try:
            return typed(call)
        finally:
            asyncio.set_event_loop(None)
            loop.close()

    try:
        return gather([lambda: context.run(isolated)], seconds)[0]
    except TimeoutError:
        raise TimeoutError(f"{what} got no answer within {seconds:g} s") from None
