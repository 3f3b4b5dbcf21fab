"""What the adopting `up` does to each object of the owner's it takes over, field by field: the
live description against the declared inputs; a change that would replace it is refused. Pure.
Why (the engine imports, then updates in one run): docs/existing-cluster.md, "What the adopting `up` changes"."""

from __future__ import annotations

import json
from collections.abc import Callable, Collection, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from components.cluster.cluster_facts import PoolFacts
from components.errors import ITEM, PreflightError, cut
from components.pools.pool_fields import fixed, inputs, live_inputs, undeclared_members, unset

#: Every line of an adoption plan starts so; `make render` counts them (tools/render.py).
LEAD = "adopt: "
#: What a plan line says when the import is followed by an update.
UPDATES = ", then updates "
# A member name longer than this is quoted, whole, as JSON.
QUOTED = 80


class Absent:
    def __repr__(self) -> str:
        return "(none)"


ABSENT = Absent()


@dataclass(frozen=True)
class Change:
    path: str
    live: Any
    declared: Any

    def __str__(self) -> str:
        """One line, both values whole: a value cut mid-way could hide the very change that matters."""
        return f"{self.path}: {_json(self.live)} -> {_json(self.declared)}"

    def quoted(self) -> str:
        """As a one-line refusal quotes it: each value whole up to errors.LONGEST, else its start and length."""
        return f"{cut(self.path)}: {cut(_json(self.live))} -> {cut(_json(self.declared))}"


def _json(value: Any) -> str:
    """JSON (YAML's spelling of true, false and null), every character past ASCII escaped."""
    return "(none)" if value is ABSENT else json.dumps(value, sort_keys=True, separators=(", ", ": "), default=str)


def _member(name: Any) -> str:
    """A member's name in a path: as it is, or quoted whole as JSON where it is long or odd."""
    text = str(name)
    plain = text.isprintable() and text.isascii() and not any(c in text for c in "[]; ")
    return text if plain and len(text) <= QUOTED else _json(text)


def _by_name(items: list[Any]) -> dict[str, Any] | None:
    """Objects each named by a distinct `name` (Kubernetes merges an env, containers, volumes by it), by name."""
    names = [item.get("name") if isinstance(item, Mapping) else None for item in items]
    if all(isinstance(n, str) for n in names) and len(set(names)) == len(names):
        return dict(zip(names, items, strict=True))  # type: ignore[arg-type]
    return None


def field_changes(live: Any, declared: Any, path: str = "", skip: Callable[[str], bool] = lambda _: False) -> list[Change]:
    """The fields where `declared` differs from `live`; a member unset on both sides is no change."""
    if skip(path):
        return []
    live_unset, declared_unset = live is ABSENT or unset(live), declared is ABSENT or unset(declared)
    if live_unset and declared_unset:
        return []
    if isinstance(live, Mapping) or isinstance(declared, Mapping):
        live, declared = ({} if value is ABSENT else value for value in (live, declared))  # an absent object: an empty one
    if isinstance(live, Mapping) and isinstance(declared, Mapping):
        changes = []
        for member in sorted({*live, *declared}, key=str):
            inner = f"{path}.{_member(member)}" if path else _member(member)
            changes += field_changes(live.get(member, ABSENT), declared.get(member, ABSENT), inner, skip)
        return changes
    if isinstance(live, list) and isinstance(declared, list) and live != declared:
        if len(live) == len(declared) and all(isinstance(item, Mapping) for item in (*live, *declared)):
            return [
                c for i, (old, new) in enumerate(zip(live, declared, strict=True)) for c in field_changes(old, new, f"{path}[{i}]", skip)
            ]
        # Lists of another length: named items matched by name, so a changed value is its own field.
        theirs, mine = _by_name(live), _by_name(declared)
        if theirs is not None and mine is not None:
            changes = []
            for name in sorted({*theirs, *mine}):
                old, new, inner = theirs.get(name, ABSENT), mine.get(name, ABSENT), f"{path}[name={_member(name)}]"
                whole = old is ABSENT or new is ABSENT  # an item added or taken away: said whole
                changes += [Change(inner, old, new)] if whole and not skip(inner) else field_changes(old, new, inner, skip)
            return changes
    if live == declared:
        return []
    return [Change(path, ABSENT if live_unset else live, ABSENT if declared_unset else declared)]


