"""The one change this program makes inside Pulumi's SDK: the dynamic provider host
(`python -m pulumi.dynamic`) taught to send a `pulumi.RunError` as its message alone, not as a
traceback, for the SDKs in SDK_RANGE. Why, where it holds, and how to retire it
(pulumi/pulumi#16344): docs/design/managed-pool-provider.md, "The one-line patch"."""

from __future__ import annotations

import ast
import functools
import importlib.metadata
import importlib.util
import sys
import traceback
from pathlib import Path
from types import ModuleType
from typing import Any, TextIO

import pulumi

# The module the CLI runs as the dynamic provider host (`python -u -m pulumi.dynamic`).
HOST_MODULE = "pulumi.dynamic.__main__"
# The SDK releases (major, minor) whose host has the shape `send_one_line` patches: from 3.260,
# the first with `_abort_with_traceback` (pulumi/pulumi 1b594989, after v3.259.0, has none), to
# 3.272 (the 3.260.0, 3.266.0 and 3.272.0 wheels read). pyproject.toml's `pulumi>=3.260,<3.273`
# agrees; a test holds the two together.
SDK_RANGE = ((3, 260), (3, 272))


class _OneLineTraceback:
    """The host's `traceback` module, but `format_exc` of a `pulumi.RunError` is its message alone."""

    def __getattr__(self, name: str) -> Any:
        return getattr(traceback, name)

    def format_exc(self, *args: Any, **kwargs: Any) -> str:
        error = sys.exc_info()[1]
        return str(error) if isinstance(error, pulumi.RunError) else traceback.format_exc(*args, **kwargs)


def send_one_line(main: ModuleType | None = None) -> bool:
    """In the SDK's dynamic provider host, make it send a `pulumi.RunError` as its message alone;
    anywhere else change nothing. True where it holds."""
    host = main if main is not None else sys.modules.get("__main__")
    spec = getattr(host, "__spec__", None)
    if host is None or getattr(spec, "name", None) != HOST_MODULE or not hasattr(host, "_abort_with_traceback"):
        return False
    if getattr(host, "traceback", None) is traceback:  # a host of another shape is left be
        host.traceback = _OneLineTraceback()  # type: ignore[attr-defined]
    return isinstance(getattr(host, "traceback", None), _OneLineTraceback)


def sdk_range() -> str:
    return "pulumi {}.{} to {}.{}".format(*SDK_RANGE[0], *SDK_RANGE[1])


def in_range(version: str) -> bool:
    """Whether an SDK release (`3.272.0`, `3.272.1.dev0`) is one SDK_RANGE holds."""
    try:
        major, minor = (int(part) for part in version.split(".")[:2])
    except ValueError:
        return False
    return SDK_RANGE[0] <= (major, minor) <= SDK_RANGE[1]


@functools.cache
def host_has_shape(source: str) -> bool:
    """Whether a host module's source has what `send_one_line` changes: a module-level
    `import traceback` and an `_abort_with_traceback` that sends `traceback.format_exc()`."""
    try:
        tree = ast.parse(source)
    except SyntaxError:
        return False
    imports = any(isinstance(n, ast.Import) and any(a.name == "traceback" and a.asname is None for a in n.names) for n in tree.body)
    wrapper = next((n for n in tree.body if isinstance(n, ast.FunctionDef) and n.name == "_abort_with_traceback"), None)
    sends = wrapper is not None and any(
        isinstance(n, ast.Attribute) and n.attr == "format_exc" and isinstance(n.value, ast.Name) and n.value.id == "traceback"
        for n in ast.walk(wrapper)
    )
    return imports and sends


def host_warning(version: str, source: str | None) -> str | None:
    """The one line a preview shows where the installed SDK's host is not one the patch holds for."""
    if source is not None and host_has_shape(source) and in_range(version):
        return None
    why = "is outside" if source is not None and host_has_shape(source) else "has a dynamic provider host of another shape than"
    return (
        f"pulumi SDK {version} {why} what components/seam/provider_host_patch.py's one-line errors are checked for "
        f"({sdk_range()}): a failed step of the AKS-managed pool will reach the CLI as a Python traceback with Azure's "
        'words at its bottom; install the SDK requirements.txt pins (docs/design/managed-pool-provider.md, "The one-line patch")'
    )


@functools.cache
def installed_host() -> tuple[str, str | None]:
    """The installed SDK's release and its host module's source (None where there is none), read
    without importing it: importing `pulumi.dynamic.__main__` starts a server."""
    spec = importlib.util.find_spec(HOST_MODULE)
    origin = Path(spec.origin) if spec is not None and spec.origin else None
    source = origin.read_text(encoding="utf-8") if origin is not None and origin.is_file() else None
    return importlib.metadata.version("pulumi"), source


def unpatched_host_warning() -> str | None:
    """`host_warning` for the SDK this program, and the CLI's host, run with (Pulumi.yaml's virtualenv)."""
    return host_warning(*installed_host())


def tell_if_unpatched(stream: TextIO | None = None, whose: str = "the AKS-managed pool's provider") -> bool:
    """`send_one_line`, and where it could not hold, one line on the host's stderr, which the CLI
    shows (pulumi/pulumi 1b594989 sdk/go/common/resource/plugin/plugin.go: Diag.Infoerrf)."""
    if send_one_line():
        return True
    version, _ = installed_host()
    print(
        f"aks-gpu: {whose} runs in a host it cannot teach to send one-line errors "
        f"(pulumi SDK {version}, checked for {sdk_range()}): its errors come with their Python traceback",
        file=stream if stream is not None else sys.stderr,
        flush=True,
    )
    return False
