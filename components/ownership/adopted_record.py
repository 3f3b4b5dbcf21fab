"""What this stack adopted, recorded in its own output `adopted`: the pools by AKS name and the
device plugin's namespace and DaemonSet by Kubernetes ID, each with what a destroy does to it.
The owner's `kubectl annotate ... aks-gpu-adopted-` and a `pulumi refresh` after it erase the
marks in the cluster and in the state's copy of each object; a refresh leaves the root Stack's
outputs as they are (docs/design/lifecycle.md, "The record of what was adopted"), so the guards
read this too. Pure: read from the state's outputs, carried forward by each run."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from components.errors import cut

OUTPUT = "adopted"
# What a destroy, or dropping the adoption, does to what was adopted (onDestroy).
RELEASE = "release"
ON_DESTROY = (RELEASE, "delete")
MEMBERS = {"pools": "pools", "namespaces": "namespaces", "daemon_sets": "daemonSets"}
SHAPE = '{"stack": "<project>/<stack>", "pools", "namespaces", "daemonSets": each {<name or ID>: "release" or "delete"}}'


class Malformed(ValueError):
    """The output is not what this program writes: its words say what is wrong."""


@dataclass(frozen=True)
class Record:
    """Each adopted thing's onDestroy, by AKS pool name or Kubernetes ID (`<namespace>/<name>`)."""

    pools: Mapping[str, str] = field(default_factory=dict)
    namespaces: Mapping[str, str] = field(default_factory=dict)
    daemon_sets: Mapping[str, str] = field(default_factory=dict)

    def empty(self) -> bool:
        return not (self.pools or self.namespaces or self.daemon_sets)

    def within(self, pools: Iterable[str], namespaces: Iterable[str], daemon_sets: Iterable[str]) -> Record:
        """What the state still holds: a release that completed took the rest out of it."""
        keep = (frozenset(pools), frozenset(namespaces), frozenset(daemon_sets))
        held = [{k: v for k, v in getattr(self, m).items() if k in kept} for m, kept in zip(MEMBERS, keep, strict=True)]
        return Record(*held)

    def carried(self, now: Record) -> Record:
        """What the run's `up` writes: what it read (what the state holds), and what it adopts
        now, whose onDestroy is the config's now; a thing it releases stays until the state no
        longer holds it."""
        return Record(*({**getattr(self, m), **getattr(now, m)} for m in MEMBERS))

    def output(self, stack: str) -> dict[str, Any] | None:
        if self.empty():
            return None
        return {"stack": stack, **{name: dict(sorted(getattr(self, m).items())) for m, name in MEMBERS.items()}}


def parse(outputs: Mapping[str, Any] | None) -> Record:
    """The record in the root Stack's outputs; none there, an empty one. Anything else than what
    `output` writes is Malformed: a record read wrong would unguard what the stack adopted."""
    found = (outputs or {}).get(OUTPUT)
    if found is None:
        return Record()
    if not isinstance(found, Mapping):
        raise Malformed(f"is {type(found).__name__}")
    members = []
    for name in MEMBERS.values():
        member = found.get(name) or {}
        if not isinstance(member, Mapping):
            raise Malformed(f"has {name} of {type(member).__name__}")
        bad = next(((k, v) for k, v in member.items() if not isinstance(k, str) or v not in ON_DESTROY), None)
        if bad is not None:
            raise Malformed(f"has {name} {cut(str(bad[0]))}: {cut(str(bad[1]))}, not release or delete")
        members.append(dict(member))
    return Record(*members)
