"""aks-gpu: Microsoft's "Use GPUs for compute-intensive workloads on AKS", as one Pulumi program.

Read top to bottom, `main` is the guide's table of contents:
  config -> the plan (preflight and what it will cost, an existing cluster as read, and
  every decision, one Args per component: components/plan.py) -> what the plan declares (the
  cluster, its GPU pools, the GPU stack, the proof: components/environment/declare.py, the
  code the package's GpuEnvironment runs too) -> the stack's outputs.
"""

import os

import pulumi

from components import stack as config
from components.environment.declare import declare, report
from components.live_reader import LiveReader
from components.plan import Mode, Said, build_plan
from components.seam.reader import AzureReader


def main(reader: AzureReader) -> None:
    """The program, reading Azure and the cluster through `reader`: live under `pulumi preview`
    and `pulumi up` (the last line), the offline render's or a test's (tools/mock_engine.py)."""
    # Parse and validate every setting, then read and check the subscription (and an existing
    # cluster) before any resource is registered: a preview warns, a deployment stops.
    mode = Mode.of(pulumi.runtime.is_dry_run())
    said = Said()
    try:
        plan = build_plan(
            config.load(), reader, mode, project=pulumi.get_project(), stack=pulumi.get_stack(), environ=os.environ, said=said
        )
    finally:  # what was said before a stop is printed too
        report(said)
    # The cluster, its pools, the GPU stack and the proof, each a child of the stack as in 1.0
    # (no parent: tests/test_urns.py); then what was built, and the commands a user types next.
    for key, value in declare(plan).items():
        pulumi.export(key, value)


# Pulumi's language host runs this file as __main__ (pulumi/pulumi
# sdk/python/cmd/pulumi-language-python-exec: `runpy.run_path(args.PROGRAM, run_name='__main__')`):
# the live reader, one credential for the run. The mock engine and the offline render run it
# under another name and call `main` with their own reader (tools/mock_engine.py).
if __name__ == "__main__":
    main(LiveReader())
