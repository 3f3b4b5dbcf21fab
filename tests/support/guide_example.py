"""The guide's worked example (examples/guide-cluster/) and its stack file."""

from __future__ import annotations

from conftest import ROOT

EXAMPLE = ROOT / "examples" / "guide-cluster"

STACK_FILE = EXAMPLE / "Pulumi.ml-prod.yaml"
