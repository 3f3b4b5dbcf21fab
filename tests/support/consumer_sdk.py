"""A stand-in for the Python SDK that `pulumi package add` generates for aks-gpu, so that another
team's program (examples/consumer-python/) runs here unchanged, with no Pulumi CLI: the same
names, each building the package's component (GpuEnvironment, GpuPools, ...) in-process with the offline reader.

The generated SDK's names, read in pulumi/pulumi 1b594989: the package `aks_gpu_aks_gpu`
(sdk/python/cmd/pulumi-language-python/main.go Link: `python.PyPack(namespace, name)`, the
schema's namespace and name both `aks-gpu`); a type's input class `<Type>Args`
(pkg/codegen/python/gen.go unqualifiedObjectTypeName); each property's keyword its `PyName`
(pkg/codegen/python/python.go), which for the schema's camelCase names is snake_case."""

from __future__ import annotations

import asyncio
import json
import re
import types
from collections.abc import Callable, Mapping
from typing import Any

import pulumi
from conftest import ROOT
from pulumi.runtime.sync_await import _sync_await

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
        registered(depends_on(opts))  # the consumer's SDK sends the registration only then
        built = component(resource_name, args, opts, reader=reader)
        registered(descendants(built))  # Construct answers only then
        return built

    return build


def depends_on(opts: pulumi.ResourceOptions | None) -> list[pulumi.Resource]:
    """The resources a component's registration waits for: the consumer's SDK awaits each `depends_on`
    resource's URN before it sends it (pulumi 3.272.0 runtime/resource.py `prepare_resource`, "all our
    dependencies must be finished"; rpc.py `_add_dependency` awaits `res.urn`), and the engine then
    calls Construct at once (pulumi/pulumi 1b594989 pkg/resource/deploy/source_eval.go RegisterResource,
    "Remote components don't go through the step generator")."""
    given = opts.depends_on if opts is not None else None
    if given is None:
        return []
    return [given] if isinstance(given, pulumi.Resource) else list(given)  # type: ignore[arg-type]


def descendants(resource: pulumi.Resource) -> list[pulumi.Resource]:
    """What a component registered below it, at any depth. The host answers Construct once every
    registration it made has been answered (pulumi 3.272.0 provider/server.py `_construct`:
    `wait_for_rpcs` after the response's outputs), and the engine answers a custom resource's once
    its step is done (source_eval.go `result = <-step.done`): in an update, once it is created. So the
    consumer's component, and whatever `depends_on` it, resolves after its children exist."""
    found: list[pulumi.Resource] = []
    for child in getattr(resource, "_childResources", ()):
        found += [child, *descendants(child)]
    return found


def registered(resources: list[pulumi.Resource]) -> None:
    """Runs the mock engine's event loop until each resource's registration has been answered."""

    async def answered() -> None:
        await asyncio.gather(*(resource.urn.future() for resource in resources))

    if resources:
        _sync_await(answered())
