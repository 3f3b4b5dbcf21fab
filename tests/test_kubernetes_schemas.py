"""Every Kubernetes object the program declares validates, strictly (no unknown field),
against the Kubernetes API's own JSON schema for the version AKS runs (kubernetes-validate,
which ships the schemas generated from Kubernetes' OpenAPI definitions)."""

from __future__ import annotations

import kubernetes_validate
import pytest
from conftest import project_run, run_cached
from support.kubernetes_schemas import KUBERNETES_VERSION, invalid, kubernetes_problems

from tools import render
from tools.stack_files import stacks

MODES = {
    "MIG": {"gpuPool": {"vmSize": "Standard_NC24ads_A100_v4", "migProfile": "MIG1g"}},
    "GPU Operator": {"gpuPool": {"vmSize": "Standard_NC4as_T4_v3", "management": "gpu-operator"}},
    "AKS-managed": {"gpuPool": {"vmSize": "Standard_NC4as_T4_v3", "management": "aks-managed"}},
    "un-awaited Job on Spot": {"mnistJob": {"waitForCompletion": False}, "gpuPool": {"vmSize": "Standard_NC4as_T4_v3", "spot": True}},
}


@pytest.mark.parametrize("stack", stacks())
def test_every_stacks_objects_are_valid_kubernetes(stack):
    assert kubernetes_problems(project_run(stack)) == []


@pytest.mark.parametrize("mode", MODES)
def test_every_modes_objects_are_valid_kubernetes(mode):
    assert invalid(run_cached("dev", **MODES[mode])[0]) == []


def test_an_unknown_field_is_caught():
    job = next(o for o in render.kubernetes_objects(run_cached("dev")[0]) if o.inputs["kind"] == "Job")
    doc = render.manifest(job)
    doc["spec"] = {**doc["spec"], "backoffLimitt": 3}
    with pytest.raises(kubernetes_validate.ValidationError, match="backoffLimitt"):
        kubernetes_validate.validate(doc, KUBERNETES_VERSION, strict=True)
