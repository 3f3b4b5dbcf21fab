"""The component package's schema as its provider host answers it: the host started the way the
Pulumi CLI starts a `runtime: python` plugin, asked over gRPC (GetSchema). `make snapshots` writes
it to tests/snapshots/package-schema.json; tests/test_package_schema.py compares and validates it.

The CLI runs `python <plugin folder> [--logtostderr] [-v=N] <engine address>` (pulumi/pulumi
1b594989 sdk/go/common/resource/plugin/provider_plugin.go NewProvider passes `[host.ServerAddr()]`,
plugin.go buildPluginArguments puts the flags first; sdk/python/cmd/pulumi-language-python/main.go
RunPlugin runs the folder's __main__.py). The host dials the engine only for Construct and Call
(pulumi 3.272.0 provider/server.py ProviderServicer), so GetSchema needs no engine at that address.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
PACKAGE = ROOT / "package"
SNAPSHOT = ROOT / "tests" / "snapshots" / "package-schema.json"
# No engine listens here: GetSchema does not dial it.
NO_ENGINE = "127.0.0.1:1"


@contextmanager
def started_host(engine: str = NO_ENGINE, cwd: Path | None = None) -> Iterator[Any]:
    """The package's provider host in a process of its own, told the engine is at `engine`;
    yields a ResourceProvider stub."""
    import grpc
    from pulumi.runtime.proto import provider_pb2_grpc

    with tempfile.TemporaryFile() as stderr:
        process = subprocess.Popen(
            [sys.executable, str(PACKAGE), "--logtostderr", "-v=3", engine],
            stdout=subprocess.PIPE,
            stderr=stderr,
            cwd=cwd or Path(tempfile.gettempdir()),
        )
        try:
            assert process.stdout is not None
            line = process.stdout.readline()  # the port, the host's first line (provider/server.py main)
            if not line.strip().isdigit():
                process.wait()
                stderr.seek(0)
                raise RuntimeError(f"the package's host printed {line!r}, not its port: {stderr.read().decode(errors='replace')[-2000:]}")
            with grpc.insecure_channel(f"127.0.0.1:{int(line)}") as channel:
                yield provider_pb2_grpc.ResourceProviderStub(channel)
        finally:
            process.kill()
            process.wait()


def served_schema() -> dict[str, Any]:
    """GetSchema's answer, as the engine asks it (version 0)."""
    from pulumi.runtime import proto

    with started_host() as stub:
        return dict(json.loads(stub.GetSchema(proto.GetSchemaRequest(version=0)).schema))


def snapshot_text(schema: dict[str, Any]) -> str:
    return json.dumps(schema, indent=2, sort_keys=True) + "\n"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--write", action="store_true", help=f"write {SNAPSHOT.relative_to(ROOT)}")
    args = parser.parse_args(argv)
    text = snapshot_text(served_schema())
    if args.write:
        SNAPSHOT.write_text(text)
    else:
        sys.stdout.write(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
