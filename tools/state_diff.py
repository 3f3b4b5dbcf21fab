"""The day after, offline: what `pulumi up` would do to each resource the stack's state holds,
from the state (a saved export, or a rehearsal: tools/rehearsal.py) and what the program now
declares. Each field that changes, in `pulumi preview --diff`'s words (`~ maxCount: 3 => 4`,
whole values), each replacement with the field that forces it, each delete or release.

The engine diffs a resource's old inputs against its new ones and asks the provider which of the
changed fields replace it (pulumi/pulumi@1b594989 pkg/resource/deploy/step_generator.go
generateSteps, `diff`); a provider's answer is read here at its source, per provider below."""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from pulumi.output import Unknown

from components.ownership.saved_state import ROOT_STACK
from components.ownership.stack_state import AGENT_POOL, MANAGED_POOL, type_and_name
from components.pools import managed_gpu_pool, pool_fields
from tools.mock_engine import ProgramRun, Registration, Secret
from tools.urns import as_the_engine_names_them

# azure-native replaces on these (pulumi/pulumi-azure-native provider/pkg/gen/replacement.go
# forceNewMap at 1b7112af; a name there applies where that type's property is, hence the paths),
# on what an API spec marks create-only (x-ms-mutability, not read here: a typed pool's fixed
# fields are the program's replaceOnChanges), and on any name in the resource's URL.
_NETWORK = ("serviceCidr", "serviceCidrs", "dnsServiceIP", "networkMode", "networkPlugin", "networkPluginMode", "podCidr")
AZURE_FORCE_NEW = {
    "azure-native:containerservice:ManagedCluster": (
        *("diskEncryptionSetID", "dnsPrefix", "fqdnSubdomain", "linuxProfile", "location", "nodeResourceGroup", "windowsProfile"),
        *(f"networkProfile.{name}" for name in (*_NETWORK, "networkDataplane", "networkPolicy", "outboundType")),
    ),
    AGENT_POOL: ("gpuInstanceProfile", "vmSize", "networkProfile.nodePublicIPTags"),
    "azure-native:resources:ResourceGroup": ("location",),
    "azure-native:authorization:RoleAssignment": ("principalId", "scope"),
}
AZURE_URL_NAMES = ("resourceGroupName", "resourceName", "agentPoolName", "roleAssignmentName", "budgetName", "scope")

# pulumi-kubernetes replaces on these (pulumi/pulumi-kubernetes@94977969, 2026-07-01, the same in
# substance since 2ec7a1a1 of 2024: provider/pkg/provider/diff.go `forceNewProperties`): every
# object's metadata.name and namespace, and per kind the fields below; a ConfigMap's and a Secret's
# data unless the provider is told they are mutable (enableConfigMapMutable, enableSecretMutable),
# which the program's providers are not.
SELECTOR = ("spec.selector",)
KUBERNETES_FORCE_NEW = {
    "kubernetes:core/v1:ConfigMap": ("binaryData", "data"),
    "kubernetes:core/v1:Service": ("spec.clusterIP",),
    "kubernetes:core/v1:Secret": ("type", "stringData", "data"),
    "kubernetes:batch/v1:Job": ("spec.completions", "spec.parallelism", *SELECTOR, "spec.template"),
    "kubernetes:apps/v1:DaemonSet": SELECTOR,
    "kubernetes:apps/v1:Deployment": SELECTOR,
    "kubernetes:rbac.authorization.k8s.io/v1:RoleBinding": ("roleRef",),
    "kubernetes:rbac.authorization.k8s.io/v1:ClusterRoleBinding": ("roleRef",),
}
KUBERNETES_NAMES = ("metadata.name", "metadata.namespace")


@dataclass(frozen=True)
class Step:
    """What `up` does to one resource: `create`, `import`, `same`, `update`, `replace`,
    `delete`, or `delete[retain]` (retainOnDelete: released), with the fields that change
    and, for a replacement, why."""

    op: str
    urn: str
    fields: tuple[str, ...] = ()
    why: str = ""

    @property
    def type(self) -> str:
        return type_and_name(self.urn)[0]

    @property
    def name(self) -> str:
        return type_and_name(self.urn)[1]


