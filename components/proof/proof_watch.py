"""The proof's watch as a Pulumi dynamic resource: a sibling of each proof Job `pulumi up` waits
for, whose create watches the Job's pods and events during `up` (components/proof/watch_live.py
`watch`), says what it waits for on its own row of the CLI, and fails in the cluster's words,
ending the Job, once waiting will not mend the cause (docs/proof.md). Why a resource beside the
Job, what the engine does with it, and why **moving or renaming this module or the provider
class needs a re-export at the old path**: docs/design/proof-watch.md, "The watch as a resource".
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from typing import Any

import pulumi
from pulumi.dynamic import ConfigureRequest, CreateResult, DiffResult, Resource, ResourceProvider, UpdateResult
from pulumi.output import Unknown

from components.proof import watch_live as live_watch
from components.proof.watch_live import ClusterRef
from components.proof.watch_verdict import WatchFacts
from components.seam import engine_status, provider_host_patch

# The watch's type token: `pulumi-python:` and the dynamic module and name of the class below
# (pulumi/dynamic/dynamic.py Resource.__init_subclass__).
TYPE = "pulumi-python:dynamic/aksgpu:ProofWatch"

# The inputs that name the Job a watch watches: another value is another Job (a new spec, a new
# name or namespace, another cluster), which a new watch watches, so the engine replaces the
# watch, which creates it again (its create watches). Nothing else is compared for a
# replacement: a changed status URN or time limit is an update that does nothing.
WATCHED = ("subscriptionId", "resourceGroupName", "clusterName", "armEndpoint", "namespace", "jobName", "specHash")
# What the create reports, not inputs: the proof's last line, and the pool and vmSize of the node
# it ran on (docs/proof.md, "Which size served").
OUTPUT = "line"
SERVED_POOL, SERVED_VM_SIZE = "servedPool", "servedVmSize"
OUTPUTS = (OUTPUT, SERVED_POOL, SERVED_VM_SIZE)
# Inputs only a Job of several pools (a capacity group's) has, so today's one-pool watch keeps its
# inputs and diff: the pools in the team's order, and each one's vmSize.
ACCEPTED_POOLS, VM_SIZES = "acceptedPools", "vmSizes"
# The dynamic host's key for the pickled provider (pulumi/dynamic/__main__.py PROVIDER_KEY).
PROVIDER_KEY = "__provider"

# The dynamic host's threads (pulumi/dynamic/__main__.py main: `ThreadPoolExecutor(max_workers=4)`): a watch's
# Create holds one as long as it watches, so at most WATCHES_PER_HOST share a host of their own
# (docs/design/proof-watch.md, "The watch as a resource"; a test holds HOST_WORKERS to the SDK).
HOST_WORKERS = 4
WATCHES_PER_HOST = HOST_WORKERS - 1
# The package of Python's dynamic providers, whose provider resources are `pulumi:providers:pulumi-python`
# (pulumi/pulumi@1b594989 pkg/resource/deploy/target.go pythonDynamicProviderPackage).
DYNAMIC_PACKAGE = "pulumi-python"

# The dynamic provider's placeholder for a value a preview does not know (pulumi.runtime.rpc.UNKNOWN).
UNKNOWN = "04da6b54-80e4-46f7-96ec-b56ff0331ba9"


def is_unknown(value: Any) -> bool:
    """A value a preview does not know yet: the UNKNOWN string in the program's process, a
    `pulumi.output.Unknown` in the host's Diff and Check (rpc.deserialize_property)."""
    return isinstance(value, Unknown) or value == UNKNOWN


def watch_id(props: Mapping[str, Any]) -> str:
    """`<namespace>/<job name>/<spec hash>`: the Job instance the watch watched."""
    return f"{props['namespace']}/{props['jobName']}/{props['specHash']}"


# The watch's inputs of the Job it watches, each WatchFacts' field by its camelCase name (_key);
# where the cluster is: every field of ClusterRef's.
FACT_FIELDS = ("namespace", "job_name", "pool_name", "spec_hash", "autoscaled", "image", "max_steps")


def _key(field: str) -> str:
    head, *rest = field.split("_")
    return head + "".join(word.title() for word in rest)


def cluster_props(cluster: ClusterRef) -> dict[str, Any]:
    """Where the cluster is, as a watch's (or the access wait's) inputs; `cluster_ref` reads them back."""
    return {_key(field.name): getattr(cluster, field.name) for field in dataclasses.fields(cluster)}


def cluster_ref(props: Mapping[str, Any]) -> ClusterRef:
    return ClusterRef(**{field.name: props[_key(field.name)] for field in dataclasses.fields(ClusterRef)})


def watch_facts(props: Mapping[str, Any]) -> WatchFacts:
    """The watch's inputs as the pure decision takes them. The host hands every number over as a
    double (a protobuf Struct's only number: pulumi/dynamic/__main__.py deserialize_properties),
    so `maxSteps` is 500.0 there."""
    given = {field: props[_key(field)] for field in FACT_FIELDS}
    return WatchFacts(
        **{**given, "max_steps": int(given["max_steps"])},
        accepted_pools=tuple(props.get(ACCEPTED_POOLS) or ()),
        vm_sizes=dict(props.get(VM_SIZES) or {}),
    )


