"""Calls out of the process bounded by a deadline the program keeps itself: a socket timeout
bounds each read, not a server that trickles, nor azure-core's retries."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from typing import Any


def gather(calls: list[Callable[[], Any]], timeout: float) -> list[Any]:
    """Runs the calls at once and returns their results, or raises the first error, or
    TimeoutError once `timeout` seconds have passed. Daemon threads, not a ThreadPoolExecutor:
    the interpreter joins an executor's workers at exit (concurrent.futures.thread `_python_exit`),
    so a call stuck in a socket would hold the program after the timeout."""
    results: list[Any] = [None] * len(calls)
    errors: list[tuple[float, BaseException]] = []
    done = threading.Semaphore(0)
    # Set before any call starts, so a call's own timer (a socket's, azure-core's retries')
    # always ends after it: its error then is the deadline's, whenever this thread wakes.
    deadline = time.monotonic() + timeout

    def run(index: int, call: Callable[[], Any]) -> None:
        try:
            results[index] = call()
        except BaseException as error:  # noqa: BLE001 - handed to the caller
            errors.append((time.monotonic(), error))
        finally:
            done.release()

    for index, call in enumerate(calls):
        threading.Thread(target=run, args=(index, call), daemon=True, name=f"azure-facts-{index}").start()
    for _ in calls:
        if not done.acquire(timeout=max(deadline - time.monotonic(), 0)):
            raise TimeoutError(f"Azure did not answer within {timeout:g} s")
        if errors:
            when, error = errors[0]
            if when >= deadline:  # raised after the deadline: no answer within it, however late this thread ran
                raise TimeoutError(f"Azure did not answer within {timeout:g} s") from error
            raise error
    return results