# Under its resource's line; fewer spaces than a folded line's continuation (tools/render.py CONTINUED).
FIELD_INDENT = "  "
SIGNS = {"create": "+", "import": "=", "update": "~", "replace": "+-", "delete": "-", "delete[retain]": "-"}


def steps(run: ProgramRun) -> list[Step]:
    """Each resource's step, ordered by URN: empty where the run read no state (a first `up`)."""
    if not run.state:
        return []
    held = {u: e for u, e in run.state.items() if not _engines_own(u)}
    named = as_the_engine_names_them(run)
    found, out = set(), []
    for r in run.resources:
        # As the engine names it (a real export), as the mock engine does (a test's), or an alias.
        urn = next((u for u in (named[r.urn], r.urn, *r.options.get("aliases", ())) if u in held), None)
        if urn is None:
            out.append(Step("import" if r.options.get("import") else "create", named[r.urn]))
            continue
        found.add(urn)
        out.append(declared_step(r, held[urn], urn))
    for urn, held_entry in held.items():
        if urn not in found:
            out.append(Step("delete[retain]" if held_entry.get("retainOnDelete") else "delete", urn, why=_gone_why(urn, held_entry)))
    return sorted(out, key=lambda s: s.urn)


def _engines_own(urn: str) -> bool:
    """The root Stack, and the default providers the engine makes itself (`default`, `default_<version>`)."""
    type_, name = type_and_name(urn)
    return type_ == ROOT_STACK or (type_.startswith("pulumi:providers:") and name.startswith("default"))


def _gone_why(urn: str, held: Mapping[str, Any]) -> str:
    # retainOnDelete: the engine's delete step is a no-op (pulumi/pulumi@1b594989 pkg/resource/deploy/
    # step.go DeleteStep.Apply, `s.old.RetainOnDelete`), so the entry leaves the state only.
    if not held.get("retainOnDelete"):
        return ""
    keeper = "the cluster" if type_and_name(urn)[0].startswith("kubernetes:") else "Azure"
    return f"released: Pulumi forgets it, {keeper} keeps it"


# A dynamic resource's pickled provider: the engine asks the provider's own diff (pulumi 3.x
# sdk/python/lib/pulumi/dynamic/__main__.py `Diff`), and none of the program's compares it.
DYNAMIC, PROVIDER_KEY = "pulumi-python:dynamic/", "__provider"


def declared_step(r: Registration, held: Mapping[str, Any], urn: str) -> Step:
    # ignoreChanges: the engine puts the old value back before it diffs (pulumi/pulumi@1b594989
    # pkg/resource/deploy/step_generator.go processIgnoreChanges).
    ignored = (*(r.options.get("ignoreChanges") or ()), *((PROVIDER_KEY,) if r.type.startswith(DYNAMIC) else ()))
    changed = [c for c in changes(held.get("inputs") or {}, r.inputs) if not _under(c[0], ignored)]
    if not changed:
        return Step("same", urn)
    fields = tuple(diff_line(*c) for c in changed)
    forced = replaced_by(r, held.get("inputs") or {}, [c[0] for c in changed])
    return Step("replace", urn, fields, why="; ".join(forced)) if forced else Step("update", urn, fields)


def changes(old: Any, new: Any, path: str = "") -> list[tuple[str, Any, Any]]:
    """(path, old, new) for each leaf that differs; a value added or removed whole, a list of
    another length whole. Unset (None) and absent are one: the SDK sends no null input."""
    if isinstance(old, Mapping) and isinstance(new, Mapping):
        found = []
        for key in sorted(set(old) | set(new)):
            found += changes(old.get(key), new.get(key), f"{path}.{key}" if path else str(key))
        return found
    if isinstance(old, list) and isinstance(new, list) and len(old) == len(new):
        return [c for i, (o, n) in enumerate(zip(old, new, strict=True)) for c in changes(o, n, f"{path}[{i}]")]
    if _same(old, new):
        return []
    return [(path, old, new)]


