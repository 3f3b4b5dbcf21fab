"""`make render STACK=dev`: the program's desired state, offline, under the mock engine
(tools/mock_engine.py), written to `build/<stack>/` (manifests.yaml, azure.json, resources.json,
outputs.json) and summarised. Every file is normalised, so the same program renders the same bytes
(`make snapshots`; docs/design/house.md, "Snapshots"); a configuration error prints its one line and
exits 1, as `pulumi preview` would. The files: README.md, "Two commands on a fresh machine"."""

from __future__ import annotations

import argparse
import collections
import functools
import importlib
import inspect
import json
import re
import sys
import textwrap
from pathlib import Path
from typing import Any

import pulumi
import yaml
from pulumi.output import Unknown

from components import problem
from components.catalog import gpu_sizes
from components.errors import ITEM
from components.ownership import adoption
from tools import rehearsal, state_diff
from tools.azure_mocks import AzureMocks
from tools.mock_engine import ProgramRun, RecordingMonitor, Registration, Secret, close_event_loops, run_program
from tools.stack_files import ROOT, SavedFileError, stack_config, stack_file, stacks

SECRET_MASK = "[secret]"
# What a preview does not know yet (a resource's output before it exists: a new cluster's
# resourceUID), where `pulumi preview` shows `output<string>`.
UNKNOWN_MASK = "[unknown until deployed]"
# A ConfigMap's `data` is what it holds (the proof's script): a reviewer reads it here.
MANIFEST_KEYS = ("apiVersion", "kind", "metadata", "spec", "data")


def masked(value: Any) -> Any:
    if isinstance(value, Secret):
        return SECRET_MASK
    if isinstance(value, Unknown):
        return UNKNOWN_MASK
    if isinstance(value, dict):
        return {k: masked(v) for k, v in value.items()}
    if isinstance(value, list):
        return [masked(v) for v in value]
    return value


# `kubectl apply -f` order: what others live in comes first.
KIND_ORDER = ("Namespace", "NetworkPolicy", "ConfigMap", "Service", "DaemonSet", "Job")


def kubernetes_objects(run: ProgramRun) -> list[Registration]:
    """The Kubernetes objects: namespaces first, then by kind, namespace and name.

    Registration order is not stable from run to run (components register concurrently),
    so it is not used."""

    def key(r: Registration) -> tuple[int, str, str]:
        kind = r.inputs.get("kind", "")
        rank = KIND_ORDER.index(kind) if kind in KIND_ORDER else len(KIND_ORDER)
        meta = r.inputs.get("metadata", {})
        return rank, meta.get("namespace", ""), meta.get("name", "")

    # A Helm release (the GPU Operator) is no manifest: its chart's objects exist only once
    # the chart is fetched, which the offline render does not do (docs/gpu.md).
    objects = (r for r in run.resources if r.type.startswith("kubernetes:") and "kind" in r.inputs)
    return sorted(objects, key=key)


def manifest(resource: Registration) -> dict[str, Any]:
    """apiVersion, kind, metadata, spec, data; inside them keys sorted, so diffs stay stable."""
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
            "dependencies": sorted(r.dependencies),
            "options": r.options,
            "inputs": masked(r.inputs),
        }
        for r in sorted(run.resources, key=lambda r: r.urn)
    ]


# --------------------------------------------------------------------------- ARM template

