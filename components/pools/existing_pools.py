"""The GPU pools an existing cluster has (`gpuPools.<name>.existing`), read from Azure before
anything is registered and resolved into pool settings: `use` is never registered (no `up`,
`refresh` or `destroy` changes it); `adopt` is declared as Azure has it, imported on the `up`
that adopts it. Pure. The user's side: docs/existing-cluster.md, "Coming from the guide"."""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from typing import Any

from pydantic import ValidationError

from components.catalog import gpu_sizes
from components.cluster.cluster_facts import OWNER_TAG, ClusterFacts, PoolFacts
from components.config.messages import fail, min_above_max, no_node_for_the_job, show, snake
from components.config.values import NAMESPACE
from components.errors import ConfigError, PreflightError, cut
from components.gpu_stack.cluster_objects import SAVE_COMMAND
from components.gpu_stack.settings import check_modes
from components.ownership import ownership
from components.ownership.stack_state import NOT_READ, StackState
from components.pools import pool_fields, pool_network
from components.pools.settings import MIG_PROFILES, GpuPoolConfig, Pools, check_size


@dataclass(frozen=True)
class LivePool:
    """A pool of the cluster that the stack uses or adopts, as Azure has it."""

    facts: PoolFacts
    #: use or adopt.
    how: str
    #: adopt: the ARM ID the adopting `up` imports; None once the stack holds the pool.
    import_id: str | None = None
    #: adopt: the pool carries this stack's adopted mark already (ownership.ADOPTED).
    marked: bool = False
    #: The stack's state holds the pool, whatever its tags say.
    held: bool = False
    #: use, in a run that registers no pool: the stack's own pool, another of its components'
    #: (a GpuPools beside this GpuStack or GpuProof), which this run never changes.
    sibling: bool = False

    @property
    def taints(self) -> tuple[str, ...]:
        return self.facts.taints


def settings_from_azure(pool: GpuPoolConfig, given: Mapping[str, Any], facts: PoolFacts, key: str) -> GpuPoolConfig:
    """The pool's settings as Azure has them; with `adopt`, what the config sets in place
    over them, and a fixed field set otherwise refused (pool_fields)."""
    fixed = pool_fields.compared(facts)
    if pool.existing == "adopt":
        for member, live in fixed.items():
            given_value = given.get(member, live)
            value: Any = tuple(given_value) if isinstance(given_value, list) else given_value  # a YAML list, as the table's tuples
            texts = isinstance(value, str) and isinstance(live, str)
            # ARM matches resource IDs without case (the az CLI's `resourcegroups`).
            if value == live or texts and member in ("vnetSubnetId", "podSubnetId") and value.lower() == live.lower():
                continue
            if texts and member == "vmSize" and value.lower() == live.lower():
                # Its spelling, as a new pool is told the catalog's, not a replacement it does not mean.
                raise fail(
                    f"{key}.vmSize",
                    value,
                    f"write it as Azure lists it, {live!r} (the catalog, quota and price checks match names exactly)",
                )
            # Values as YAML writes them (true, null), as the stack file has them.
            raise PreflightError(
                f"{key}.{member} = {show(given[member])}, but the pool {facts.name} has {show(live)} in Azure, which AKS fixes when "
                "a pool is created: adopting it with another value would replace it, deleting the owner's pool; remove "
                f"{member} to adopt it as it is, or add a new pool"
            )
    autoscaled = _autoscaled(facts)
    values: dict[str, Any] = {
        "name": pool.name,
        "existing": pool.existing,
        **{snake(member): live for member, live in fixed.items()},
        "node_count": facts.count or 0,
        "min_count": facts.min_count if autoscaled else None,
        "max_count": facts.max_count if autoscaled else None,
        "mig_profile": fixed["migProfile"] if fixed["migProfile"] in MIG_PROFILES else None,
        snake(pool_fields.UPGRADES): pool_fields.upgrades(facts, given if pool.existing == "adopt" else {}, key),
    }
    if pool.existing == "adopt":
        # An adopted pool's network is kept from the live pool by its plan (pool_network.plan),
        # which says so; the config may only repeat it (above).
        values.update({snake(member): given.get(member) for member in pool_network.CONFIG_KEYS})
        values.update({snake(member): getattr(pool, snake(member)) for member in pool_fields.ADOPT_IN_PLACE if member in given})
        values["gen2"] = pool.gen2
        if bound := one_bound(given, facts, key):
            values[snake(bound[0])] = bound[1]
    try:
        return GpuPoolConfig(**values)
    except ValidationError as error:
        problem = error.errors()[0]
        where = ".".join(str(p) for p in problem["loc"])
        raise PreflightError(
            f"{key}.existing = {pool.existing}: the pool {facts.name} has {where} = {problem.get('input')!r} in Azure, which this "
            f"program cannot take ({problem['msg']}); manage that pool by hand"
        ) from None


