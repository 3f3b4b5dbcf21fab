"""Azure's ARM template schemas (tests/azure-specs/) and what in a rendered azure.json they refuse."""

from __future__ import annotations

import json
from functools import cache
from pathlib import Path
from typing import Any

import jsonschema
from referencing import Registry, Resource
from referencing.jsonschema import DRAFT4

from tools import render

SPECS = Path(__file__).parent.parent / "azure-specs"

# ARM type -> (schema file, the section and name of its resource definition).
DEFINITIONS = {
    "Microsoft.Resources/resourceGroups": ("Microsoft.Resources.json", "subscription_resourceDefinitions", "resourceGroups"),
    "Microsoft.ContainerService/managedClusters": ("Microsoft.ContainerService.Aks.json", "resourceDefinitions", "managedClusters"),
    "Microsoft.ContainerService/managedClusters/agentPools": (
        "Microsoft.ContainerService.Aks.json",
        "resourceDefinitions",
        "managedClusters_agentPools",
    ),
    "Microsoft.Authorization/roleAssignments": ("Microsoft.Authorization.json", "resourceDefinitions", "roleAssignments"),
    # A resource-group deployment's budgets (the 2024-08-01 schema has no extension section).
    "Microsoft.Consumption/budgets": ("Microsoft.Consumption.json", "resourceDefinitions", "budgets"),
}

# API versions Azure publishes no ARM template schema for, and the schema that stands in
# for each: azure-resource-manager-schemas (snapshot a1454431, 2026-08-16) has no
# Microsoft.ContainerService.Aks.json for 2026-08-01, the managed pool's stable agentPools
# version; its newest AKS schema with gpuProfile.nvidia (NvidiaGPUProfile) is
# 2026-05-02-preview, whose agent pool has every property the program sends at 2026-08-01.
STAND_INS = {"2026-08-01": "2026-05-02-preview"}


@cache
def registry() -> tuple[Registry, dict[str, dict[str, Any]]]:
    reg: Registry = Registry()
    docs = {}
    for path in SPECS.rglob("*.json"):
        doc = json.loads(path.read_text())
        docs[path.relative_to(SPECS).as_posix()] = doc
        reg = reg.with_resource(doc["id"].rstrip("#"), Resource(contents=doc, specification=DRAFT4))
    return reg, docs


def schema_errors(body: dict[str, Any]) -> list[str]:
    reg, docs = registry()
    file, section, name = DEFINITIONS[body["type"]]
    version = STAND_INS.get(body["apiVersion"], body["apiVersion"])
    if f"{version}/{file}" not in docs:
        return [f"{body['type']}: no schema for API version {body['apiVersion']} in tests/azure-specs (see its README)"]
    doc = docs[f"{version}/{file}"]
    validator = jsonschema.Draft4Validator({"$ref": f"{doc['id'].rstrip('#')}#/{section}/{name}"}, registry=reg)
    # A child written at the template's top level is named "<parent>/<child>"; the schema's
    # name pattern describes the child's own name.
    body = {**body, "name": body["name"].split("/")[-1], "apiVersion": version}
    body.pop("scope", None)  # an extension resource's scope is part of its URL, not its body
    errors = []
    for error in validator.iter_errors(body):
        # The schemas "list `properties` as required on every resource" (azure-specs
        # README); the REST API does not require them of a resource group, and azure-native
        # sends it none.
        if error.message == "'properties' is a required property" and body["type"] == "Microsoft.Resources/resourceGroups":
            continue
        causes = [c.message for c in error.context or []] or [error.message]
        errors.append(f"{body['type']} {'/'.join(map(str, error.absolute_path))}: {'; '.join(causes)[:300]}")
    return errors


def bodies(run) -> list[dict[str, Any]]:
    return render.arm_template(run)["resources"]


def arm_problems(run) -> list[str]:
    """What in a run's azure.json Azure's schemas refuse, or have no definition for."""
    rendered = bodies(run)
    unknown = [f"{b['type']}: no schema definition known" for b in rendered if b["type"] not in DEFINITIONS]
    return unknown + [e for b in rendered if b["type"] in DEFINITIONS for e in schema_errors(b)]
