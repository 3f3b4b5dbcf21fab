"""Every Kubernetes object the program declares validates, strictly (no unknown field),
against the Kubernetes API's own JSON schema for the version AKS runs (kubernetes-validate,
which ships the schemas generated from Kubernetes' OpenAPI definitions)."""

from __future__ import annotations

import kubernetes_validate
import pytest
from conftest import project_run, run_cached

from tools import render
from tools.stack_files import stacks

# AKS-managed GPU nodes need 1.34 (aks-managed-gpu-nodes.md); the stacks pin no version.
KUBERNETES_VERSION = "1.34"
MODES = {
    "MIG": {"gpuPool": {"vmSize": "Standard_NC24ads_A100_v4", "migProfile": "MIG1g"}},
    "GPU Operator": {"gpuPool": {"vmSize": "Standard_NC4as_T4_v3", "management": "gpu-operator"}},
    "AKS-managed": {"gpuPool": {"vmSize": "Standard_NC4as_T4_v3", "management": "aks-managed"}},
    "un-awaited Job on Spot": {"mnistJob": {"waitForCompletion": False}, "gpuPool": {"vmSize": "Standard_NC4as_T4_v3", "spot": True}},
}


def invalid(run) -> list[str]:
    problems = []
    for obj in render.kubernetes_objects(run):
        doc = render.manifest(obj)
        try:
            kubernetes_validate.validate(doc, KUBERNETES_VERSION, strict=True)
        except kubernetes_validate.ValidationError as error:
            problems.append(f"{doc['kind']} {doc['metadata']['name']}: {error.message}")
    return problems


@pytest.mark.parametrize("stack", stacks())
def test_every_stacks_objects_are_valid_kubernetes(stack):
    assert kubernetes_problems(project_run(stack)) == []


def kubernetes_problems(run) -> list[str]:
    """Objects the Kubernetes API's schema refuses; a stack always has at least a namespace,
    a NetworkPolicy and a Job."""
    few = [] if len(render.kubernetes_objects(run)) >= 3 else ["fewer than 3 Kubernetes objects"]
    return few + invalid(run)


@pytest.mark.parametrize("mode", MODES)
def test_every_modes_objects_are_valid_kubernetes(mode):
    assert invalid(run_cached("dev", **MODES[mode])[0]) == []


def test_an_unknown_field_is_caught():
    job = next(o for o in render.kubernetes_objects(run_cached("dev")[0]) if o.inputs["kind"] == "Job")
    doc = render.manifest(job)
    doc["spec"] = {**doc["spec"], "backoffLimitt": 3}
    with pytest.raises(kubernetes_validate.ValidationError, match="backoffLimitt"):
        kubernetes_validate.validate(doc, KUBERNETES_VERSION, strict=True)
