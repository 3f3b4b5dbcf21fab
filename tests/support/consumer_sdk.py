"""A stand-in for the Python SDK that `pulumi package add` generates for aks-gpu, so that another
team's program (examples/consumer-python/) runs here unchanged, with no Pulumi CLI: the same
names, each building the package's component (GpuEnvironment, GpuPools, ...) in-process with the offline reader.

The generated SDK's names, read in pulumi/pulumi 1b594989: the package `aks_gpu_aks_gpu`
(sdk/python/cmd/pulumi-language-python/main.go Link: `python.PyPack(namespace, name)`, the
schema's namespace and name both `aks-gpu`); a type's input class `<Type>Args`
(pkg/codegen/python/gen.go unqualifiedObjectTypeName); each property's keyword its `PyName`
(pkg/codegen/python/python.go), which for the schema's camelCase names is snake_case."""

from __future__ import annotations

import json
import re
import types
from collections.abc import Callable, Mapping
from typing import Any

import pulumi
from conftest import ROOT

from components.environment.provider import COMPONENTS
from components.seam.reader import AzureReader

SCHEMA = json.loads((ROOT / "tests" / "snapshots" / "package-schema.json").read_text())
PACKAGE = "aks_gpu_aks_gpu"  # PyPack("aks-gpu", "aks-gpu")


def py_name(name: str) -> str:
    """PyName of a schema name without acronyms (no two capitals in a row in this schema)."""
    return re.sub(r"(?<=[a-z0-9])([A-Z])", r"_\1", name).lower()


class InputType:
    """A generated `<Type>Args`: keyword arguments by PyName, the required ones required."""

    properties: Mapping[str, str] = {}
    required: frozenset[str] = frozenset()

    def __init__(self, **given: Any) -> None:
        unknown = sorted(set(given) - set(self.properties))
        missing = sorted(py_name(r) for r in self.required if py_name(r) not in given)
        if unknown or missing:
            raise TypeError(f"{type(self).__name__}: unexpected {unknown}, missing {missing}")
        self.values = {self.properties[key]: value for key, value in given.items() if value is not None}


def as_inputs(value: Any) -> Any:
    """An SDK value as the engine hands it to Construct: Args as their schema names; a map's own
    keys (pool names) as they are."""
    if isinstance(value, InputType):
        return {key: as_inputs(item) for key, item in value.values.items()}
    if isinstance(value, Mapping):
        return {key: as_inputs(item) for key, item in value.items()}
    if isinstance(value, (list, tuple)):
        return [as_inputs(item) for item in value]
    return value


def input_type(token: str, spec: Mapping[str, Any]) -> type[InputType]:
    names = {py_name(name): name for name in spec.get("properties", {})}
    return type(f"{token.rsplit(':', 1)[1]}Args", (InputType,), {"properties": names, "required": frozenset(spec.get("required", []))})


def module(reader: AzureReader) -> types.ModuleType:
    """The stand-in package, each of its components reading Azure and the cluster through `reader`."""
    sdk = types.ModuleType(PACKAGE)
    for token, spec in SCHEMA["types"].items():
        setattr(sdk, f"{token.rsplit(':', 1)[1]}Args", input_type(token, spec))
    classes = {component.__name__: component for component in COMPONENTS}
    for token, spec in SCHEMA["resources"].items():
        name = token.rsplit(":", 1)[1]
        setattr(sdk, name, constructor(name, classes[name], spec, reader))
    return sdk


def constructor(name: str, component: Callable[..., pulumi.ComponentResource], spec: Mapping[str, Any], reader: AzureReader) -> Any:
    """A generated SDK's component class: keyword inputs by PyName, built in-process with `reader`
    (each component's keyword, which ComponentResource's own constructor lacks)."""
    inputs = {py_name(name): name for name in spec["inputProperties"]}

    def build(resource_name: str, opts: pulumi.ResourceOptions | None = None, **given: Any) -> pulumi.ComponentResource:
        if unknown := sorted(set(given) - set(inputs)):
            raise TypeError(f"{name}: unexpected {unknown}")
        args = {inputs[key]: as_inputs(value) for key, value in given.items() if value is not None}
        return component(resource_name, args, opts, reader=reader)

    return build
