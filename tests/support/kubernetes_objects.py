"""Kubernetes objects as a cluster lists them (tests/fixtures/kubernetes/)."""

from __future__ import annotations

import copy
import functools
from pathlib import Path
from typing import Any

import yaml

FIXTURES = Path(__file__).parent.parent / "fixtures" / "kubernetes"


def namespace(name: str, **annotations: str) -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": name, "annotations": annotations}}


@functools.cache
def _guide_manifest() -> dict[str, Any]:
    """The guide's nvidia-device-plugin-ds.yaml, parsed once per test process (a hundred tests
    list it); each caller changes a deep copy."""
    return yaml.safe_load((FIXTURES / "guide-nvidia-device-plugin-ds.yaml").read_text())


def guide_daemon_set(namespace: str = "gpu-resources", **changes: Any) -> dict[str, Any]:
    """The guide's nvidia-device-plugin-ds.yaml as `kubectl get -o json` lists it, after `kubectl apply`."""
    found = copy.deepcopy(_guide_manifest())
    found["metadata"]["namespace"] = namespace
    spec = found["spec"]["template"]["spec"]
    for member, value in changes.items():
        spec[member] = value
    return found


def listed(*items: dict[str, Any]) -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "List", "items": [copy.deepcopy(i) for i in items]}


SKU_TOLERATION = {"key": "sku", "operator": "Equal", "value": "gpu", "effect": "NoSchedule"}