def _refused(key: str, how: str, found: ClusterFacts, why: str) -> PreflightError:
    return PreflightError(f"{key}.existing = {how}: {why} (cluster {found.resource_group}/{found.name})")


# Azure's limit of tags on a resource: "The specified entity can have a maximum of 50 tags"
# (learn.microsoft.com rest/api/resources/tags/createorupdateatscope; tag-resources, "Limitations").
MAX_TAGS = 50


def _virtual_machines_sizes(facts: PoolFacts) -> list[str]:
    """The sizes a VirtualMachines pool lists (`manual[].size`, 2026-01-02-preview's `autoscale.size`)."""
    scale = facts.member("virtualMachinesProfile", "scale")
    scale = scale if isinstance(scale, Mapping) else {}
    manual = next((v for k, v in scale.items() if str(k).lower() == "manual"), None)
    autoscale = next((v for k, v in scale.items() if str(k).lower() == "autoscale"), None)
    entries = [*(manual if isinstance(manual, list) else ()), *([autoscale] if autoscale is not None else ())]
    sizes = [e.get("size") for e in entries if isinstance(e, Mapping)]
    return list(dict.fromkeys(str(s) for s in sizes if s))


def _refusals(
    how: str,
    facts: PoolFacts,
    owner: str,
    marks: Mapping[str, str | None],
    held: str | None,
    recorded: str | None,
    record: str,
    registers_pools: bool,
) -> Iterator[str]:
    """Why the cluster's pool may not be used or adopted, in the order the checks run;
    `registers_pools`: whether the run registers GPU pools at all (_own_pool_used)."""
    if not facts.vm_size and str(facts.member("type") or "").lower() == "virtualmachines":
        # Its size is in its virtualMachinesProfile, not in vmSize (ARM schema 2025-09-01 ManualScaleProfile).
        sizes = ", ".join(cut(json.dumps(s)) for s in _virtual_machines_sizes(facts)[:5]) or "none listed"
        yield (
            f"its pool {facts.name} is a VirtualMachines pool (virtualMachinesProfile sizes: {sizes}) with no vmSize, and this program "
            "reads a pool's size, GPUs and counts from vmSize, which VirtualMachineScaleSets pools have: add a new pool with the size "
            "you need, or use one of type VirtualMachineScaleSets"
        )
    # An adopted pool declares its tags with the stack's two marks added (ownership.adopted_marks).
    added = ownership.adopted_marks({OWNER_TAG: owner})
    count = len(ownership.without(facts.tags, added)) + len(added)
    if how == "adopt" and count > MAX_TAGS:
        yield (
            f"the pool {facts.name} has {len(facts.tags or {})} tags, and adopting it adds the stack's {', '.join(added)}: {count} tags, "
            f"and Azure allows at most {MAX_TAGS} on a resource; remove {count - MAX_TAGS} of the pool's tags first, or use it instead"
        )
    size = gpu_sizes.CATALOG.get(facts.vm_size or "")
    if not gpu_sizes.is_gpu_family(facts.vm_size or "") or (size is not None and not size.gpu.nvidia):
        gpu = "no GPU" if not gpu_sizes.is_gpu_family(facts.vm_size or "") else f"an {size.gpu.vendor if size else 'unknown'} GPU"
        yield f"its pool {facts.name} is {facts.vm_size}, with {gpu}: expected an NVIDIA GPU pool"
    if (facts.os_type or "Linux").lower() != "linux":
        yield f"its pool {facts.name} runs {facts.os_type}: the guide's device plugin and proof run on Linux pools"
    if how == "adopt" and (facts.mode or "").lower() == "system":
        yield f"its pool {facts.name} is a System pool, and this stack's pools are User pools: use it instead"
    # `use` unregisters the stack's pool only in a run that registers pools: a run without them (the
    # package's GpuStack, GpuProof) never held one, so the pool with the stack's tag is another
    # component's of this stack (GpuPools'), which keeps it: the engine deletes only what the
    # component that registered it drops (pulumi/pulumi 1b594989 step_generator.go GenerateDeletes).
    if how == "use" and registers_pools and (owner in marks.values() or held is not None):
        yield _own_pool_used(owner, marks, held, recorded, record)
    theirs = next(((name, value) for name, value in marks.items() if value and value != owner), None)
    if how == "adopt" and theirs and held is None:
        yield f"the pool belongs to another stack ({theirs[0]} = {theirs[1]}); adopt it there, or use it"
    pool_type = str(facts.member("type") or "VirtualMachineScaleSets")
    if how == "adopt" and pool_type.lower() != "virtualmachinescalesets":
        # The program declares VirtualMachineScaleSets pools only, and `type` is fixed when a
        # pool is created (pool_fields): adopting another would replace it.
        yield (
            f"the pool {facts.name} is type {pool_type[:40]}, and this program adopts only VirtualMachineScaleSets pools (AKS fixes "
            "a pool's type when it is created, so declaring it would replace the pool): use it instead, or add a new pool"
        )
    if how == "adopt" and pool_fields.management(facts) == "aks-managed":
        yield "the pool is AKS-managed GPU nodes (gpuProfile.nvidia.managementMode Managed): use it, or add a new pool"