def _same(old: Any, new: Any) -> bool:
    if isinstance(new, Secret):
        # A secret the export holds only as ciphertext reads as None (saved_state._secret): not comparable offline.
        return old is None or _same(old, new.value)
    if old is None or new is None:
        return old is None and new is None
    if isinstance(old, bool) or isinstance(new, bool):
        return old is new
    return bool(old == new)


def _under(path: str, prefixes: Iterable[str]) -> bool:
    # A path and what lies under it, `*` any (pulumi/pulumi@1b594989 sdk/go/common/resource/
    # property_path.go PropertyPath.Contains, which applyReplaceOnChanges and ignoreChanges use).
    return any(p == "*" or path == p or path.startswith((f"{p}.", f"{p}[")) for p in prefixes)


def shown(value: Any) -> str:
    """A value whole, as JSON (strings quoted, as `pulumi preview --diff` quotes them)."""
    if isinstance(value, Secret):
        return "[secret]"
    if isinstance(value, Unknown):
        return "[unknown until deployed]"
    return json.dumps(value, sort_keys=True, ensure_ascii=False, default=lambda v: shown(v))


def diff_line(path: str, old: Any, new: Any) -> str:
    if old is None:
        return f"+ {path}: {shown(new)}"
    if new is None:
        return f"- {path}: {shown(old)}"
    return f"~ {path}: {shown(old)} => {shown(new)}"


def replaced_by(r: Registration, old_inputs: Mapping[str, Any], paths: list[str]) -> list[str]:
    """Why the changed `paths` replace `r`: the fields that force it, by who says so; none: an update."""
    if r.type == MANAGED_POOL:
        # The managed pool's own diff, the pure function its provider runs (managed_gpu_pool.py diff_pool).
        replaces = managed_gpu_pool.diff_pool(old_inputs, r.inputs).replaces or []
        fixed, moved = "AKS fixes it when a pool is created", "it names the pool in Azure's URL: another name is another pool"
        return [f"{p}: {fixed if p.startswith('properties.') else moved}" for p in replaces]
    forced: dict[str, list[str]] = {}
    for path in paths:
        if found := _forces(r, path):
            key, why = found
            if key not in forced.setdefault(why, []):
                forced[why].append(key)
    return [f"{', '.join(keys)}: {why}" for why, keys in forced.items()]


def _forces(r: Registration, path: str) -> tuple[str, str] | None:
    """The field of `path` that forces a replacement of `r`, and who forces it; None: none does."""
    top = path.split(".")[0].split("[")[0]
    if r.type == AGENT_POOL and top in pool_fields.AGENT_POOL and not pool_fields.AGENT_POOL[top].in_place:
        return top, f"AKS fixes it when a pool is created ({pool_fields.AGENT_POOL[top].source})"
    # replaceOnChanges turns a change under a path into a replace (step_generator.go applyReplaceOnChanges).
    if key := _prefix(path, r.options.get("replaceOnChanges") or ()):
        return key, "forced by the program (replaceOnChanges)"
    if r.type.startswith("azure-native:") and (key := _prefix(path, (*AZURE_URL_NAMES, *AZURE_FORCE_NEW.get(r.type, ())))):
        return key, "forced by azure-native (a name in its URL, or its replacement.go)"
    if r.type.startswith("kubernetes:") and (key := _prefix(path, (*KUBERNETES_NAMES, *KUBERNETES_FORCE_NEW.get(r.type, ())))):
        return key, "forced by pulumi-kubernetes (its diff.go forceNewProperties)"
    return None


def _prefix(path: str, prefixes: Iterable[str]) -> str | None:
    return next((p for p in prefixes if _under(path, (p,))), None)


def counted(found: list[Step]) -> dict[str, int]:
    counts = {op: 0 for op in ("same", "update", "replace", "delete", "delete[retain]", "import", "create")}
    for step in found:
        counts[step.op] += 1
    return counts


def lines(found: list[Step]) -> list[str]:
    """Each step that changes something: its line, then its fields one per line; unchanged ones not listed."""
    out = []
    for step in found:
        if step.op == "same":
            continue
        why = f": {step.why}" if step.why else ""
        out.append(f"{SIGNS[step.op]} {step.op} {step.name} ({step.type}){why}")
        out.extend(f"{FIELD_INDENT}{field}" for field in step.fields)
    return out
