"""A line of status for one resource, sent to the Pulumi engine the way a provider sends one
(pulumirpc.Engine/Log with `ephemeral`: the CLI shows it on the resource's row while it works,
and in a non-interactive run, such as CI's log, as a line). The dynamic provider host is started
with the engine's address as its first argument (pulumi/pulumi@1b594989
pkg/resource/plugin/provider_plugin.go, newPlugin's args `[]string{host.ServerAddr()}`;
sdk/python/dist/pulumi-resource-pulumi-python passes them on to `python -m pulumi.dynamic`).

Why an ephemeral INFO shows in both displays (pulumi/pulumi@1b594989 pkg/backend/display):
rows.go `getInfoColumn` puts a row's last diagnostic, ephemeral or not, beside the resource
while it works, and a non-interactive display prints the row again on each diagnostic
(progress.go `processNormalEvent`); an ephemeral one is left out of the summary printed at the
end (progress.go, `if v.Ephemeral { continue }`) and of the message counts (rows.go
`recordDiagEventPayload`), so a status is not repeated as a diagnostic after the run."""

from __future__ import annotations

import sys
from collections.abc import Callable

# One status may wait this long for the engine: a status must never hold the watch up.
SEND_SECONDS = 5.0


def reporter(urn: str, address: str | None = None, warning: bool = False) -> Callable[[str], None]:
    """What sends `line` as the status of the resource `urn` to the engine at `address` (the
    host's first argument when None); a line that cannot be sent is dropped, never an error.
    `warning`: a warning the run's summary keeps (the access wait's), not a passing status."""
    target = address if address is not None else (sys.argv[1] if len(sys.argv) > 1 else "")
    if not target:
        return lambda line: None
    import grpc
    from pulumi.runtime._grpc_settings import _GRPC_CHANNEL_OPTIONS
    from pulumi.runtime.proto import engine_pb2, engine_pb2_grpc

    # As the SDK's own engine stub is made (pulumi/runtime/settings.py, Settings.__init__).
    engine = engine_pb2_grpc.EngineStub(grpc.insecure_channel(target, options=_GRPC_CHANNEL_OPTIONS))

    def send(line: str) -> None:
        # The request pulumi/log.py `_log` builds for a resource's message, marked ephemeral.
        severity = engine_pb2.WARNING if warning else engine_pb2.INFO
        request = engine_pb2.LogRequest(severity=severity, message=line, urn=urn, streamId=0, ephemeral=not warning)
        try:
            engine.Log(request, timeout=SEND_SECONDS)
        except grpc.RpcError:  # the engine gone or slow (UNAVAILABLE, DEADLINE_EXCEEDED): the status is dropped
            return

    return send
