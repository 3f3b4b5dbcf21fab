"""What this stack already holds, from the engine's state, not from a mark the owner can remove:
"held" means the state holds the URN this program registers for it. Not known, every caller says
what it cannot tell, never a guess that would delete. Why, and the sources: docs/design/lifecycle.md,
"A pool that lost the stack's tag"."""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from azure.mgmt.containerservice import models  # the SDK's data models: no client, no call

from components.cluster import rest_shapes
from components.errors import PreflightError, cut, error_line
from components.ownership import adopted_record
from components.ownership.adopted_record import Record
from components.seam.reader import AzureReader, NoOutputs, NotDeployed, NotRead, read_errors

AGENT_POOL = "azure-native:containerservice:AgentPool"
MANAGED_POOL = "pulumi-python:dynamic/aksgpu:ManagedGpuPool"
NAMESPACE = "kubernetes:core/v1:Namespace"
DAEMON_SET = "kubernetes:apps/v1:DaemonSet"
# The names __main__.py and the components give them.
POOL_NAMES = {AGENT_POOL: "gpu-pool-{}-agent-pool", MANAGED_POOL: "gpu-pool-{}-managed"}
PLUGIN_NAMESPACE = (NAMESPACE, "nvidia-device-plugin-ns")
PLUGIN_DAEMON_SET = (DAEMON_SET, "nvidia-device-plugin-ds")
MANAGED_CLUSTER = ("azure-native:containerservice:ManagedCluster", "gpu-cluster-aks")
PRIORITY_CONFIG_MAP = ("kubernetes:core/v1:ConfigMap", "capacity-expander-priorities")
# The component each is declared in, and the package of every component the program declares.
POOL_COMPONENT = "aks-gpu:azure:GpuPool"
PLUGIN_COMPONENT = "aks-gpu:kubernetes:NvidiaDevicePlugin"
COMPONENTS = "aks-gpu:"
# The component package's components, whichever: the component host gives each the type token
# `<package>:index:<class>` (pulumi 3.272.0 provider/experimental/schema.py generate_schema).
PACKAGE = f"{COMPONENTS}index:"
# How a person lists what the state holds, whatever the program could read.
EXPORT = "pulumi stack export"
# The root Stack output that marks a state the offline render wrote (`make render WRITE_STATE=`,
# tools/rehearsal.py) as a rehearsal: the program never exports it, so a stack whose own state
# holds it had that file imported (`pulumi stack import`), and nothing in it was ever deployed.
REHEARSAL = "rehearsal"


def type_and_name(urn: str) -> tuple[str, str]:
    """A URN's resource type and name: `urn:pulumi:<stack>::<project>::<parent types$type>::<name>`
    (pulumi/pulumi sdk/go/common/resource/urn.go)."""
    parts = urn.split("::", 3)
    if len(parts) < 4:
        return "", ""
    return parts[2].rsplit("$", 1)[-1], parts[3]


# azure-native's type token for one API version of a resource, `azure-native:<module>/v<yyyymmdd>
# [preview|privatepreview|beta]:<Type>`, as a hand-run `pulumi import` of a versioned type writes
# it: the same Azure resource as `azure-native:<module>:<Type>`, which the SDK aliases to every one
# (pulumi-azure-native 3.29.0 sdk/python containerservice/agent_pool.py, `alias_opts`:
# "azure-native:containerservice/v20230401:AgentPool", ..."v20230402preview"...; its tokens end
# in those three suffixes alone). Linear: no nested repetition.
VERSIONED = re.compile(r"azure-native:([a-z0-9]+)/v[0-9]{8}[a-z]*:([A-Za-z0-9]+)")


def unversioned(type_: str) -> str:
    """The type token without azure-native's API version: `azure-native:containerservice:AgentPool`."""
    found = VERSIONED.fullmatch(type_)
    return f"azure-native:{found[1]}:{found[2]}" if found else type_