def live_pool(
    pool: GpuPoolConfig,
    key: str,
    found: ClusterFacts,
    owner: str,
    state: StackState = NOT_READ,
    cluster_id: Callable[[], str] | None = None,
    registers_pools: bool = True,
) -> LivePool:
    """The cluster's pool that `pool` names, checked: it exists, has an NVIDIA GPU, and is not
    this stack's own (use, in a run that registers pools) or another stack's (adopt). `cluster_id`:
    the ARM ID an adopted pool is imported under (None: the description's)."""
    how = str(pool.existing)
    facts = next((p for p in found.pools if p.name == pool.name), None)
    if facts is None:
        pools = ", ".join(p.name for p in found.pools) or "none"
        raise _refused(key, how, found, f"the cluster has no pool named {pool.name!r} (its pools: {pools}); check the name")
    # The stack's marks, their names matched as Azure matches tag names (ownership.tag).
    marks = {OWNER_TAG: ownership.owner_of(facts.tags), ownership.ADOPTED: ownership.adopter_of(facts.tags)}
    held = state.pool_urn(pool.name)
    recorded = state.adopted.pools.get(pool.name)  # adopted, by the stack's record, with this onDestroy
    if (why := next(_refusals(how, facts, owner, marks, held, recorded, state.by.record(), registers_pools), None)) is not None:
        raise _refused(key, how, found, why)
    import_id = None
    # The import is decided by what the state holds: an import ID that differs from the one the
    # state recorded (say, in case alone) is an ImportReplacementStep and a ReplaceStep, which
    # deletes the old entry's resource, the same pool (pulumi/pulumi@1b594989 pkg/resource/
    # deploy/step_generator.go `isImport`: `oldImportID != goal.ID`; pulumi/pulumi#2893). The
    # tag decides only where the state is not known.
    if how == "adopt" and not (held is not None if state.known else owner in marks.values()):
        # Built from the cluster the config names, never a saved description's `id` (checked: cluster_facts.Named).
        cluster = cluster_id() if cluster_id is not None else found.resource_id
        if not cluster:
            raise _refused(key, how, found, "the cluster's description has no id, so the pool's ARM ID is not known")
        import_id = f"{cluster}/agentPools/{facts.name}"
    sibling = how == "use" and not registers_pools and (owner in marks.values() or held is not None)
    return LivePool(facts, how, import_id, marked=marks[ownership.ADOPTED] == owner, held=held is not None, sibling=sibling)


