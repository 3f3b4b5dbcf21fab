"""Whose a pool or an object of an existing cluster is (the marks `aks-gpu-stack` and
`aks-gpu-adopted`), and the guard that stops a run that would delete or replace what the stack
adopted. Pure. Docs: docs/existing-cluster.md, "Handing back what was adopted"."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from components.cluster.cluster_facts import OWNER_TAG, ClusterFacts
from components.config.values import NAMESPACE
from components.errors import PreflightError
from components.gpu_stack.cluster_objects import GUIDE_DAEMONSET, STACK_ANNOTATION, Seen
from components.gpu_stack.settings import DevicePluginConfig
from components.ownership import adopted_record, stack_state
from components.ownership.stack_state import EXPORT, NOT_READ, POOL_NAMES, StackState, shown
from components.pools.settings import GpuPoolConfig, Pools

ADOPTED = "aks-gpu-adopted"
PLUGIN_ADOPT = f"{NAMESPACE}:devicePlugin.adopt"
HAND_BACK = "docs/existing-cluster.md, handing back what was adopted"


def tag(tags: Mapping[str, Any] | None, name: str) -> str | None:
    """A tag's value: "Tag names are case-insensitive for operations ... Tag values are
    case-sensitive" (MicrosoftDocs/azure-docs tag-resources.md at 000024f4)."""
    wanted = name.lower()
    value = next((v for k, v in (tags or {}).items() if str(k).lower() == wanted), None)
    return None if value is None else str(value)


def owner_of(tags: Mapping[str, Any] | None) -> str | None:
    return tag(tags, OWNER_TAG)


def adopter_of(tags: Mapping[str, Any] | None) -> str | None:
    return tag(tags, ADOPTED)


def without(tags: Mapping[str, Any] | None, names: Mapping[str, Any]) -> dict[str, Any]:
    """`tags` less any of `names` however spelt: a request must not carry one tag under two casings."""
    dropped = {n.lower() for n in names}
    return {k: v for k, v in (tags or {}).items() if str(k).lower() not in dropped}


def adopted_marks(owner: Mapping[str, str]) -> dict[str, str]:
    return {**owner, ADOPTED: owner[OWNER_TAG]}


def pool_marks(pool: GpuPoolConfig, owner: Mapping[str, str]) -> dict[str, str]:
    return adopted_marks(owner) if pool.existing == "adopt" else dict(owner)


def released(pool: GpuPoolConfig) -> bool:
    return pool.existing == "adopt" and pool.on_destroy != "delete"


def plugin_released(plugin: DevicePluginConfig) -> bool:
    return plugin.adopt and plugin.on_destroy != "delete"


def check_pools(pools: Pools, found: ClusterFacts, owner: str, state: StackState = NOT_READ, dry_run: bool = True) -> list[str]:
    """The pools this stack adopted (their tag, the one the stack last wrote on a pool its state
    holds, or the stack's `adopted` output, which no refresh erases): an entry without
    `existing: adopt` would replace the owner's pool, refused; one the config no longer names is
    released, warned. And `use` of a pool the state may hold."""
    warnings = used_unknown(pools, found, owner, state, dry_run)
    for facts in found.pools:
        marked = owner in (adopter_of(facts.tags), adopter_of(state.pool_tags.get(facts.name, {})))
        if not marked and facts.name not in state.adopted.pools:
            continue
        how = adopted_by(owner, marked, state.by.record())
        pool = next((p for p in pools.pools if p.name == facts.name), None)
        if pool is None:
            warnings.append(
                f"gpuPools: the pool {facts.name} that this stack adopted ({how}) is no longer in the config: while the state holds "
                f"it, this `up` {dropped(state.adopted.pools.get(facts.name), 'it', 'onDestroy: delete')}; to keep it, put it back "
                f"with existing: adopt; once released, take the stack's tags off ({HAND_BACK})"
            )
        elif pool.existing is None:
            key = pools.key(pool)
            raise PreflightError(
                f"{key}: the pool {facts.name} is the owner's, adopted by this stack ({how}), and the entry no longer "
                f"says existing: adopt: declared as a new pool, with the config's settings (vmSize {pool.vm_size} and the defaults), "
                f"it would be replaced, the owner's pool deleted first; put `existing: adopt` back in {key}, or hand the pool back "
                f"first ({HAND_BACK})"
            )
    return warnings


def adopted_by(owner: str, marked: bool, record: str) -> str:
    """How the run knows the stack adopted a thing: its mark, or, the marks taken off, its record
    (`record`: where it is, the stack's output or the component's, stack_state.Declarer.record)."""
    return f"{ADOPTED} = {owner}" if marked else f"{record} records it, though its marks are gone"


def dropped(on_destroy: str | None, what: str, setting: str, it: str = "it", keeper: str = "Azure") -> str:
    """What an `up` does to an adopted thing it no longer declares, as its record says (None: not recorded)."""
    released = f"releases {what} (the preview shows `delete[retain]`: Pulumi forgets {it}, {keeper} keeps {it})"
    if on_destroy == adopted_record.RELEASE:
        return released
    if on_destroy is None:
        return f"{released}, or deletes {it} if the stack was told {setting} (the preview shows `delete`)"
    return f"deletes {what}, as its adoption said ({setting}; the preview shows `delete`)"