def _aliased(urn: str) -> str:
    """The URN with its own type unversioned: where the program registers the unversioned type at
    that URN, the SDK's alias makes the engine take the state's entry as the same resource
    (pulumi/pulumi@1b594989 pkg/resource/deploy/step_generator.go generateSteps: "We look up first
    by URN and then by any provided aliases"; and an import whose ID the old entry has is no import, `isImport`)."""
    type_, name = type_and_name(urn)
    if (plain := unversioned(type_)) == type_:
        return urn
    head = urn[: len(urn) - len(name) - 2]
    return f"{head[: len(head) - len(type_)]}{plain}::{name}"


@dataclass(frozen=True)
class Declarer:
    """Who declares the program's resources in this run: the program itself, at the stack's root
    (`component` None), or one of the package's components (its type token and name), under which
    every URN the program gives has one parent more (docs/design/package-day2.md)."""

    component: str | None = None
    name: str = ""

    def __post_init__(self) -> None:
        if self.component is not None and not self.component.startswith(PACKAGE):
            raise ValueError(f"{self.component} is not one of the package's components ({PACKAGE}<Name>)")

    def said(self) -> str:
        """How a line names what declares: `this program`, or the component by its type and name."""
        return "this program" if self.component is None else f"{self.component.rsplit(':', 1)[-1]} {self.name}"

    def record(self) -> str:
        """Where the record of what was adopted is: the stack's output, or the component's own."""
        return (
            f"the stack's output {adopted_record.OUTPUT}" if self.component is None else f"{self.said()}'s output {adopted_record.OUTPUT}"
        )


PROGRAM = Declarer()


def program_urn(project: str, stack: str, type_: str, name: str, under: str = "") -> str | None:
    """The URN this program registers a guarded resource under, None for a name it never gives
    (pulumi/pulumi@1b594989 pkg/resource/deploy/deployment.go generateURN); `under`, the qualified
    type of the package's component that declares it, if one does: a child's type follows its
    parent's whole qualified type (sdk/go/common/resource/urn/urn.go New)."""
    if (type_, name) in (PLUGIN_NAMESPACE, PLUGIN_DAEMON_SET):
        parent = PLUGIN_COMPONENT
    elif (pattern := POOL_NAMES.get(type_)) and _pool_of(pattern, name):
        parent = POOL_COMPONENT
    else:
        return None
    return f"urn:pulumi:{stack}::{project}::{under}{'$' if under else ''}{parent}${type_}::{name}"


def _pool_of(pattern: str, name: str) -> str | None:
    head, tail = pattern.split("{}")
    if name.startswith(head) and name.endswith(tail) and len(name) > len(head) + len(tail):
        return name[len(head) : len(name) - len(tail)]
    return None


def registered_by_program(urn: str, project: str, stack: str, under: str = "") -> bool:
    """Whether the program registers `urn` in this stack: its own URN for a guarded resource, else
    a child of one of the program's components. `under`: the qualified type of the package's
    component this run is; then `urn` is the program's one parent down, under that component or
    another of the package's at its place (whose type the package gives, not this list)."""
    parts = urn.split("::", 3)
    if len(parts) < 4 or parts[0] != f"urn:pulumi:{stack}" or parts[1] != project:
        return False
    if under:
        inner = _within(parts[2], under)
        return inner is not None and "$" in inner and registered_by_program(f"{parts[0]}::{project}::{inner}::{parts[3]}", project, stack)
    type_, name = type_and_name(urn)
    if (expected := program_urn(project, stack, unversioned(type_), name)) is not None:
        return _aliased(urn) == expected
    chain = parts[2].split("$")
    return type_ == STACK if len(chain) == 1 else len(chain) == 2 and chain[0].startswith(COMPONENTS)


def _within(qualified: str, under: str) -> str | None:
    """The qualified type below one of the package's components that sits where `under` does (the
    same parents above it), or None: `aks-gpu:index:GpuEnvironment$aks-gpu:azure:GpuPool` is
    `aks-gpu:azure:GpuPool` within `aks-gpu:index:GpuEnvironment`."""
    chain, top = qualified.split("$"), under.split("$")
    if len(chain) <= len(top) or chain[: len(top) - 1] != top[:-1] or not chain[len(top) - 1].startswith(PACKAGE):
        return None
    return "$".join(chain[len(top) :])