def _own_pool_used(owner: str, marks: Mapping[str, str | None], held: str | None, recorded: str | None, record: str) -> str:
    """Why `use` is refused on the stack's own pool (unregistered, the engine deletes a pool the
    stack created, and releases or deletes one it adopted, as it was adopted), and how to hand it back."""
    mark = next((f"{name} = {value}" for name, value in marks.items() if value == owner), None)
    why = f"the stack's state holds it ({held})" if held else f"the pool carries this stack's tag ({mark})"
    delete = (
        f"`pulumi state delete '{held}'`" if held else "`pulumi state delete` with its AgentPool's URN, which `pulumi stack export` lists"
    )
    adopted = recorded is not None or marks.get(ownership.ADOPTED) == owner
    if adopted:
        how = ownership.adopted_by(owner, marks.get(ownership.ADOPTED) == owner, record)
        done = ownership.dropped(recorded, "it", "onDestroy: delete")
        when = "this `up`" if held else "where the state holds it, this `up`"
        what = f"this stack adopted it ({how}), and `use` would unregister it: {when} {done}, with the stack's tags left on it"
    else:
        what = "the stack created or adopted it, and `use` would unregister it, which deletes a pool the stack created"
    return (
        f"{why}: {what}; keep its entry as it is, or, to use it instead, take it out of the state without deleting it ({delete}), "
        f"then remove the stack's tags ({ownership.HAND_BACK})"
    )


def resolve(
    pools: Pools,
    job_enabled: bool,
    found: ClusterFacts | None,
    owner: str,
    state: StackState = NOT_READ,
    cluster_id: Callable[[], str] | None = None,
    registers_pools: bool = True,
) -> tuple[tuple[GpuPoolConfig, ...], dict[str, LivePool], list[str]]:
    """The pools with each `existing` pool's settings read from the cluster, the live pools by
    name, and what a preview says of them. `owner`: this stack's owner tag value; `registers_pools`:
    whether the run registers GPU pools (False: a run without the pools, components/plan.py Part)."""
    if found is None or not any(p.existing for p in pools.pools):
        return pools.pools, {}, []
    live: dict[str, LivePool] = {}
    resolved_pools, lines = [], []
    for pool in pools.pools:
        if pool.existing is None:
            resolved_pools.append(pool)
            continue
        key = pools.key(pool)
        given = pools.given.get(pool.name, {})
        live[pool.name] = found_pool = live_pool(pool, key, found, owner, state, cluster_id, registers_pools)
        # onDestroy is the config's alone (a guard's, not a setting read from Azure).
        resolved = dataclasses.replace(settings_from_azure(pool, given, found_pool.facts, key), on_destroy=pool.on_destroy)
        _check_counts(resolved, given, found_pool.facts, key, job_enabled)
        lines += check_size(resolved.vm_size, resolved.gen2, key)
        resolved_pools.append(resolved)
        lines.append(line(key, resolved, found_pool) + (kept_bound(given, found_pool.facts, key) if pool.existing == "adopt" else ""))
    check_modes(tuple(resolved_pools), {p.name: pools.key(p) for p in resolved_pools})
    return tuple(resolved_pools), live, lines


