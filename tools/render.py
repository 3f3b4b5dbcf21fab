"""`make render STACK=dev`: the program's desired state, offline.

Runs the real program under the mock engine (tools/mock_engine.py, the same machinery the
tests use) and writes `build/<stack>/`:
  manifests.yaml  the Kubernetes objects, in creation order, for `kubectl apply -f`
  resources.json  every resource: type, name, inputs, parent, provider, dependencies, options
  outputs.json    the stack outputs (secrets shown as "[secret]")
and prints a summary: resources by type, the GPU pool, and any warnings.

A configuration error prints its one line and exits 1, as `pulumi preview` would.
"""

from __future__ import annotations

import argparse
import collections
import json
import sys
from pathlib import Path
from typing import Any, Optional

import yaml

import pulumi

from tools.mock_engine import ROOT, ProgramRun, Registration, Secret, run_program

SECRET_MASK = "[secret]"
MANIFEST_KEYS = ("apiVersion", "kind", "metadata", "spec")


def masked(value: Any) -> Any:
    if isinstance(value, Secret):
        return SECRET_MASK
    if isinstance(value, dict):
        return {k: masked(v) for k, v in value.items()}
    if isinstance(value, list):
        return [masked(v) for v in value]
    return value


def kubernetes_objects(run: ProgramRun) -> list[Registration]:
    """The Kubernetes objects, in registration order (dependencies come first)."""
    return [r for r in run.resources if r.type.startswith("kubernetes:")]


def manifest(resource: Registration) -> dict[str, Any]:
    """apiVersion, kind, metadata, spec; inside them keys sorted, so diffs stay stable."""
    return {k: _sorted(masked(resource.inputs[k])) for k in MANIFEST_KEYS if k in resource.inputs}


def _sorted(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: _sorted(value[k]) for k in sorted(value)}
    if isinstance(value, list):
        return [_sorted(v) for v in value]
    return value


def resources_document(run: ProgramRun) -> list[dict[str, Any]]:
    return [
        {
            "urn": r.urn,
            "type": r.type,
            "name": r.name,
            "parent": r.parent,
            "provider": r.provider,
            "dependencies": r.dependencies,
            "options": r.options,
            "inputs": masked(r.inputs),
        }
        for r in run.resources
    ]


def outputs_document(run: ProgramRun) -> dict[str, Any]:
    return {name: SECRET_MASK if out.secret else out.value for name, out in sorted(run.outputs.items())}


def write(run: ProgramRun, out_dir: Path) -> None:
    out_dir.mkdir(parents=True, exist_ok=True)
    docs = [manifest(r) for r in kubernetes_objects(run)]
    (out_dir / "manifests.yaml").write_text(yaml.safe_dump_all(docs, sort_keys=False, explicit_start=True))
    (out_dir / "resources.json").write_text(json.dumps(resources_document(run), indent=2, sort_keys=True) + "\n")
    (out_dir / "outputs.json").write_text(json.dumps(outputs_document(run), indent=2) + "\n")


def gpu_pools(run: ProgramRun) -> list[Registration]:
    """The GPU pool: a typed AgentPool, or a generic Resource of type agentPools (preview API)."""
    return run.of_type("azure-native:containerservice:AgentPool") + [
        r for r in run.of_type("azure-native:resources:Resource") if r.inputs.get("resourceType") == "agentPools"
    ]


def summary(run: ProgramRun, out_dir: Path) -> str:
    lines = [f"{run.project} {run.stack}: {len(run.resources)} resources -> {_relative(out_dir)}"]
    for type_, count in collections.Counter(r.type for r in run.resources).items():
        lines.append(f"  {count} x {type_}")
    for pool in gpu_pools(run):
        i = pool.inputs.get("properties", pool.inputs)  # a generic Resource nests them
        name = pool.inputs.get("agentPoolName", pool.inputs.get("resourceName"))
        managed = " (AKS-managed GPU stack)" if "gpuProfile" in i else ""
        scale = (
            f"autoscale {i['minCount']}-{i['maxCount']}" if i.get("enableAutoScaling") else f"x {i.get('count')}"
        )
        lines.append(f"GPU pool: {name} {i['vmSize']} {scale}, taints {', '.join(i.get('nodeTaints', []))}{managed}")
    lines.append(f"Kubernetes objects: {len(kubernetes_objects(run))} in {_relative(out_dir / 'manifests.yaml')}")
    if run.warnings:
        lines.append(f"warnings ({len(run.warnings)}):")
        lines.extend(f"  - {w}" for w in run.warnings)
    else:
        lines.append("warnings: none")
    return "\n".join(lines)


def _relative(path: Path) -> str:
    try:
        return str(path.resolve().relative_to(ROOT))
    except ValueError:
        return str(path)


def main(argv: Optional[list[str]] = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--stack", default="dev", help="stack name: reads Pulumi.<stack>.yaml (default: dev)")
    parser.add_argument("--out", type=Path, help="output folder (default: build/<stack>)")
    args = parser.parse_args(argv)
    out_dir = args.out or ROOT / "build" / args.stack
    try:
        run = run_program(args.stack)
    except FileNotFoundError as error:
        print(f"error: {error}", file=sys.stderr)
        return 2
    except pulumi.RunError as error:
        print(f"error: {error}", file=sys.stderr)
        return 1
    write(run, out_dir)
    print(summary(run, out_dir))
    return 0


if __name__ == "__main__":
    sys.exit(main())