@dataclass(frozen=True)
class StackState:
    """What the stack's state holds, as (type, name) pairs by URN; `known` False: not read, and `why`."""

    known: bool
    held: Mapping[tuple[str, str], str] = field(default_factory=dict)
    why: str = ""
    #: Not known because no deployment of the stack has completed.
    undeployed: bool = False
    #: A Kubernetes object's ID as pulumi-kubernetes writes it, `<namespace>/<name>` or `<name>`
    #: (provider/pkg/provider/util.go parseFqName), by (type, name).
    objects: Mapping[tuple[str, str], str] = field(default_factory=dict)

    #: The tags the stack last wrote on each GPU pool it holds, by AKS name.
    pool_tags: Mapping[str, Mapping[str, Any]] = field(default_factory=dict)

    #: The guarded resources the state holds where the program does not register them: stray_refusal.
    strays: tuple[str, ...] = ()
    #: The annotations the stack last wrote on each Kubernetes object it holds, by (type, name).
    marks: Mapping[tuple[str, str], Mapping[str, str]] = field(default_factory=dict)
    #: What the stack's output `adopted` records, of what the state holds: no refresh erases it.
    adopted: Record = field(default_factory=Record)
    #: What declares the program's resources in this run, and, for a component's run, the
    #: component's qualified type in the state, which every URN it registers starts with.
    by: Declarer = PROGRAM
    under: str = ""
    #: Not read because the stack has no outputs (NoOutputs): taken as never deployed.
    no_outputs: bool = False
    #: In a component's run, the guarded resources another of the package's components holds, by (type, name).
    siblings: Mapping[tuple[str, str], str] = field(default_factory=dict)

    def kubernetes_ids(self, type_: str) -> frozenset[str]:
        return frozenset(i for (t, _), i in self.objects.items() if t == type_)

    def urn(self, type_: str, name: str) -> str | None:
        return self.held.get((type_, name))

    def holds(self, type_: str, name: str) -> bool | None:
        return (type_, name) in self.held if self.known else None

    def pool_urn(self, pool: str) -> str | None:
        return next((u for t, n in POOL_NAMES.items() if (u := self.urn(t, n.format(pool)))), None)

    def pools(self) -> frozenset[str] | None:
        if not self.known:
            return None
        return frozenset(p for t, n in self.held if (pattern := POOL_NAMES.get(t)) and (p := _pool_of(pattern, n)))


NOT_READ = StackState(False, why="the stack's state is read only for an existing cluster")


STACK = "pulumi:pulumi:Stack"
# What lives in the run's cluster, and so is held only while the state's cluster is this one; and
# the created cluster itself: another name is another cluster, which a first `up` creates.
IN_THE_CLUSTER = (AGENT_POOL, MANAGED_POOL, NAMESPACE, DAEMON_SET, PRIORITY_CONFIG_MAP[0], MANAGED_CLUSTER[0])


def read(reader: AzureReader, cluster: tuple[str, str] | None = None, *, project: str, stack: str, by: Declarer = PROGRAM) -> StackState:
    """What the stack holds, read once; a read that fails is "not known" with its reason. Where the
    state's own outputs name another `cluster` than this run's, nothing it holds lives in this one.
    `by`: what declares the program's resources; a component's run reads its own entry's outputs
    where the program reads the root Stack's, and is deployed once the state holds that entry."""
    try:
        answer = reader.stack_resources()
    except NotDeployed as why:
        return StackState(False, why=str(why), undeployed=True, by=by, no_outputs=isinstance(why, NoOutputs))
    except NotRead as why:
        return StackState(False, why=str(why), by=by)
    except read_errors() as error:  # not read: "not known"
        return StackState(False, why=error_line(error, 200), by=by)
    if (mark := rehearsal_mark(answer)) is not None:
        raise PreflightError(rehearsal_refusal(mark, stack))
    if by.component is None:
        return _held(answer, cluster, project, stack, by, "", _root_outputs(answer))
    own = [(str(u), e) for u, e in answer.items() if _is_own(str(u), project, stack, by)]
    # Its first `up`: the engine saves a component's entry when its create step completes, which calls no provider
    # (pulumi/pulumi@1b594989 pkg/resource/deploy/step.go CreateStep.Apply: `if s.new.Custom`), before its URN, which each child names, comes back.
    if not own:
        return StackState(False, why=f"the stack's state holds no {by.said()} yet: its first `up`", undeployed=True, by=by)
    if len(own) > 1:
        where = " and ".join(quoted(u) for u, _ in own[:2])
        return StackState(
            False, why=f"the stack's state holds {len(own)} of {by.said()} ({where}), and which one this is is not known", by=by
        )
    [(urn, entry)] = own
    outputs = entry.get("outputs") if isinstance(entry, Mapping) else None
    return _held(answer, cluster, project, stack, by, urn.split("::")[2], outputs if isinstance(outputs, Mapping) else None)