def unread_plugin_lines(pools: Pools, kubernetes_file: str | None) -> list[str]:
    """A used pool gets the stack's device plugin unless the cluster's serves it: not known when unread."""
    # Asked for only where it is not set: a set kubernetesFile (preflight.kubernetesFile) is
    # what the offline render reads, and a live run reads the cluster itself (components/seam/reader.py).
    save = "" if kubernetes_file else " (the offline render reads that list saved as preflight.kubernetesFile)"
    return [
        f"{pools.key(p)} (use): what the cluster runs was not read, so this stack puts its device plugin on {p.name}; if a "
        f"device plugin of the cluster's serves it already, that is two on one node: check with `{SAVE_COMMAND}`{save}"
        for p in pools.pools
        if p.existing == "use" and p.mode == "device-plugin"
    ]


def line(key: str, pool: GpuPoolConfig, live: LivePool) -> str:
    """The pool in one line, as a preview says what it read."""
    counts = f"{pool.min_count}-{pool.max_count} (autoscaler)" if pool.autoscaling else f"{pool.node_count}"
    taints = ", ".join(live.taints) or "no taints"
    serves = {
        "aks-managed": "AKS installs its GPU stack: this stack installs nothing on it",
        "gpu-operator": "its driver is None: a GPU Operator must serve it; this stack installs nothing on it",
        "device-plugin": "AKS installs its driver: it gets a device plugin unless one serves it already",
    }[pool.mode]
    if live.sibling:
        what = "this stack's own, which another of its components declares (GpuPools): read from Azure and never changed by this one"
    elif live.how == "use":
        what = "the owner's, read from Azure and never changed by this stack"
    elif live.import_id:
        what = (
            f"adopted: this `up` imports it and declares it as Azure has it, tagged {OWNER_TAG} and {ownership.ADOPTED} (the "
            "`adopt:` line says what it changes)"
        )
    elif live.held:
        what = "adopted earlier (the stack's state holds it): a pool of this stack; this `up` puts its tags back where lost"
    else:
        what = "adopted earlier (it carries this stack's tag): a pool of this stack"
        if not live.marked:
            what += f", marked by this `up` as adopted ({ownership.ADOPTED})"
    if live.how == "adopt":
        what += (
            "; a destroy, or removing it from the config, releases it (Pulumi forgets it, Azure keeps it)"
            if ownership.released(pool)
            else "; onDestroy: delete: a destroy, or removing it from the config, deletes it"
        )
    if live.how == "adopt" and (left := pool_fields.undeclared_members(live.facts)):
        what += f"; it also has {', '.join(left)}, which azure-native's AgentPool has no input for: this stack never sends them"
    return f"existing pool: {key} ({live.how}): {counts} x {pool.vm_size}, {taints}; {what}; {serves}"


def _autoscaled(facts: PoolFacts) -> bool:
    return bool(facts.enable_auto_scaling) and facts.min_count is not None and facts.max_count is not None


def one_bound(given: Mapping[str, Any], facts: PoolFacts, key: str) -> tuple[str, int] | None:
    """The bound the config leaves out where it sets the other alone, and Azure's value of it: the
    pool runs the cluster autoscaler already (enableAutoScaling with minCount and maxCount, as `az
    aks nodepool show` prints them), so one bound changes only itself, as `az aks nodepool update
    --update-cluster-autoscaler --max-count` does. Refused where Azure runs no autoscaler on the
    pool, or the one bound crosses Azure's other. None: both, or neither, set."""
    bounds = {m: given.get(m) for m in ("minCount", "maxCount")}
    if (bounds["minCount"] is None) == (bounds["maxCount"] is None):
        return None
    alone, missing = ("minCount", "maxCount") if bounds["minCount"] is not None else ("maxCount", "minCount")
    if not _autoscaled(facts):
        raise ConfigError(
            f"invalid config {key}: {alone} is set without {missing}, and the pool {facts.name} has no cluster autoscaler in Azure "
            f"(a fixed count of {facts.count}): set both to turn the cluster autoscaler on, or neither to keep its fixed count"
        )
    kept = facts.min_count if missing == "minCount" else facts.max_count
    assert kept is not None and facts.min_count is not None and facts.max_count is not None  # _autoscaled
    value, low, high = int(bounds[alone] or 0), facts.min_count, facts.max_count  # a whole number: GpuPoolSettings checked it
    if alone == "maxCount" and value < low or alone == "minCount" and value > high:
        relation = "below" if alone == "maxCount" else "above"
        raise ConfigError(
            f"invalid config {key}: {alone} {value} is {relation} {missing} {kept}, the pool's autoscaler "
            f"{'minimum' if missing == 'minCount' else 'maximum'} in Azure ({facts.name} runs {low}-{high}); set {missing} too, "
            f"or a {alone} within it"
        )
    return missing, kept