def unread_state(state: StackState, found: ClusterFacts, owner: str) -> list[str]:
    """A component's run whose stack has no outputs, so its state is not read (reader.NoOutputs),
    on a cluster where a pool carries this stack's mark: the stack has deployed there, and its
    checks run as on a first `up`. Said, not stopped: only a completed `up` writes an output."""
    if state.by.component is None or not state.no_outputs:
        return []
    pool = next((p.name for p in found.pools if owner in (owner_of(p.tags), adopter_of(p.tags))), None)
    if pool is None:
        return []
    return [
        f"{state.by.said()}: the cluster's pool {shown(pool)} carries this stack's mark ({owner}), so the stack has deployed "
        "here, but it has no outputs, and its state is read only once it has some (asked of a stack that never deployed, "
        "the read crashes a diy backend's CLI): this run sees nothing of what the stack holds or adopted, and checks as a "
        f"first `up` does; export one of {state.by.said()}'s outputs from the program (`pulumi.export`), and the runs after "
        "the next `up` read it"
    ]


def used_unknown(pools: Pools, found: ClusterFacts, owner: str, state: StackState, dry_run: bool) -> list[str]:
    """`existing: use` unregisters a pool the stack held, which the engine then deletes. Where the
    state could not be read (not a stack never deployed, nor a pool tagged as this stack's,
    refused anyway), a deployment stops and a preview warns, saying how to check."""
    if state.known or state.undeployed or state is NOT_READ:
        return []
    lines = []
    for pool in (p for p in pools.pools if p.existing == "use"):
        facts = next((f for f in found.pools if f.name == pool.name), None)
        if facts is None or owner in (owner_of(facts.tags), adopter_of(facts.tags)):
            continue
        names = " -e ".join(n.format(pool.name) for n in POOL_NAMES.values())
        lines.append(
            f"{pools.key(pool)}.existing = use: what this stack's state holds is not known ({state.why}), and `use` would "
            f"delete the pool {pool.name} if the stack added it: check with `{EXPORT} | grep -e {names}`; listed, it is this "
            "stack's: take `existing` out again, or `pulumi state delete` that URN first; not listed, run again once the state "
            "can be read"
        )
    if lines and not dry_run:
        raise PreflightError(f"preflight: {lines[0]}; nothing was created")
    return lines


def others_mark(annotations: Mapping[str, str], owner: str) -> str | None:
    """`<annotation> = <value>` of another stack's mark on an object, or None; Kubernetes
    matches annotation keys exactly (Kubernetes "Annotations", "Syntax and character set")."""
    for name in (STACK_ANNOTATION, ADOPTED):
        value = annotations.get(name)
        if value is not None and value != owner:
            return f"{name} = {value}"
    return None


def adopted_namespaces(seen: Seen | None, owner: str, state: StackState = NOT_READ) -> dict[str, bool]:
    """The namespaces whose device plugin this stack adopted, once each, and whether a mark says
    so: the marks its state holds (which an owner's `kubectl annotate` does not reach), the live
    annotations, then the stack's `adopted` output (which a refresh after that does not reach)."""
    found: dict[str, bool] = {}
    for held in (stack_state.PLUGIN_NAMESPACE, stack_state.PLUGIN_DAEMON_SET):
        where = state.objects.get(held)
        if where is not None and state.marks.get(held, {}).get(ADOPTED) == owner:
            found.setdefault(where.split("/", 1)[0], True)
    if seen is not None:
        found.update((n.name, True) for n in seen.namespaces.values() if n.annotations.get(ADOPTED) == owner)
        found.update((d.namespace, True) for d in seen.daemon_sets if d.annotations.get(ADOPTED) == owner)
    for recorded in (*state.adopted.namespaces, *state.adopted.daemon_sets):
        found.setdefault(recorded.split("/", 1)[0], False)
    return found


def check_objects(
    plugin: DevicePluginConfig, seen: Seen | None, owner: str, declares_plugin: bool, state: StackState = NOT_READ
) -> list[str]:
    """The namespace and DaemonSet this stack adopted: without devicePlugin.adopt, or under
    another namespace, refused; where the stack declares no plugin now, a warning that the
    engine releases them, or deletes them, as their record says. `seen` None: the cluster was not read."""
    adopted = adopted_namespaces(seen, owner, state)
    if not adopted:
        return []
    name, marked = next(iter(adopted.items()))
    how = adopted_by(owner, marked, state.by.record())
    what = f"namespace {shown(name)} and its DaemonSet {GUIDE_DAEMONSET}"
    where = f"{what}, which this stack adopted ({how}),"
    if not declares_plugin:
        on_destroy = state.adopted.namespaces.get(name, state.adopted.daemon_sets.get(f"{name}/{GUIDE_DAEMONSET}"))
        done = dropped(on_destroy, f"the {what} it adopted ({how})", "devicePlugin.onDestroy: delete", "them", "the cluster")
        return [f"{PLUGIN_ADOPT}: the stack puts no device plugin on its pools now, so this `up` {done}"]
    if not plugin.adopt:
        raise PreflightError(
            f"preflight: {PLUGIN_ADOPT} is not true, but the {where} are the owner's: declared as the stack's own, a destroy "
            f"would delete them; set {PLUGIN_ADOPT}: true again, or hand them back first ({HAND_BACK})"
        )
    if plugin.namespace != name:
        raise PreflightError(
            f"preflight: {NAMESPACE}:devicePlugin.namespace = {plugin.namespace}, but the {where} are the owner's: "
            f"another namespace would replace it and leave the owner's DaemonSet beside a second device plugin; set "
            f"devicePlugin.namespace back to {shown(name)}, or hand them back first ({HAND_BACK})"
        )
    return []