def _is_own(urn: str, project: str, stack: str, by: Declarer) -> bool:
    """Whether `urn` is the entry of the component `by` names: its type and name, in this stack."""
    parts = urn.split("::", 3)
    return (
        len(parts) == 4
        and parts[:2] == [f"urn:pulumi:{stack}", project]
        and parts[3] == by.name
        and parts[2].rsplit("$", 1)[-1] == by.component
    )


def _held(
    answer: Mapping[str, Any],
    cluster: tuple[str, str] | None,
    project: str,
    stack: str,
    by: Declarer,
    under: str,
    record: Mapping[str, Any] | None,
) -> StackState:
    """What the state holds of this run's: the program's, or its component's (`under`, the
    component's qualified type) one parent down; `record`, the outputs the program or the
    component last wrote (the root Stack's, or the component's own)."""
    ours = {str(u): e for u, e in answer.items() if registered_by_program(str(u), project, stack, under)}
    elsewhere = _other_cluster(record, cluster)
    held, objects, marks, siblings = {}, {}, {}, {}
    for urn, entry in ours.items():
        type_, name = type_and_name(urn)
        type_ = unversioned(type_)  # held at the program's URN, a versioned token is its own by the SDK's alias (_aliased)
        if elsewhere and type_ in IN_THE_CLUSTER:
            continue
        if not urn.split("::")[2].startswith(f"{under}$" if under else ""):
            siblings[(type_, name)] = urn  # another of the package's components': not this one's to change
            continue
        held[(type_, name)] = urn
        outputs = entry.get("outputs") if isinstance(entry, Mapping) else None
        metadata = outputs.get("metadata") if isinstance(outputs, Mapping) else None
        if type_.startswith("kubernetes:") and isinstance(metadata, Mapping) and isinstance(metadata.get("name"), str):
            where = metadata.get("namespace")
            objects[(type_, name)] = f"{where}/{metadata['name']}" if isinstance(where, str) and where else metadata["name"]
            annotations = metadata.get("annotations")
            if isinstance(annotations, Mapping):
                marks[(type_, name)] = {k: v for k, v in annotations.items() if isinstance(k, str) and isinstance(v, str)}
    strays = tuple(str(u) for u in answer if _stray(str(u), project, stack, under))
    base = StackState(True, held, objects=objects)
    return StackState(
        True,
        held,
        objects=objects,
        pool_tags=_pool_tags(base, ours),
        strays=strays,
        marks=marks,
        adopted=_recorded(record, base, by),
        by=by,
        under=under,
        siblings=siblings,
    )


def _root_outputs(answer: Mapping[str, Any]) -> Mapping[str, Any] | None:
    """The root Stack's outputs in a state's answer, if it has them."""
    root = next((e for u, e in answer.items() if type_and_name(str(u))[0] == STACK and isinstance(e, Mapping)), None)
    outputs = root.get("outputs") if root is not None else None
    return outputs if isinstance(outputs, Mapping) else None


