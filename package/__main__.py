"""The aks-gpu component package: Pulumi's component provider serving GpuEnvironment.

The Pulumi CLI runs this file as `python <this folder> [flags] <engine address>` (pulumi/pulumi
1b594989 sdk/python/cmd/pulumi-language-python/main.go RunPlugin); the host prints the port it
serves on and answers GetSchema and Construct (docs/design/package.md). The components live in
the repository's components/, one folder up, as the program's do.
"""

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from components.environment.provider import serve  # noqa: E402

if __name__ == "__main__":
    serve()