# Pulumi type -> ARM resource type. azure-native sends a resource's inputs to ARM as the
# resource body: `location`, `sku`, `identity`, `tags`, `kind` and `extendedLocation` at the
# top, everything else under `properties`; the inputs that name the resource and its parents
# go into the URL instead (Azure REST API specs, e.g. managedClusters.json ManagedCluster).
ARM_TYPES = {
    "azure-native:resources:ResourceGroup": "Microsoft.Resources/resourceGroups",
    "azure-native:containerservice:ManagedCluster": "Microsoft.ContainerService/managedClusters",
    "azure-native:containerservice:AgentPool": "Microsoft.ContainerService/managedClusters/agentPools",
    "azure-native:authorization:RoleAssignment": "Microsoft.Authorization/roleAssignments",
    "azure-native:consumption:Budget": "Microsoft.Consumption/budgets",
}
ARM_TOP_LEVEL = ("location", "sku", "identity", "tags", "kind", "extendedLocation")
# An agent pool has no envelope of its own: its tags are a property (agentPools spec,
# ManagedClusterAgentPoolProfileProperties.tags), as azure-native flattens them.
ARM_PROPERTY_TAGS = ("azure-native:containerservice:AgentPool",)
# The inputs that make up a resource's ARM name, outermost first.
ARM_NAME_INPUTS = {
    "azure-native:resources:ResourceGroup": ("resourceGroupName",),
    "azure-native:containerservice:ManagedCluster": ("resourceName",),
    "azure-native:containerservice:AgentPool": ("resourceName", "agentPoolName"),
    "azure-native:authorization:RoleAssignment": ("roleAssignmentName",),
    "azure-native:consumption:Budget": ("budgetName",),
}
# Inputs that go into the URL, not the body: the resource group, and every name above.
ARM_URL_INPUTS = frozenset({"resourceGroupName", *(k for names in ARM_NAME_INPUTS.values() for k in names)})
ARM_TEMPLATE_SCHEMA = "https://schema.management.azure.com/schemas/2019-04-01/deploymentTemplate.json#"


@functools.cache
def sdk_api_version(pulumi_type: str) -> str:
    """The REST API version the installed azure-native SDK uses for a resource type, as the
    docstring of its class's constructor states it ("Uses Azure REST API version
    2025-09-01."). Read from the module's text: the constructors that carry it are typing
    overloads, gone at run time, and `inspect.getsource` of a class parses its whole module
    with `ast.parse` (Python 3.11 inspect.findsource), slow on azure-native's modules and not
    safe beside another thread's parse on 3.11 ("AST constructor recursion depth mismatch",
    python/cpython#106905)."""
    _, module, name = pulumi_type.split(":")
    cls = getattr(importlib.import_module(f"pulumi_azure_native.{module}"), name)
    text = Path(inspect.getsourcefile(cls) or "").read_text()
    start = text.find(f"\nclass {name}(")
    found = re.search(r"Uses Azure REST API version (\S+?)\.", text[start:]) if start >= 0 else None
    if not found:
        raise LookupError(f"no API version in the docstring of {pulumi_type}")
    return found.group(1)


def arm_resource(r: Registration) -> dict[str, Any]:
    inputs = masked(r.inputs)
    if r.type not in ARM_TYPES:
        raise LookupError(f"no ARM type known for {r.type}: add it to tools/render.py ARM_TYPES")
    body: dict[str, Any] = {
        "type": ARM_TYPES[r.type],
        "apiVersion": sdk_api_version(r.type),
        # An unnamed role assignment gets a GUID from azure-native at creation.
        "name": "/".join(str(inputs.get(k, "[generated]")) for k in ARM_NAME_INPUTS[r.type]),
    }
    if "scope" in inputs:  # an extension resource: scope is part of its URL
        body["scope"] = inputs["scope"]
    top = [k for k in ARM_TOP_LEVEL if not (k == "tags" and r.type in ARM_PROPERTY_TAGS)]
    body.update({k: _sorted(inputs[k]) for k in top if k in inputs})
    properties = {k: v for k, v in inputs.items() if k not in ARM_URL_INPUTS and k not in (*top, "scope")}
    if r.type != "azure-native:resources:ResourceGroup":
        body["properties"] = _sorted(properties)
    return body


# The AKS-managed GPU pool: a dynamic resource (components/pools/managed_gpu_pool.py) whose inputs
# are the agentPools REST call itself: its API version, its URL's names and its body.
MANAGED_POOL_TYPE = "pulumi-python:dynamic/aksgpu:ManagedGpuPool"


def managed_pool_resource(r: Registration) -> dict[str, Any]:
    inputs = masked(r.inputs)
    return {
        "type": ARM_TYPES["azure-native:containerservice:AgentPool"],
        "apiVersion": inputs["apiVersion"],
        "name": f"{inputs['clusterName']}/{inputs['agentPoolName']}",
        "properties": _sorted(inputs["properties"]),
    }