def _recorded(record: Mapping[str, Any] | None, state: StackState, by: Declarer) -> Record:
    """The `adopted` output the program (the root Stack's) or its component (its own) last wrote,
    of what the state holds. A refresh leaves it as the last `up` wrote it: the engine refreshes
    custom resources only (pulumi/pulumi@1b594989 pkg/resource/deploy/step.go RefreshStep.Apply:
    "Component, provider, and pending-replace resources never change with a refresh"); the root
    Stack is a component (sdk/python lib/pulumi/runtime/stack.py `Stack(ComponentResource)`), and a
    component's entry holds what its register_outputs sent (step_executor.go
    executeRegisterResourceOutputs), which readStackResourceOutputs answers (builtins.go, backend.go
    GetStackResourceOutputs: each resource's `r.Outputs`)."""
    try:
        recorded = adopted_record.parse(record)
    except adopted_record.Malformed as why:
        raise PreflightError(
            f"preflight: {by.record()} {why}, which this program never writes (it writes "
            f"{adopted_record.SHAPE}): what the stack adopted is not known; put back the output as the last `up` wrote it "
            f"(`{EXPORT}`, edit, `pulumi stack import`); nothing was created"
        ) from None
    return recorded.within(state.pools() or (), state.kubernetes_ids(NAMESPACE), state.kubernetes_ids(DAEMON_SET))


def rehearsal_mark(answer: Mapping[str, Any]) -> str | None:
    """The rehearsal mark among the root Stack's outputs, which readStackResourceOutputs answers
    with the rest (pulumi/pulumi@1b594989 pkg/backend/backend.go GetStackResourceOutputs ranges
    over every resource of the snapshot, the root Stack's too); None: a real deployment's state."""
    outputs = _root_outputs(answer)
    return cut(str(outputs[REHEARSAL])) if outputs is not None and REHEARSAL in outputs else None


def rehearsal_refusal(mark: str, stack: str) -> str:
    """Why a run stops at a rehearsal in the stack's own state: it says resources exist that no
    `up` made, and an `up` would update what is not there or delete what is not the stack's."""
    return (
        f"preflight: the state of stack {stack} is a rehearsal, not a deployment ({REHEARSAL}: {mark}): someone imported "
        "the file `make render WRITE_STATE=` writes (`pulumi stack import`); nothing in it exists because of this stack; "
        "import the stack's last real export instead (`pulumi stack import --file <export>`; `pulumi stack history` lists "
        "its updates), or, for a stack that never deployed, start it afresh (`pulumi stack rm --force --preserve-config`, then "
        "`pulumi stack init`); nothing was created"
    )


def _other_cluster(outputs: Mapping[str, Any] | None, cluster: tuple[str, str] | None) -> bool:
    """Whether the state's last deployment was into another cluster, by the outputs the program or
    its component last wrote (ARM names compare without case)."""
    if cluster is None or outputs is None:
        return False
    was = (outputs.get("resourceGroupName"), outputs.get("clusterName"))
    if not all(isinstance(w, str) for w in was):
        return False
    return tuple(str(w).lower() for w in was) != tuple(c.lower() for c in cluster)


def _stray(urn: str, project: str, stack: str, under: str) -> bool:
    """A guarded resource the state holds in this stack where the program does not register it,
    under whichever of azure-native's type tokens for it; in a component's run, where none of the
    package's components in its place does (`under`: _within)."""
    type_, name = type_and_name(urn)
    type_ = unversioned(type_)
    guarded = type_ in POOL_NAMES or (type_, name) in (PLUGIN_NAMESPACE, PLUGIN_DAEMON_SET)
    if not guarded or not urn.startswith(f"urn:pulumi:{stack}::{project}::"):
        return False
    if under:
        inner = _within(urn.split("::")[2], under)
        if inner is None:
            return True
        urn = f"urn:pulumi:{stack}::{project}::{inner}::{name}"
    return _aliased(urn) != program_urn(project, stack, type_, name)


