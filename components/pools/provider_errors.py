"""What the AKS-managed pool's provider says when a step fails: one line with the step, the
pool and Azure's own words (`failed`). That the provider host sends that line without a
traceback is components/seam/provider_host_patch.py's."""

from __future__ import annotations

from typing import Any

from components.errors import ManagedPoolError, one_line

# How much of Azure's message a line keeps.
MESSAGE_CHARS = 400
SIGN_IN = "run `az login` (or azure/login in GitHub Actions) and try again"


def _words(text: Any) -> str:
    said = one_line(text or "", None)
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
        fix = "; the identity running Pulumi may not do it (docs/deploying.md)" if status == 403 else ""
        return f"Azure answered {status}{named}: {_words(message)}{fix}"
    if isinstance(error, HttpResponseError) and status is not None:  # a long-running operation's status said Failed
        return f"the operation failed in Azure{named}: {_words(message)}"
    if isinstance(error, (ServiceRequestError, ServiceResponseError)):
        return f"no answer from Azure ({type(error).__name__}: {_words(message)})"
    return f"{type(error).__name__}: {_words(message)}"


def failed(what: str, error: BaseException) -> ManagedPoolError:
    """One line: the step (`creating node pool gpu in cluster rg/aks`) and Azure's answer."""
    return ManagedPoolError(f"{what}: {azure_words(error)}")