def arm_template(run: ProgramRun) -> dict[str, Any]:
    """The Azure resources the program declares, as one ARM deployment template.

    For reading and for ARM linters; not for deployment: references between resources
    appear as the mock engine resolved them, and a template cannot hold a resource group
    and the resources inside it at one scope."""
    # By type and logical name, not by URN: which component holds a resource is no concern of ARM's.
    azure = sorted((r for r in run.resources if r.type.startswith("azure-native:")), key=lambda r: (r.type, r.name, r.urn))
    return {
        "$schema": ARM_TEMPLATE_SCHEMA,
        "contentVersion": "1.0.0.0",
        "resources": [arm_resource(r) for r in azure] + [managed_pool_resource(r) for r in run.of_type(MANAGED_POOL_TYPE)],
    }


def outputs_document(run: ProgramRun) -> dict[str, Any]:
    return {name: SECRET_MASK if out.secret else out.value for name, out in sorted(run.outputs.items())}


def write(run: ProgramRun, out_dir: Path) -> None:
    out_dir.mkdir(parents=True, exist_ok=True)
    docs = [manifest(r) for r in kubernetes_objects(run)]
    (out_dir / "manifests.yaml").write_text(yaml.safe_dump_all(docs, sort_keys=False, explicit_start=True))
    (out_dir / "azure.json").write_text(json.dumps(arm_template(run), indent=2) + "\n")
    (out_dir / "resources.json").write_text(json.dumps(resources_document(run), indent=2, sort_keys=True) + "\n")
    (out_dir / "outputs.json").write_text(json.dumps(outputs_document(run), indent=2) + "\n")
    # The day after's diff, only where a state was read: a stale one would speak of another run.
    (out_dir / DIFF_FILE).unlink(missing_ok=True)
    if found := state_diff.steps(run):
        (out_dir / DIFF_FILE).write_text("\n".join(diff_document(found)) + "\n")


DIFF_FILE = "diff.txt"


def diff_document(found: list[state_diff.Step]) -> list[str]:
    """Every step of the day after, each field whole; then what stays as it is, by name."""
    same = [f"  {s.name} ({s.type})" for s in found if s.op == "same"]
    head = "What `pulumi up` would do to what the stack's state holds, and what it adds (state inputs => declared inputs):"
    return [head, *state_diff.lines(found), f"unchanged ({len(same)}):", *same]


def gpu_pool_lines(run: ProgramRun) -> list[str]:
    """One line per GPU pool: a typed AgentPool, or the AKS-managed one (its REST body)."""
    lines = []
    for pool in run.of_type("azure-native:containerservice:AgentPool"):
        lines.append(_pool_line(pool.inputs["agentPoolName"], pool.inputs))
    for pool in run.of_type(MANAGED_POOL_TYPE):
        line = _pool_line(pool.inputs["agentPoolName"], pool.inputs["properties"])
        lines.append(f"{line} (AKS-managed GPU stack, agentPools API {pool.inputs['apiVersion']})")
    return lines


def _pool_line(name: str, p: dict[str, Any]) -> str:
    """A pool's size, nodes, MIG slices and taints, from its inputs (the typed pool's, or the
    managed pool's REST properties: the same names)."""
    low, high, count = p.get("minCount"), p.get("maxCount"), p.get("count")
    scale = (
        f"autoscaled from {low} to {high} node{'' if high == 1 else 's'}"
        if p.get("enableAutoScaling")
        else f"{count} node{'' if count == 1 else 's'}"
    )
    mig = f", MIG {gpu_sizes.mig_slices(p['vmSize'], p['gpuInstanceProfile'])}" if p.get("gpuInstanceProfile") else ""
    return f"GPU pool: {name} {p['vmSize']}, {scale}{mig}, taints {', '.join(p.get('nodeTaints', []))}"


def counts(run: ProgramRun) -> str:
    """What a first `up` does: imports (of which the `adopt:` lines say which it then updates),
    creates and replaces: none, for an adoption that would replace is refused (adoption.py). With
    the stack's state (preflight.stateFile), what it holds apart: neither imported nor created."""
    imported, updated = sum(1 for r in run.resources if r.options.get("import")), sum(map(adoption.updated, run.infos))
    found = state_diff.steps(run)
    if not found:
        return f"{len(run.resources)} resources: {imported} imported ({updated} then updated in place), {len(run.resources) - imported} created, 0 replaced"
    # The day after: the state's inputs diffed against the declared ones (tools/state_diff.py).
    n = state_diff.counted(found)
    held = n["same"] + n["update"] + n["replace"]
    gone = f"; no longer declared: {n['delete']} deleted, {n['delete[retain]']} released" if n["delete"] + n["delete[retain]"] else ""
    return (
        f"{len(run.resources)} resources: {held} held in the stack's state ({n['same']} unchanged, {n['update']} updated, "
        f"{n['replace']} replaced), {imported} imported ({updated} then updated in place), {n['create']} created{gone}"
    )