@dataclass(frozen=True)
class Plan:
    """What the adopting `up` does to one object: imports it, then these changes."""

    key: str
    #: The object, as a user names it (`AgentPool gpunp`, `DaemonSet gpu-resources/nvidia-device-plugin-daemonset`).
    what: str
    import_id: str
    changes: tuple[Change, ...] = ()
    #: Members of the live description that no input of the declared resource carries.
    not_sent: tuple[str, ...] = ()
    #: What the changes restart, in words (`restarts`); None where the program knows nothing to say.
    restarts: str | None = None

    def line(self) -> str:
        """One message: what is imported and that nothing is replaced, then each changed field on a
        line of its own, whole, then what restarts."""
        named = "" if self.what.endswith(f" {self.import_id}") else f" ({self.import_id})"
        head = f"{LEAD}{self.key}: `pulumi up` imports {self.what}{named}"
        if self.changes:
            count = f"{len(self.changes)} field{'' if len(self.changes) == 1 else 's'}"
            head += f"{UPDATES}{count} in place and replaces nothing"
        else:
            head += ", changes nothing of it and replaces nothing"
        if self.not_sent:
            head += f"; it leaves {', '.join(self.not_sent)} as they are (no input of the resource carries them)"
        items = [str(c) for c in self.changes] + ([f"restarts: {self.restarts}"] if self.restarts else [])
        return head + (":" + ITEM + ITEM.join(items) if items else "")


def updated(line: str) -> bool:
    return line.startswith(LEAD) and UPDATES in line


# What azure-native itself replaces an AgentPool on, beside the program's replaceOnChanges
# (fixed()): pulumi-azure-native provider/pkg/gen/replacement.go at 1b7112af,
# forceNewMap ContainerService AgentPool (gpuInstanceProfile and vmSize are fixed() already).
FORCE_NEW = ("networkProfile.nodePublicIPTags",)


def pool_plan(key: str, facts: PoolFacts, import_id: str, declared: Mapping[str, Any], ignored: Collection[str]) -> Plan:
    """The adopting `up` of a pool (`declared`: its inputs by REST name); refused where the update
    would change a property AKS fixes at creation."""
    live = live_inputs(facts)
    skipped = {*ignored, "orchestratorVersion"}  # the version is the owner's (ignoreChanges on an existing cluster)
    changes = [
        change
        for member in sorted({*live, *(m for m in declared if m in inputs())})
        if member not in skipped
        for change in field_changes(live.get(member, ABSENT), declared.get(member, ABSENT), member)
    ]
    replaced = [c for c in changes if c.path.split(".")[0].split("[")[0] in fixed() or c.path.startswith(FORCE_NEW)]
    if replaced:
        raise PreflightError(
            f"{key}.existing = adopt: the declaration would change {replaced[0].quoted()} on the pool {facts.name}, which AKS fixes when a "
            "pool is created: the `up` would replace it, deleting the owner's pool; this program refuses it (remove adopt to use "
            "the pool as it is)"
        )
    return Plan(key, f"AgentPool {facts.name}", import_id, tuple(changes), tuple(undeclared_members(facts)))


# What the API server sets on every object, and what its defaulting fills in, which no field
# manager owns and so no server-side apply removes (Kubernetes "Server-Side Apply": fields
# set by defaulting are not tracked; the defaults in kubernetes pkg/apis/apps/v1/defaults.go
# SetDefaults_DaemonSet and pkg/apis/core/v1/defaults.go SetDefaults_PodSpec/_Container).
SERVER_SET = (
    "status",
    "metadata.uid",
    "metadata.resourceVersion",
    "metadata.generation",
    "metadata.creationTimestamp",
    "metadata.managedFields",
    "metadata.selfLink",
    "metadata.annotations.deprecated.daemonset.template.generation",
    "metadata.labels.kubernetes.io/metadata.name",
    "spec.finalizers",
    "spec.revisionHistoryLimit",
    "spec.updateStrategy.rollingUpdate",
    "spec.template.metadata.creationTimestamp",
    "spec.template.spec.dnsPolicy",
    "spec.template.spec.restartPolicy",
    "spec.template.spec.schedulerName",
    "spec.template.spec.terminationGracePeriodSeconds",
    "spec.template.spec.containers[0].terminationMessagePath",
    "spec.template.spec.containers[0].terminationMessagePolicy",
    "spec.template.spec.volumes[0].hostPath.type",
)


