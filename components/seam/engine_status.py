"""A line of status for one resource, sent to the Pulumi engine the way a provider sends one
(pulumirpc.Engine/Log with `ephemeral`). The dynamic provider host gets the engine's address as
its first argument (pulumi/pulumi@1b594989 pkg/resource/plugin/provider_plugin.go newPlugin). An
ephemeral INFO shows beside the resource while it works (pkg/backend/display rows.go
`getInfoColumn`), as a line in a non-interactive run (progress.go `processNormalEvent`), and is
left out of the summary at the end (progress.go, `if v.Ephemeral { continue }`)."""

from __future__ import annotations

import sys
from collections.abc import Callable

# One status may wait this long for the engine: a status must never hold the watch up.
SEND_SECONDS = 5.0


def reporter(urn: str, address: str | None = None, warning: bool = False) -> Callable[[str], None]:
    """What sends a line as the status of `urn` to the engine at `address` (None: the host's first
    argument); a line that cannot be sent is dropped. `warning`: one the run's summary keeps."""
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