# The leads of the lines a preview prints for the record that the summary shows.
SAID = (
    "cluster:",
    "existing pool:",
    adoption.LEAD,
    "kubernetes:",
    "proof:",
    "network:",
    "namespaces:",
    "cost:",
    "gpuGroups",
    "aks-gpu:gpuGroups",
)


def day_after_lines(run: ProgramRun, out_dir: Path) -> list[str]:
    """What `up` would change in what the state holds, a line per resource, then its fields."""
    found = state_diff.steps(run)
    if not found:
        return []
    changed = state_diff.lines(found)
    if not changed:
        return [f"the day after: nothing changes in what the stack's state holds ({_relative(out_dir / DIFF_FILE)})"]
    return [f"the day after, what `pulumi up` would do (state => declared; all of it in {_relative(out_dir / DIFF_FILE)}):", *changed]


def summary(run: ProgramRun, out_dir: Path) -> str:
    lines = [f"{run.project} {run.stack}: {counts(run)} -> {_relative(out_dir)}"]
    # By type: registrations arrive in whatever order the SDK's threads send them.
    for type_, count in sorted(collections.Counter(r.type for r in run.resources).items()):
        lines.append(f"  {count} x {type_}")
    lines.extend(gpu_pool_lines(run))
    lines.extend(day_after := day_after_lines(run, out_dir))
    lines.append(f"Kubernetes objects: {len(kubernetes_objects(run))} in {_relative(out_dir / 'manifests.yaml')}")
    lines.extend(run.notes)  # what the offline render assumed in Azure's place
    lines.extend(line for i in run.infos if i.startswith(SAID) for line in indented_items(i))  # what a preview prints
    lines.append(f"warnings ({len(run.warnings)}):" if run.warnings else "warnings: none")
    lines.extend(f"  - {w}" for w in run.warnings)
    lines.append(stops_line(run))
    # A changed field is never folded: its values are read whole.
    whole = {line for line in day_after if line.startswith(state_diff.FIELD_INDENT)}
    return "\n".join(wrapped for line in lines for wrapped in ([line] if line in whole else fold(line)))


# How a preview's warning says `pulumi up` would stop at it (preflight, the cost limit, the
# owner's ConfigMap): "(a deployment stops here)", or the same words inside the sentence.
STOPS = problem.STOPS


def stops(run: ProgramRun) -> int:
    """How many of the preview's warnings would stop `pulumi up`."""
    return sum(STOPS in w for w in run.warnings)


def stops_line(run: ProgramRun) -> str:
    count = stops(run)
    return f"would stop `pulumi up`: {count} of the warnings" if count else "would stop `pulumi up`: nothing"


# The summary is read in a terminal: no line longer than this. A longer one continues on
# the next, indented, and nothing is cut; resources.json has every value in full. The one
# exception is a changed field of the day after (`  ~ maxCount: 3 => 4`): its values are whole.
WIDTH = 120
CONTINUED = "    "


def indented_items(message: str) -> list[str]:
    """A message that lists items (`- ` each on a line of its own, as the preview prints it): its
    head, then each item indented, so folding keeps one item from running into the next."""
    head, *items = message.split(ITEM)
    return [head, *(f"  - {item}" for item in items)]


def fold(line: str) -> list[str]:
    """`line` in lines of at most WIDTH characters, the rest indented; words are never
    split unless one alone is too long (an ID)."""
    if len(line) <= WIDTH:
        return [line]
    lead = " " * (len(line) - len(line.lstrip(" -")))
    return textwrap.wrap(line, width=WIDTH, subsequent_indent=lead + CONTINUED, break_on_hyphens=False, break_long_words=True)