def object_plan(key: str, what: str, import_id: str, live: Mapping[str, Any], declared: Mapping[str, Any]) -> Plan:
    """The adopting `up` of a Kubernetes object, `live` as `kubectl get -o json` prints it, and what it restarts."""
    fields = ("metadata", "spec")
    mine = {f: declared.get(f, ABSENT) for f in fields}
    theirs = {f: {k: v for k, v in (live.get(f) or {}).items() if not (f == "metadata" and k in ("name", "namespace"))} for f in fields}
    mine["metadata"] = {k: v for k, v in dict(mine["metadata"] or {}).items() if k not in ("name", "namespace")}
    changes = field_changes(theirs, mine, "", lambda path: path.startswith(SERVER_SET))
    return Plan(key, what, import_id, tuple(changes), restarts=restarts(live.get("kind"), changes, live, declared))


# A DaemonSet's pods follow its pod template by its updateStrategy: "RollingUpdate: ... after you
# update a DaemonSet template, old DaemonSet pods will be killed, and new DaemonSet pods will be
# created automatically", maxUnavailable defaulting to 1; "OnDelete: ... new DaemonSet pods will only
# be created when you manually delete old DaemonSet pods" (kubernetes.io/docs/tasks/manage-daemon/
# update-daemon-set, "DaemonSet Update Strategy"). The update sets the declared strategy with the
# template, so the declared one (else the owner's) decides.
TEMPLATE = "spec.template"


def restarts(kind: Any, changes: Sequence[Change], live: Mapping[str, Any], declared: Mapping[str, Any]) -> str | None:
    """What the adopting update restarts: a DaemonSet's pods where its pod template changes; nothing
    for a Namespace, which runs no pod. None for a kind the program says nothing of."""
    if kind == "Namespace":
        return "nothing (a namespace runs no pod)"
    if kind != "DaemonSet":
        return None
    in_template = [c for c in changes if c.path == TEMPLATE or c.path.startswith((f"{TEMPLATE}.", f"{TEMPLATE}["))]
    if not in_template:
        return "nothing (no field of the pod template, spec.template, changes)"
    strategy = _strategy(declared) or _strategy(live) or {}
    fields = f"{len(in_template)} of these fields {'is' if len(in_template) == 1 else 'are'} in the pod template (spec.template)"
    if strategy.get("type") == "OnDelete":
        return f"{fields}, but updateStrategy is OnDelete: each pod changes only when it is deleted (`kubectl delete pod`)"
    owners = (_strategy(live) or {}).get("type")
    turned = f" (the same update turns the owner's {owners} into RollingUpdate)" if owners not in (None, "RollingUpdate") else ""
    unavailable = (strategy.get("rollingUpdate") or (_strategy(live) or {}).get("rollingUpdate") or {}).get("maxUnavailable", 1)
    at_a_time = f"{unavailable} node{'' if unavailable == 1 else 's'}" if isinstance(unavailable, int) else f"{unavailable} of the nodes"
    return (
        f"{fields}, so the DaemonSet's pods roll (updateStrategy RollingUpdate): Kubernetes deletes each node's pod and "
        f"starts a new one, {at_a_time} at a time{turned}"
    )


def _strategy(manifest: Mapping[str, Any]) -> Mapping[str, Any] | None:
    spec = manifest.get("spec")
    strategy = spec.get("updateStrategy") if isinstance(spec, Mapping) else None
    return strategy if isinstance(strategy, Mapping) else None


def added_line(key: str, namespace: str, objects: Sequence[tuple[str, str, str]]) -> str | None:
    """What the stack declares beside the owner's objects in their namespace: (kind, name, what it does), one a line."""
    if not objects:
        return None
    count = f"{len(objects)} object{'' if len(objects) == 1 else 's'}"
    items = [f"{kind} {name}: {what}" if what else f"{kind} {name}" for kind, name, what in objects]
    return f"{LEAD}{key}: beside the owner's objects, the stack adds {count} to their namespace {namespace}:{ITEM}{ITEM.join(items)}"


def lines(plans: Sequence[Plan]) -> list[str]:
    return [plan.line() for plan in plans]
