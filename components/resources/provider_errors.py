"""What the AKS-managed pool's provider says when a step fails: one line with the step, the
pool and Azure's own words (`failed`), and the provider host that sends that line alone
(`send_one_line`).

Why the host needs telling. The engine runs the provider in the SDK's dynamic provider host
(`python -m pulumi.dynamic`), which answers any exception a provider raises with
`context.abort(grpc.StatusCode.UNKNOWN, traceback.format_exc())` (pulumi 3.260 to 3.272,
pulumi/dynamic/__main__.py `_abort_with_traceback`, on Create, Read, Update, Delete, Diff
and Check); the engine prints that text as the resource's error (pulumi/pulumi
sdk/go/common/resource/plugin/provider_plugin.go `parseError` keeps the gRPC message;
pkg/engine/update.go reports it with diag.GetResourceOperationFailedError, "%v"). So the CLI
showed a Python traceback with Azure's answer at its bottom. The host offers a dynamic
provider no other way to fail: no error type it sends plainly (pulumi/pulumi#16344, a "bail"
error that shows nothing more, is open), and `CheckFailure`s are for inputs only.

`pulumi.RunError` is the SDK's own word for an error whose message is the whole story: "a
clean exit rather than the usual verbose unhandled error logic which emits the source program
text and complete stack trace" (pulumi/errors.py); the program's language host prints its
message alone (sdk/python/cmd/pulumi-language-python-exec: `except pulumi.RunError as e:
pulumi.log.error(str(e))`), and so does the SDK's component provider server
(pulumi/provider/server.py re-raises a RunError as it is). `send_one_line` gives the dynamic
host the same rule, in the host's process alone: the host's `traceback` name becomes a
stand-in whose `format_exc` is the message of a RunError in flight and the real traceback of
anything else (a bug still shows where it happened). The provider calls it from `configure`,
which the host calls once it has unpickled the provider, before any step
(pulumi/dynamic/__main__.py `get_provider`). tests/test_managed_pool_errors.py runs the SDK's
own host, so an SDK whose host changes shape fails there, not in a user's `pulumi up`.
"""

from __future__ import annotations

import sys
import traceback
from types import ModuleType
from typing import Any

import pulumi

from components.errors import ManagedPoolError

# The module the CLI runs as the dynamic provider host (`python -u -m pulumi.dynamic`).
HOST_MODULE = "pulumi.dynamic.__main__"
# How much of Azure's message a line keeps.
MESSAGE_CHARS = 400
SIGN_IN = "run `az login` (or azure/login in GitHub Actions) and try again"


class _OneLineTraceback:
    """The host's `traceback` module, but for `format_exc` while a `pulumi.RunError` is in
    flight: its message alone."""

    def __init__(self, real: ModuleType) -> None:
        self._real = real

    def __getattr__(self, name: str) -> Any:
        return getattr(self._real, name)

    def format_exc(self, *args: Any, **kwargs: Any) -> str:
        error = sys.exc_info()[1]
        if isinstance(error, pulumi.RunError):
            return str(error)
        return self._real.format_exc(*args, **kwargs)


def send_one_line(main: ModuleType | None = None) -> bool:
    """In the SDK's dynamic provider host, make it send a `pulumi.RunError` as its message
    alone; anywhere else (the program, a test) change nothing. True where it holds."""
    host = main if main is not None else sys.modules.get("__main__")
    spec = getattr(host, "__spec__", None)
    if host is None or getattr(spec, "name", None) != HOST_MODULE or not hasattr(host, "_abort_with_traceback"):
        return False
    formatter = getattr(host, "traceback", None)
    if isinstance(formatter, _OneLineTraceback):
        return True
    if formatter is not traceback:  # a host of another shape: leave it be
        return False
    host.traceback = _OneLineTraceback(traceback)  # type: ignore[attr-defined]
    return True


def _words(text: Any) -> str:
    said = " ".join(str(text or "").split())
    return said if len(said) <= MESSAGE_CHARS else said[: MESSAGE_CHARS - 1] + "…"


def azure_words(error: BaseException) -> str:
    """Azure's answer in one line: the status, ARM's error code and message (and a detail's,
    where the message is empty), as the REST body has them."""
    from azure.core.exceptions import ClientAuthenticationError, HttpResponseError, ServiceRequestError, ServiceResponseError

    status = getattr(error, "status_code", None)
    odata = getattr(error, "error", None)
    code = getattr(odata, "code", None)
    message = getattr(odata, "message", None)
    if not message:
        details = [d for d in getattr(odata, "details", None) or [] if getattr(d, "message", None)]
        message = "; ".join(f"{d.code}: {d.message}" for d in details) or getattr(error, "message", None) or str(error)
    if isinstance(error, ClientAuthenticationError) and status in (None, 401):
        return f"no Azure sign-in ({_words(message)}); {SIGN_IN}"
    named = f" {code}" if code else ""
    if isinstance(error, HttpResponseError) and status is not None and status >= 400:
        fix = "; the identity running Pulumi may not do it (docs/permissions.md)" if status == 403 else ""
        return f"Azure answered {status}{named}: {_words(message)}{fix}"
    if isinstance(error, HttpResponseError) and status is not None:  # a long-running operation's status said Failed
        return f"the operation failed in Azure{named}: {_words(message)}"
    if isinstance(error, (ServiceRequestError, ServiceResponseError)):
        return f"no answer from Azure ({type(error).__name__}: {_words(message)})"
    return f"{type(error).__name__}: {_words(message)}"


def failed(what: str, error: BaseException) -> ManagedPoolError:
    """One line: the step (`creating node pool gpu in cluster rg/aks`) and Azure's answer."""
    return ManagedPoolError(f"{what}: {azure_words(error)}")