def unfold(text: str) -> str:
    """The summary with each continued line joined to the one it continues (for reading it
    back, as the tests do): no line of the summary itself starts with CONTINUED."""
    out: list[str] = []
    for line in text.splitlines():
        if out and line.startswith(CONTINUED):
            out[-1] += " " + line.lstrip(" ")
        else:
            out.append(line)
    return "\n".join(out)


def _relative(path: Path) -> str:
    try:
        return str(path.resolve().relative_to(ROOT))
    except ValueError:
        return str(path)


SNAPSHOTS = ROOT / "tests" / "snapshots"
RENDERED_FILES = ("manifests.yaml", "azure.json", "resources.json", "outputs.json")


def prune_snapshots(keep: list[str]) -> list[str]:
    """The folder of a stack whose file is gone (a sample a team deleted) loses the files the
    render wrote, and goes if nothing else is in it: one line each."""
    lines = []
    for folder in sorted(p for p in SNAPSHOTS.glob("*") if p.is_dir() and p.name not in keep):
        for name in RENDERED_FILES:
            (folder / name).unlink(missing_ok=True)
        left, gone = sorted(p.name for p in folder.iterdir()), f"no Pulumi.{folder.name}.yaml"
        if left:
            lines.append(f"{_relative(folder)}: its rendered files removed, {gone}; kept {', '.join(left)}")
        else:
            folder.rmdir()
            lines.append(f"{_relative(folder)}: removed, {gone}")
    return lines


def no_such_stack(error: FileNotFoundError, stack: str) -> str:
    """A name without a stack file (`make render`'s default, dev, after the samples went): the stacks there are."""
    there = stacks(stack_file(stack).parent)
    if not there:
        return f'error: {error}, nor any other Pulumi.<stack>.yaml: write one (README, "Making it yours")'
    return f"error: {error}; the stacks here: {', '.join(there)} (make render STACK={there[0]})"


def stack_name(config_file: Path) -> str:
    """The stack a `Pulumi.<stack>.yaml` is for, or the file's stem."""
    name = config_file.name
    return name[len("Pulumi.") : -len(".yaml")] if name.startswith("Pulumi.") and name.endswith(".yaml") else config_file.stem


def with_state_file(stack: str, path: Path | None, state_file: Path | None) -> dict[str, Any]:
    """The overrides that put `--state-file` in the stack's preflight.stateFile, as the stack's file
    would name it: relative to the project where it lies inside it (the CLI runs the program there)."""
    if state_file is None:
        return {}
    try:
        preflight = json.loads(stack_config(stack, path).get("aks-gpu:preflight", "{}"))
    except (FileNotFoundError, SavedFileError, json.JSONDecodeError):
        preflight = {}  # run_program says what is wrong with the stack file
    given = state_file.resolve()
    named = given.relative_to(ROOT) if given.is_relative_to(ROOT) else given
    return {"preflight": {**(preflight if isinstance(preflight, dict) else {}), "stateFile": str(named)}}


def given_with_state_file(error: str, state_file: Path | None) -> str:
    """Where a refusal names the state file's key, that the file came from --state-file."""
    return " (the file given with --state-file, which stands in for that key)" if state_file and "preflight.stateFile" in error else ""


def monitor_for(state_file: Path | None) -> dict[str, Any]:
    """With --state-file, the mock engine's monitor, its reader told where the state file came
    from (its offline line says so); without, none: run_program makes its own."""
    if state_file is None:
        return {}
    mocks = AzureMocks()
    mocks.reader.state_given = "--state-file"
    return {"monitor": RecordingMonitor(mocks)}


def write_state(stack: str, overrides: dict[str, Any], own: dict[str, Any], args: argparse.Namespace) -> int:
    """The rehearsal: the same program as a deployment, its state written; 0, or 1 where `up` would stop."""
    try:
        deployed = run_program(stack, overrides=overrides, preview=False, **own, **monitor_for(args.state_file))
    except pulumi.RunError as error:
        print(f"error: no state written to {args.write_state}: a deployment stops here: {error}", file=sys.stderr)
        return 1
    count = rehearsal.write(deployed, args.write_state)
    written = _relative(args.write_state)
    line = (
        f"rehearsal: the state this `pulumi up` would leave ({count} resources, the root Stack's included) written to {written}, "
        f"marked as a rehearsal (a real run refuses it); the day after: make render STATE_FILE={written}"
    )
    print("\n".join(fold(line)))
    return 0