def stray_refusal(state: StackState, project: str, stack: str) -> str | None:
    """Why a stray stops the run: the engine would delete it at the end of this `up`, the same
    object the program declares under its own URN, or stop there if `pulumi import` protected it
    (pulumi/pulumi@1b594989 step_generator.go GenerateDeletes, operations/import.go)."""
    if not state.strays:
        return None
    urn = state.strays[0]
    given, name = type_and_name(urn)
    type_ = unversioned(given)
    kind = "GPU pool" if type_ in POOL_NAMES else type_.rsplit(":", 1)[-1]
    mine = program_urn(project, stack, type_, name, state.under)
    where = f"it declares it as {quoted(mine)}" if mine else "it declares no such name"
    # A versioned token names the same Azure resource: deleting the entry deletes the program's pool.
    same = "the same Azure pool" if type_ in POOL_NAMES else "the same object in the cluster"
    token = f", under azure-native's versioned type {given}, the same Azure resource as {type_}" if given != type_ else ""
    return (
        f"preflight: the stack's state holds the {kind} {quoted(urn)}{token}, which {state.by.said()} does not register ({where}), "
        "probably brought in by hand (`pulumi import`): this `up` would delete it at the end of the update, and with it "
        f"what the program declares ({same}), or stop at it if protected; take it out of the state, which leaves it in Azure and the cluster: "
        f"`pulumi state delete --force {quoted(urn)}`, then run again (existing: adopt or devicePlugin.adopt imports it "
        "where the program declares it); nothing was created"
    )


def sibling_refusal(state: StackState, pools: Iterable[str], project: str, stack: str) -> str | None:
    """Why a component's run stops at a pool it declares that the state holds under another of the
    package's components: two entries for one Azure pool, and an `up` that drops either deletes
    the pool (pulumi/pulumi@1b594989 step_generator.go GenerateDeletes)."""
    for pool in pools:
        for type_, pattern in POOL_NAMES.items():
            if (urn := state.siblings.get((type_, pattern.format(pool)))) is not None:
                mine = program_urn(project, stack, type_, pattern.format(pool), state.under) or ""
                return (
                    f"preflight: the stack's state holds the GPU pool {pool} as {quoted(urn)}, under another of the package's "
                    f"components, and {state.by.said()} declares it too ({quoted(mine)}): two resources for one Azure pool, and "
                    "an `up` that drops either deletes the pool; declare it in one of them (to move it, take it out of the "
                    f"other's inputs and out of the state, which leaves it in Azure: `pulumi state delete --force {quoted(urn)}`, "
                    "then adopt it here with existing: adopt); nothing was created"
                )
    return None


def _pool_tags(state: StackState, answer: Mapping[str, Any]) -> dict[str, Mapping[str, Any]]:
    """The tags each pool's entry last recorded, its outputs read as the SDK's AgentPool (rest_shapes.view)."""
    tags = {}
    for pool in state.pools() or ():
        entry = answer.get(state.pool_urn(pool) or "")
        outputs = rest_shapes.view(entry.get("outputs") if isinstance(entry, Mapping) else None, models.AgentPool)
        properties = outputs.get("properties") if isinstance(outputs, Mapping) else None
        recorded = properties.get("tags") if isinstance(properties, Mapping) else None
        if isinstance(recorded, Mapping):
            tags[pool] = recorded
    return tags


def shown(value: str) -> str:
    return cut(value if value.isprintable() else ascii(value))


def quoted(urn: str) -> str:
    """A URN single-quoted as a shell takes it (`pulumi state delete`'s help), else escaped; cut."""
    return f"'{cut(urn)}'" if urn.isprintable() and "'" not in urn else cut(ascii(urn))


def unknown_pool_advice(pool: str, state: StackState) -> str:
    """How a person tells whether the state holds `pool`: never an action that would unregister it."""
    names = " -e ".join(n.format(pool) for n in POOL_NAMES.values())
    return (
        f"what this stack's state holds is not known ({state.why}): check with `{EXPORT} | grep -e {names}`; if the state "
        f"lists it, the pool is this stack's and lost its tag: keep this entry as it is (a new name or `existing` would "
        "delete it) and run again once the state can be read, or put the tag back with `az aks nodepool update --tags` "
        "naming every tag it keeps; if not, it is somebody else's"
    )
