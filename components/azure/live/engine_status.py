"""A line of status for one resource, sent to the Pulumi engine the way a provider sends one
(pulumirpc.Engine/Log with `ephemeral`: the CLI shows it on the resource's row while it works,
and in a non-interactive run, such as CI's log, as a line). The dynamic provider host is started
with the engine's address as its first argument (pulumi/pulumi@1b594989
pkg/resource/plugin/provider_plugin.go, newPlugin's args `[]string{host.ServerAddr()}`;
sdk/python/dist/pulumi-resource-pulumi-python passes them on to `python -m pulumi.dynamic`)."""

from __future__ import annotations

from collections.abc import Callable


def reporter(urn: str, address: str | None = None) -> Callable[[str], None]:
    """What sends `line` as the status of the resource `urn` to the engine at `address` (the
    host's first argument when None); a line that cannot be sent is dropped, never an error."""
    raise NotImplementedError("filled in by #53's live work")