#: `--strict`'s exit status where a preview would stop `pulumi up` (1 is a configuration error, 2 no such stack).
STRICT_EXIT = 3


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--stack", action="append", help="stack name: reads Pulumi.<stack>.yaml (default: dev; repeatable)")
    parser.add_argument("--all", action="store_true", help="every stack with a Pulumi.<stack>.yaml")
    parser.add_argument(
        "--config-file",
        type=Path,
        help="the stack's config from this file, as `pulumi preview --config-file` (default: Pulumi.<stack>.yaml; "
        "the stack is named by --stack, else by the file's Pulumi.<stack>.yaml)",
    )
    parser.add_argument(
        "--out", type=Path, help="output folder (default: build/<stack>); with several stacks, the parent of one folder each"
    )
    parser.add_argument(
        "--strict",
        action="store_true",
        help=f"exit {STRICT_EXIT} when a warning would stop `pulumi up` (for a CI gate; `make render STRICT=1`)",
    )
    parser.add_argument(
        "--state-file",
        type=Path,
        help="the stack's state saved by `pulumi stack export`, or a rehearsal --write-state wrote: stands in for "
        "aks-gpu:preflight.stateFile in this render (`make render STATE_FILE=<path>`)",
    )
    parser.add_argument(
        "--write-state",
        type=Path,
        help="also run the program as a deployment and write the state a successful `pulumi up` would leave there, "
        "marked as a rehearsal (`make render WRITE_STATE=<path>`)",
    )
    parser.add_argument(
        "--snapshots", action="store_true", help=f"write every stack to {_relative(SNAPSHOTS)}/<stack>, remove those of stacks gone"
    )
    args = parser.parse_args(argv)
    listed = args.all or args.snapshots
    if args.config_file and (listed or len(args.stack or ()) > 1):
        parser.error("--config-file is one stack's file: give it with at most one --stack, without --all or --snapshots")
    if (args.state_file or args.write_state) and (listed or len(args.stack or ()) > 1):
        parser.error("--state-file and --write-state are one stack's: give them with at most one --stack, without --all or --snapshots")
    named = [stack_name(args.config_file)] if args.config_file and not args.stack else None
    names = stacks() if listed else (args.stack or named or ["dev"])
    if listed and not names:
        print("no Pulumi.<stack>.yaml in the project: nothing to render")
    stopped = 0
    for stack in names:
        # Listed, it is the project's own file, whatever a name alone means (stack_files.STACK_FOLDER).
        own: dict[str, Any] = {"stack_file": ROOT / f"Pulumi.{stack}.yaml"} if listed else {}
        if args.config_file:  # relative to where make runs, the project; its saved files too, as the CLI runs the program there
            own = {"stack_file": args.config_file if args.config_file.is_absolute() else ROOT / args.config_file}
        if args.snapshots:
            out_dir = SNAPSHOTS / stack
        elif args.out and len(names) == 1:
            out_dir = args.out
        else:
            out_dir = (args.out or ROOT / "build") / stack
        overrides = with_state_file(stack, own.get("stack_file"), args.state_file)
        try:  # `pulumi preview`, as the README says
            run = run_program(stack, overrides=overrides, preview=True, **own, **monitor_for(args.state_file))
        except FileNotFoundError as error:
            print(no_such_stack(error, stack), file=sys.stderr)
            return 2
        except SavedFileError as error:  # a stack file or a saved description it cannot use
            print(f"error: {error}", file=sys.stderr)
            return 1
        except pulumi.RunError as error:
            said = f"{error}{given_with_state_file(str(error), args.state_file)}"
            print(f"error: {stack}: {said}" if len(names) > 1 else f"error: {said}", file=sys.stderr)
            return 1
        write(run, out_dir)
        print(summary(run, out_dir))
        stopped += stops(run)
        if args.write_state and (failed := write_state(stack, overrides, own, args)):
            return failed
    if args.snapshots:
        for line in prune_snapshots(names):
            print(line)
    return STRICT_EXIT if args.strict and stopped else 0


if __name__ == "__main__":
    try:
        code = main()
    finally:
        close_event_loops()
    sys.exit(code)
