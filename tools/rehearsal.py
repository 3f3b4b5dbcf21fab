"""`make render WRITE_STATE=<path>`: the state a successful first `pulumi up` would leave, written
offline, so the day after can be rehearsed before day 1 (`make render STATE_FILE=<path>`). The
program is run once more as a deployment under the mock engine, and what it registered is written
as `pulumi stack export` writes a state: an UntypedDeployment of version 3 (pulumi/pulumi@1b594989
sdk/go/common/apitype/core.go DeploymentV3, ResourceV3, ManifestV1; each resource's members as
pkg/resource/stack/deployment.go SerializeResource fills them).

It is marked as a rehearsal, in a root Stack output of its own (components/ownership/stack_state.py
REHEARSAL), so it is never taken for a real one: the offline render that reads it says so, and a
real run whose own state holds it (a `pulumi stack import` of this file) stops at it."""

from __future__ import annotations

import datetime
import json
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from components.ownership.saved_state import ROOT_STACK, SECRET_SIG, SIG_KEY
from components.ownership.stack_state import REHEARSAL
from tools.mock_engine import ProgramRun, Registration, Secret
from tools.urns import as_the_engine_names_them

# No secret is written: an export without --show-secrets has only a ciphertext, which the
# stack's secrets provider decrypts (deployment.go SerializePropertyValue); a rehearsal has none.
NO_CIPHERTEXT = "rehearsal: no secret is written"


def mark(on: datetime.date) -> str:
    """The rehearsal's root Stack output: who wrote it, when, and that it is no deployment."""
    return (
        f"written by the offline render (make render WRITE_STATE=) on {on.isoformat()}: the state a first `pulumi up` "
        "would leave, rehearsed; not a deployment, and a real run refuses it"
    )


def sealed(value: Any) -> Any:
    """A value as an export without --show-secrets has it: each secret a sig-keyed object."""
    if isinstance(value, Secret):
        return {SIG_KEY: SECRET_SIG, "ciphertext": NO_CIPHERTEXT}
    if isinstance(value, dict):
        return {k: sealed(v) for k, v in value.items()}
    if isinstance(value, list):
        return [sealed(v) for v in value]
    return value


def root_urn(run: ProgramRun) -> str:
    """The root Stack's URN, `<project>-<stack>` (pulumi/pulumi sdk/python/lib/pulumi/runtime/stack.py)."""
    return f"urn:pulumi:{run.stack}::{run.project}::{ROOT_STACK}::{run.project}-{run.stack}"


def entry(r: Registration, root: str, ids: dict[str, str], named: dict[str, str]) -> dict[str, Any]:
    """One ResourceV3, each URN in it as the engine names it (`named`: urns.py). The engine's
    default providers (those the program names no provider for) are not written: the engine
    makes them on every run, and nothing here diffs them."""
    item: dict[str, Any] = {"urn": named[r.urn], "custom": r.custom, "type": r.type}
    if r.custom:
        item["id"] = r.id
    item["inputs"] = sealed(r.inputs)
    item["outputs"] = sealed(r.outputs) if r.custom else {}
    item["parent"] = named.get(r.parent, root)
    if r.provider:  # a provider reference is "<urn>::<id>" (sdk/go/common/resource/providers/reference.go)
        item["provider"] = f"{named.get(r.provider, r.provider)}::{ids.get(r.provider, '')}"
    if r.dependencies:
        item["dependencies"] = [named.get(u, u) for u in r.dependencies]
    if r.property_dependencies:
        item["propertyDependencies"] = {k: [named.get(u, u) for u in v] for k, v in sorted(r.property_dependencies.items())}
    options = r.options
    for name in ("protect", "retainOnDelete"):
        if options.get(name):
            item[name] = True
    for name in ("ignoreChanges", "replaceOnChanges"):
        if options.get(name):
            item[name] = list(options[name])
    if options.get("deletedWith"):
        item["deletedWith"] = named.get(options["deletedWith"], options["deletedWith"])
    if options.get("customTimeouts"):
        item["customTimeouts"] = dict(options["customTimeouts"])
    return item


def in_state_order(resources: Iterable[Registration], root: str) -> list[Registration]:
    """Parents, providers and dependencies before what names them, as the engine's snapshot keeps
    them (pkg/resource/deploy/snapshot.go VerifyIntegrity); ties by URN, so a rehearsal of one
    program is the same file (registrations arrive in the SDK's threads' order)."""
    pending = {r.urn: r for r in resources}
    done, ordered = {root}, []
    while pending:
        ready = sorted(u for u, r in pending.items() if all(d in done or d not in pending for d in _before(r)))
        if not ready:  # a cycle the engine would have refused: the rest by URN
            ready = sorted(pending)
        for urn in ready:
            ordered.append(pending.pop(urn))
            done.add(urn)
    return ordered


def _before(r: Registration) -> list[str]:
    return [u for u in (r.parent, r.provider, *r.dependencies) if u]


def export(run: ProgramRun, now: datetime.datetime) -> dict[str, Any]:
    """The state `run` (a deployment) leaves, as `pulumi stack export` writes it, marked."""
    root = root_urn(run)
    outputs = {name: sealed(Secret(out.value) if out.secret else out.value) for name, out in sorted(run.outputs.items())}
    outputs[REHEARSAL] = mark(now.date())
    resources = [{"urn": root, "custom": False, "type": ROOT_STACK, "outputs": outputs}]
    ids, named = {r.urn: r.id for r in run.resources}, as_the_engine_names_them(run)
    resources += [entry(r, root, ids, named) for r in in_state_order(run.resources, root)]
    # No engine wrote it: no version, and so no magic (core.go ManifestV1.NewMagic is "" for "").
    manifest = {"time": now.isoformat(timespec="seconds").replace("+00:00", "Z"), "magic": "", "version": ""}
    return {"version": 3, "deployment": {"manifest": manifest, "resources": resources}}


def write(run: ProgramRun, path: Path, now: datetime.datetime | None = None) -> int:
    """Writes the rehearsal to `path`; how many resources it holds (the root Stack's too)."""
    document = export(run, now or datetime.datetime.now(datetime.timezone.utc))
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(document, indent=4, sort_keys=False) + "\n")
    return len(document["deployment"]["resources"])
