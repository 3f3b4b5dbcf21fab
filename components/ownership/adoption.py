"""What the adopting `up` does to each object of the owner's it takes over, field by field: the
live description against the declared inputs; a change that would replace it is refused. Pure.
Why (the engine imports, then updates in one run): docs/existing-cluster.md, "What the adopting `up` changes"."""

from __future__ import annotations

import json
from collections.abc import Callable, Collection, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from components.cluster.cluster_facts import PoolFacts
from components.errors import PreflightError
from components.pools.pool_fields import fixed, inputs, live_inputs, undeclared_members, unset

#: Every line of an adoption plan starts so; `make render` counts them (tools/render.py).
LEAD = "adopt: "
#: What a plan line says when the import is followed by an update.
UPDATES = ", then updates "
# A value quoted in a line is cut to this many characters.
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
        live, declared = _texts(self.live, self.declared)
        return f"{self.path}: {live} -> {declared}"


def _json(value: Any) -> str:
    """JSON (YAML's spelling of true, false and null), every character past ASCII escaped."""
    return "(none)" if value is ABSENT else json.dumps(value, sort_keys=True, separators=(", ", ": "), default=str)


def show(value: Any) -> str:
    text = _json(value)
    return text if len(text) <= QUOTED else text[: QUOTED - 3] + "..."


def _texts(live: Any, declared: Any) -> tuple[str, str]:
    """Both values as `show` writes them, a long one cut around where the two first differ."""
    texts = _json(live), _json(declared)
    first = next((i for i, (a, b) in enumerate(zip(*texts, strict=False)) if a != b), min(map(len, texts)))
    start = max(0, first - QUOTED // 4)

    def around(text: str) -> str:
        if len(text) <= QUOTED:
            return text
        end = start + QUOTED - 6
        return ("..." if start else "") + text[start:end] + ("..." if end < len(text) else "")

    return around(texts[0]), around(texts[1])


def _member(name: Any) -> str:
    text = str(name)
    plain = text.isprintable() and text.isascii() and not any(c in text for c in "[]; ")
    return text if plain and len(text) <= QUOTED else show(text)


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

    def line(self) -> str:
        named = "" if self.what.endswith(f" {self.import_id}") else f" ({self.import_id})"
        head = f"{LEAD}{self.key}: `pulumi up` imports {self.what}{named}"
        if self.changes:
            fields = "; ".join(str(c) for c in self.changes)
            count = f"{len(self.changes)} field{'' if len(self.changes) == 1 else 's'}"
            head += f"{UPDATES}{count} in place: {fields}"
        else:
            head += " and changes nothing of it"
        if self.not_sent:
            head += f"; it leaves {', '.join(self.not_sent)} as they are (no input of the resource carries them)"
        return head + "; replaces nothing"


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
            f"{key}.existing = adopt: the declaration would change {replaced[0]} on the pool {facts.name}, which AKS fixes when a "
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
    """The adopting `up` of a Kubernetes object, `live` as `kubectl get -o json` prints it."""
    fields = ("metadata", "spec")
    mine = {f: declared.get(f, ABSENT) for f in fields}
    theirs = {f: {k: v for k, v in (live.get(f) or {}).items() if not (f == "metadata" and k in ("name", "namespace"))} for f in fields}
    mine["metadata"] = {k: v for k, v in dict(mine["metadata"] or {}).items() if k not in ("name", "namespace")}
    changes = field_changes(theirs, mine, "", lambda path: path.startswith(SERVER_SET))
    return Plan(key, what, import_id, tuple(changes))


def lines(plans: Sequence[Plan]) -> list[str]:
    return [plan.line() for plan in plans]
