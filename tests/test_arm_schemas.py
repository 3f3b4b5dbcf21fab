"""Every Azure resource the program declares, as `azure.json` renders its request body,
validates against Azure's published ARM template schema for its API version
(tests/azure-specs/, unchanged copies of Azure's files: its README names each one's source)."""

from __future__ import annotations

import pytest
from conftest import git_blob, project_run, run_cached
from support.arm_schemas import SPECS, arm_problems, bodies, schema_errors

from tools.stack_files import stacks

# Every committed schema by its git blob (`git hash-object`), the blob Azure's repository
# holds at the commit tests/azure-specs/README.md names: a copy edited by hand, or a file
# added without its source, no longer matches.
BLOBS = {
    "2022-04-01/Microsoft.Authorization.json": "f2bc8475f722d263bf8799b9cc8c96f17b35fea7",
    "2024-03-01/Microsoft.Resources.json": "33886b7661837688a6ea43b5dde9fa955d3480c1",
    "2024-08-01/Microsoft.Consumption.json": "a09596ec23f6947a7ee18fffe38dfbfa58169cc6",
    "2025-09-01/Microsoft.ContainerService.Aks.json": "2ef1207d966dba517f39f65fc2b163e00ef6b93b",
    "2026-01-02-preview/Microsoft.ContainerService.Aks.json": "75966271a67dadef94174691248739e8f5e0c61d",
    "2026-05-02-preview/Microsoft.ContainerService.Aks.json": "a709f351e09321d89f81e15f8b2ab98800e5a6be",
    "common/definitions.json": "49a5e57d386566aa904a396b3e1eb57b15a0ca09",
}
# Configurations that reach every ARM shape the program can send. The budget's is the same
# whatever the cluster: it rides on the first variant's run.
BUDGET = {"cost": {"budget": {"amount": 500, "contactEmails": ["gpu-team@example.com", "finops@example.com"]}}}
VARIANTS = {
    # The schema types a budget's amount as an integer (the REST spec takes a decimal).
    "entra, autoscaled Spot T4, a monthly budget": {
        **BUDGET,
        "access": {"mode": "entra", "deployerObjectId": "5f1c2d3e-4a5b-4c6d-8e7f-9a0b1c2d3e4f", "authorizedIpRanges": ["203.0.113.0/24"]},
        "gpuPool": {"vmSize": "Standard_NC4as_T4_v3", "minCount": 0, "maxCount": 2, "spot": True},
        "upgrade": {"channel": "stable", "nodeOsChannel": "SecurityPatch"},
        "network": {"policy": "calico"},
        "kubernetesVersion": "1.33",
        "clusterTier": "Premium",
    },
    "MIG on an A100": {"gpuPool": {"vmSize": "Standard_NC24ads_A100_v4", "migProfile": "MIG3g"}},
    # 2026-08-01, against its stand-in (STAND_INS); MIG goes over 2026-01-02-preview.
    "AKS-managed GPU nodes": {"gpuPool": {"vmSize": "Standard_NC4as_T4_v3", "management": "aks-managed", "spot": True}},
    "AKS-managed MIG": {"gpuPool": {"vmSize": "Standard_NC24ads_A100_v4", "management": "aks-managed", "migProfile": "MIG1g"}},
    "GPU Operator (no AKS driver)": {"gpuPool": {"vmSize": "Standard_NC4as_T4_v3", "management": "gpu-operator"}},
}


@pytest.mark.parametrize("stack", stacks())
def test_every_stacks_azure_resources_validate_against_azures_schemas(stack):
    assert arm_problems(project_run(stack)) == []


@pytest.mark.parametrize("variant", VARIANTS)
def test_every_variants_azure_resources_validate(variant):
    rendered = bodies(run_cached("dev", **VARIANTS[variant])[0])
    assert [e for b in rendered for e in schema_errors(b)] == []


def test_the_gpu_fields_are_in_the_validated_bodies():
    """So the validation above covers them: gpuInstanceProfile and gpuProfile.driver."""
    pools = {
        name: next(b for b in bodies(run_cached("dev", **VARIANTS[name])[0]) if b["type"].endswith("/agentPools"))
        for name in ("MIG on an A100", "GPU Operator (no AKS driver)")
    }
    assert pools["MIG on an A100"]["properties"]["gpuInstanceProfile"] == "MIG3g"
    assert pools["GPU Operator (no AKS driver)"]["properties"]["gpuProfile"] == {"driver": "None"}
    bad = {**pools["MIG on an A100"], "properties": {**pools["MIG on an A100"]["properties"], "gpuInstanceProfile": "MIG5g"}}
    assert schema_errors(bad)


def test_the_validation_catches_a_body_azure_would_refuse():
    [pool] = [b for b in bodies(run_cached("dev")[0]) if b["type"].endswith("/agentPools")]
    broken = {**pool, "properties": {**pool["properties"], "osType": "Plan9", "maxPods": "many"}}
    errors = schema_errors(broken)
    assert any("'Plan9' is not valid" in e for e in errors) and any("'many'" in e for e in errors)


def test_the_committed_schemas_are_azures_unchanged():
    found = {path.relative_to(SPECS).as_posix(): git_blob(path.read_bytes()) for path in SPECS.rglob("*.json")}
    assert found == BLOBS


def test_the_readme_names_each_schemas_blob():
    """So the README that says where each file comes from speaks of the files there are."""
    readme = (SPECS / "README.md").read_text()
    assert [name for name, blob in BLOBS.items() if f"| {name} | {blob} |" not in readme] == []


def test_the_budget_body_is_validated_and_a_bad_one_refused():
    [body] = [
        b
        for b in bodies(run_cached("dev", **VARIANTS["entra, autoscaled Spot T4, a monthly budget"])[0])
        if b["type"] == "Microsoft.Consumption/budgets"
    ]
    assert schema_errors(body) == []
    bad = {**body, "properties": {**body["properties"], "timeGrain": "Weekly"}}
    assert schema_errors(bad)