def kept_bound(given: Mapping[str, Any], facts: PoolFacts, key: str) -> str:
    """What the pool's line says of a bound kept from Azure (one_bound), or nothing."""
    if (bound := one_bound(given, facts, key)) is None:
        return ""
    alone = "maxCount" if bound[0] == "minCount" else "minCount"
    return f"; {bound[0]} {bound[1]} is kept from the pool's autoscaler in Azure (the config sets {alone} alone)"


def _check_counts(pool: GpuPoolConfig, given: Mapping[str, Any], facts: PoolFacts, key: str, job_enabled: bool) -> None:
    """A pool the cluster has, held to a new pool's count rules (settings.check_gpu_pool); and on
    adopt, an autoscaler switched off by the config at whatever count it runs. Where the config
    set the values (adopt) its key is refused as a new pool's would be; else the pool as Azure has it."""
    config = given if pool.existing == "adopt" else {}
    switched_off = "minCount" in config and config["minCount"] is None and "maxCount" in config and config["maxCount"] is None
    if switched_off and _autoscaled(facts) and "nodeCount" not in config:
        raise ConfigError(
            f"invalid config {key}.minCount/maxCount = null with existing: adopt: the pool {facts.name} runs the cluster autoscaler "
            f"in Azure ({facts.min_count}-{facts.max_count}, {facts.count} node(s) now), and null switches it off, fixing the pool at "
            "the count it happens to have; set nodeCount with them for the nodes it keeps, or remove minCount and maxCount to keep "
            "its autoscaler"
        )
    if pool.autoscaling:
        assert pool.min_count is not None and pool.max_count is not None
        if pool.min_count > pool.max_count:
            if "minCount" in config:
                raise min_above_max(key, pool.min_count, pool.max_count)
            raise _live(
                pool,
                key,
                f"its autoscaler runs from minCount {pool.min_count} to maxCount {pool.max_count}, which AKS does not allow "
                "(minCount <= maxCount): check the cluster's description (az aks nodepool show)",
            )
        if "nodeCount" in config and not pool.min_count <= pool.node_count <= pool.max_count:
            range_from = "the config's range" if "minCount" in config else f"the range its autoscaler has in Azure ({facts.name})"
            raise ConfigError(
                f"invalid config {key}.nodeCount = {pool.node_count}: an autoscaled pool starts inside {range_from}; "
                f"expected {pool.min_count} <= nodeCount <= {pool.max_count}"
            )
    elif job_enabled and pool.node_count == 0:
        if "nodeCount" in config:
            raise no_node_for_the_job(key)
        set_here = ", or set nodeCount (>= 1) or minCount/maxCount here" if pool.existing == "adopt" else ""
        raise _live(
            pool,
            key,
            f"it has 0 nodes and no autoscaler, so the proof Job ({NAMESPACE}:mnistJob.enabled = true) would wait for ever for a GPU "
            f"node; set {NAMESPACE}:mnistJob.enabled to false, or scale the pool first (`az aks nodepool scale --name {facts.name} "
            f"--node-count 1`, or `az aks nodepool update --enable-cluster-autoscaler`){set_here}",
        )


def _live(pool: GpuPoolConfig, key: str, why: str) -> PreflightError:
    return PreflightError(f"{key}.existing = {pool.existing}: the pool {pool.name}, as Azure describes it: {why}")
