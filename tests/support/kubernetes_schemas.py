"""What the Kubernetes API's schema refuses in a run's objects."""

from __future__ import annotations

import kubernetes_validate

from tools import render

# AKS-managed GPU nodes need 1.34 (aks-managed-gpu-nodes.md); the stacks pin no version.
KUBERNETES_VERSION = "1.34"


def invalid(run) -> list[str]:
    problems = []
    for obj in render.kubernetes_objects(run):
        doc = render.manifest(obj)
        try:
            kubernetes_validate.validate(doc, KUBERNETES_VERSION, strict=True)
        except kubernetes_validate.ValidationError as error:
            problems.append(f"{doc['kind']} {doc['metadata']['name']}: {error.message}")
    return problems


def kubernetes_problems(run) -> list[str]:
    """Objects the Kubernetes API's schema refuses; a stack always has at least a namespace,
    a NetworkPolicy and a Job."""
    few = [] if len(render.kubernetes_objects(run)) >= 3 else ["fewer than 3 Kubernetes objects"]
    return few + invalid(run)