def inputs_only(props: Mapping[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in props.items() if k not in (*OUTPUTS, PROVIDER_KEY)}


def diff_watch(olds: Mapping[str, Any], news: Mapping[str, Any]) -> DiffResult:
    """Pure. Replaces where the watched Job is another (WATCHED); any other change is an update
    that does nothing. A value a preview does not know counts as a change. Never
    delete_before_replace: nothing remote is named after the watch."""
    old, new = inputs_only(olds), inputs_only(news)
    changed = sorted(k for k in set(old) | set(new) if is_unknown(new.get(k)) or new.get(k) != old.get(k))
    replaces = [k for k in changed if k in WATCHED]
    return DiffResult(changes=bool(changed), replaces=replaces, stables=[], delete_before_replace=False)


class ProofWatchProvider(ResourceProvider):
    """The watch's steps. No fields: see the module docstring on pickling. Read and delete are
    the SDK's: the state as it is (what the watch saw is its outcome; the Job is pulumi-kubernetes'
    to refresh), and nothing remote to delete (the outcome's ConfigMap goes with the namespace):
    pulumi 3.272 pulumi/dynamic/dynamic.py ResourceProvider.read returns ReadResult(id_, props), and
    its delete does nothing."""

    serialize_as_secret_always = False  # it captures nothing secret; keep the state readable

    def configure(self, req: ConfigureRequest) -> None:
        # As the managed pool's provider: the host then sends a failed step's one line (a
        # pulumi.RunError, components.errors.ProofWatchFailed) without a traceback.
        provider_host_patch.tell_if_unpatched(whose="the proof watch's provider")

    def create(self, props: dict[str, Any]) -> CreateResult:
        # Raises ProofWatchFailed (after ending the Job) where the proof failed or cannot start;
        # returns the proof's last line where it trained, or why it could not watch (the Job's
        # own await then decides).
        verdict = live_watch.watch(
            cluster_ref(props), watch_facts(props), float(props["seconds"]), engine_status.reporter(str(props["statusUrn"]))
        )
        served = {SERVED_POOL: verdict.pool, SERVED_VM_SIZE: verdict.vm_size}
        return CreateResult(id_=watch_id(props), outs={**inputs_only(props), OUTPUT: verdict.line, **served})

    def update(self, id_: str, olds: dict[str, Any], news: dict[str, Any]) -> UpdateResult:
        # Only what diff_watch calls no replacement gets here (the status URN, the time limit,
        # the pool's facts): the Job is the same, nothing is watched again, what it saw is kept.
        # Without outs the host would store none (pulumi/dynamic/__main__.py Update).
        return UpdateResult(outs={**inputs_only(news), **{key: olds.get(key) for key in OUTPUTS}})

    def diff(self, id_: str, olds: dict[str, Any], news: dict[str, Any]) -> DiffResult:
        return diff_watch(olds, news)


class ProofWatch(Resource, module="aksgpu", name="ProofWatch"):
    """Watches one proof Job while `pulumi up` waits for it (the module docstring says why)."""

    #: What the watch ended with: the proof's last line, or why it could not watch.
    line: pulumi.Output[str]
    #: The pool of the node that ran the proof ("" where the watch saw none); None in a state
    #: from before it was recorded.
    served_pool: pulumi.Output[str]
    #: That pool's vmSize, where the watch was told the sizes (a Job of several pools); else "".
    served_vm_size: pulumi.Output[str]

    def __init__(
        self,
        name: str,
        *,
        cluster: ClusterRef,
        facts: WatchFacts,
        namespace: pulumi.Input[str],
        seconds: int,
        status_urn: str,
        opts: pulumi.ResourceOptions | None = None,
    ) -> None:
        props = {
            **cluster_props(cluster),
            **{_key(field): getattr(facts, field) for field in FACT_FIELDS},
            # The namespace object's name, so the watch comes after it; facts.namespace is the same name.
            "namespace": namespace,
            "seconds": seconds,
            "statusUrn": status_urn,
            **({ACCEPTED_POOLS: list(facts.pools)} if facts.pools != (facts.pool_name,) else {}),
            **({VM_SIZES: dict(facts.vm_sizes)} if facts.vm_sizes else {}),
            **dict.fromkeys(OUTPUTS),
        }
        super().__init__(ProofWatchProvider(), name, props, opts)
        # The SDK names each output attribute as its key (pulumi/runtime/rpc.py transfer_properties).
        self.served_pool, self.served_vm_size = getattr(self, SERVED_POOL), getattr(self, SERVED_VM_SIZE)


def child_urn(parent_type: str, type_: str, name: str) -> str:
    """The URN the engine gives a child of a component registered at the stack's root: its type
    chain is the parent's type, then its own, the root Stack's left out (pulumi/pulumi@1b594989
    pkg/resource/deploy/deployment.go generateURN; components/ownership/stack_state.py program_urn).
    Plain, at construction: an input that were the parent's `urn` Output would make the watch
    depend on the component, and so on every child of it, the Job too (the SDK expands a
    component dependency into its children)."""
    return f"urn:pulumi:{pulumi.get_stack()}::{pulumi.get_project()}::{parent_type}${type_}::{name}"
