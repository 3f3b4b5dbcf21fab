"""The proof's watch as a Pulumi dynamic resource: a sibling of each proof Job `pulumi up` waits
for, whose create watches the Job's pods and events during `up` (components/proof/
watch_live.py `watch`), says what it waits for on its own row of the CLI, and fails in the
cluster's words, ending the Job, once waiting will not mend the cause (issue #53; docs/proof.md).

Why a resource beside the Job, and not the Job's own await:
  - pulumi-kubernetes' Job await watches the Job and its pods' conditions only, hides a pod
    message that holds "containers with unready status" while it waits, and reads no event
    (pulumi-kubernetes@94977969, v4.32.0-27, provider/pkg/await/job.go; uv.lock pins v4.34.2,
    whose release notes since name no change to it: v4.34.0's, pulumi-kubernetes#4568, list
    extension parameterization, Kubernetes v1.36 and a waitFor JSONPath filter fix);
    `pulumi.com/waitFor` only adds a readiness condition on the object itself
    (provider/pkg/metadata/overrides.go ReadyCondition): neither can fail early;
  - the engine runs a resource's create as soon as its dependencies are done, beside any other
    step (pulumi/pulumi@1b594989 pkg/resource/deploy/step_executor.go): the watch depends on
    what the Job depends on, never on the Job, so it runs beside the Job's create-and-await;
  - a preview never waits: the engine's plugin client answers a preview's Create with its
    inputs, without calling the provider, when the provider did not say it supports previews
    (pulumi/pulumi@1b594989 sdk/go/common/resource/plugin/provider_plugin.go Create,
    `!protocol.supportsPreview`), and the dynamic host never says so: it implements no
    Handshake, and its Configure answers `acceptSecrets` alone (pulumi 3.272.0
    pulumi/dynamic/__main__.py Configure);
  - a failed create does not cancel another in flight (step_executor.go `cancelDueToError`
    cancels scheduling only; step.go calls `prov.Create(context.TODO(), ...)`): the watch ends
    the Job itself (components/proof/watch_live.py), so the Job's await returns at once.

Nothing remote belongs to this resource: no credential is an input or an output (the host
fetches the kubeconfig from ARM itself), delete has nothing to delete, and read has nothing to
read (the Job is pulumi-kubernetes'). The provider is pickled into the state by reference
(pulumi/dynamic/dynamic.py `serialize_provider`): a small module-level class with no fields,
and **moving or renaming this module or the class needs a re-export at the old path**, as the
managed pool's (docs/design/managed-pool-provider.md). No typed resource will replace it: it stands for
no object of the cluster's.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import pulumi
from pulumi.dynamic import ConfigureRequest, CreateResult, DiffResult, ReadResult, Resource, ResourceProvider, UpdateResult
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

# The dynamic provider host answers every call on a pool of this many threads (pulumi 3.272.0
# pulumi/dynamic/__main__.py main: `grpc.server(futures.ThreadPoolExecutor(max_workers=4))`;
# pulumi/pulumi@1b594989 the same), and a watch's Create holds one for as long as it watches. So
# watches never share a host with the AKS-managed pool's provider, and at most WATCHES_PER_HOST
# share one, leaving a thread for the Check, Diff and Read calls the engine sends meanwhile: each
# host is an explicit `pulumi-python` provider of its own, which the engine starts as a plugin
# process of its own (pulumi/pulumi@1b594989 pkg/host/host.go Provider: plugin.NewProvider per
# provider resource). tests/test_proof_watch_resource.py holds HOST_WORKERS to the installed SDK.
# What the engine does with these hosts (pulumi/pulumi@1b594989): a watch moved to another host
# (a pool removed shifts the watches after it) is no replacement, since the engine asks the new
# host's DiffConfig (pkg/resource/deploy/step_generator.go providerChanged), which the dynamic host
# leaves unimplemented, answered as "DiffUnknown with no replaces" (sdk/go/common/resource/plugin/
# provider_plugin.go DiffConfig); a refresh reads no provider resource and a destroy's delete of
# one only closes its plugin (pkg/resource/deploy/providers/registry.go Read, Delete).
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


def cluster_props(cluster: ClusterRef) -> dict[str, Any]:
    """Where the cluster is, as a watch's (or the access wait's) inputs; `cluster_ref` reads them back."""
    return {
        "subscriptionId": cluster.subscription_id,
        "resourceGroupName": cluster.resource_group_name,
        "clusterName": cluster.cluster_name,
        "entra": cluster.entra,
        "armEndpoint": cluster.arm_endpoint,
    }


def cluster_ref(props: Mapping[str, Any]) -> ClusterRef:
    return ClusterRef(
        subscription_id=str(props["subscriptionId"]),
        resource_group_name=str(props["resourceGroupName"]),
        cluster_name=str(props["clusterName"]),
        entra=bool(props["entra"]),
        arm_endpoint=str(props["armEndpoint"]),
    )


def watch_facts(props: Mapping[str, Any]) -> WatchFacts:
    """The watch's inputs as the pure decision takes them. The host hands every number over as a
    double (a protobuf Struct's only number: pulumi/dynamic/__main__.py deserialize_properties),
    so `maxSteps` is 500.0 there."""
    return WatchFacts(
        namespace=str(props["namespace"]),
        job_name=str(props["jobName"]),
        pool_name=str(props["poolName"]),
        spec_hash=str(props["specHash"]),
        autoscaled=bool(props["autoscaled"]),
        image=str(props["image"]),
        max_steps=int(props["maxSteps"]),
        accepted_pools=tuple(str(pool) for pool in props.get(ACCEPTED_POOLS) or ()),
        vm_sizes={str(pool): str(size) for pool, size in (props.get(VM_SIZES) or {}).items()},
    )


def inputs_only(props: Mapping[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in props.items() if k not in (*OUTPUTS, PROVIDER_KEY)}


def diff_watch(olds: Mapping[str, Any], news: Mapping[str, Any]) -> DiffResult:
    """Pure. Replaces where the watched Job is another (WATCHED); any other change is an update
    that does nothing. A value a preview does not know counts as a change of it: nothing says
    it is not one (a Job whose namespace is replaced is itself replaced). Never
    delete_before_replace: nothing remote is named after the watch, so the engine's default,
    create the new one and then delete the old (Pulumi's docs, "Resource option:
    deleteBeforeReplace"; dynamic.DiffResult: "If true, and a replacement occurs, the resource
    will first be deleted before being recreated"), is right."""
    old, new = inputs_only(olds), inputs_only(news)
    changed = sorted(k for k in set(old) | set(new) if is_unknown(new.get(k)) or new.get(k) != old.get(k))
    replaces = [k for k in changed if k in WATCHED]
    return DiffResult(changes=bool(changed), replaces=replaces, stables=[], delete_before_replace=False)


class ProofWatchProvider(ResourceProvider):
    """The watch's steps. No fields: see the module docstring on pickling."""

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

    def read(self, id_: str, props: dict[str, Any]) -> ReadResult:
        # The state as it is: what the watch saw is its outcome, and the Job it watched is
        # pulumi-kubernetes' to refresh.
        return ReadResult(id_=id_, outs=dict(props))

    def update(self, id_: str, olds: dict[str, Any], news: dict[str, Any]) -> UpdateResult:
        # Only what diff_watch calls no replacement gets here (the status URN, the time limit,
        # the pool's facts): the Job is the same, nothing is watched again, what it saw is kept.
        # Without outs the host would store none (pulumi/dynamic/__main__.py Update).
        return UpdateResult(outs={**inputs_only(news), **{key: olds.get(key) for key in OUTPUTS}})

    def delete(self, id_: str, props: dict[str, Any]) -> None:
        # Nothing remote: the outcome's ConfigMap is in the stack's namespace, and goes with it.
        return None

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
            # The namespace object's name, so the watch comes after it; facts.namespace is the same name.
            "namespace": namespace,
            "jobName": facts.job_name,
            "poolName": facts.pool_name,
            "specHash": facts.spec_hash,
            "autoscaled": facts.autoscaled,
            "image": facts.image,
            "maxSteps": facts.max_steps,
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
