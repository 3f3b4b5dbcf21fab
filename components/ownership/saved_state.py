"""The stack's state as `pulumi stack export` saved it (`aks-gpu:preflight.stateFile`), for the
offline render: untrusted input, answered in the shape of the live reader's `stack_resources`."""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from components import files
from components.config.messages import refuse_constant
from components.errors import ConfigError, cut
from components.ownership import adopted_record
from components.ownership.stack_state import REHEARSAL, shown
from components.seam import saved_files
from components.seam.saved_files import STRING

HOLDS = "what `pulumi stack export` writes (a JSON object with version 3 or 4 and a deployment)"
# A state nests deeper than Azure's answers: a resource's outputs sit four levels down, and a
# Kubernetes object's managedFields mirror the object once more.
DEPTH = 64
# pulumi/pulumi@1b594989 sdk/go/common/apitype/core.go: DeploymentSchemaVersionCurrent 3,
# Latest 4; both unmarshal into DeploymentV3 (pkg/resource/stack/deployment.go UnmarshalUntypedDeployment).
VERSIONS = (3, 4)
ROOT_STACK = "pulumi:pulumi:Stack"
# A secret in an export (sdk/go/common/resource/sig/sig.go Key, Secret; deployment.go
# SerializePropertyValue): `plaintext` with --show-secrets, else `ciphertext`, which only the
# stack's secrets provider decrypts.
SIG_KEY, SECRET_SIG = "4dabf18193072939515e22adb298388d", "1b47061264138c4ac30d75fd1eb44270"


@dataclass(frozen=True)
class SavedState:
    """URN -> {"type", "outputs"} of each resource not pending delete (backend.go
    GetStackResourceOutputs skips `r.Delete`), and the root Stack's outputs; each entry also keeps
    its "inputs" and "retainOnDelete", which the offline render diffs the program against.
    `rehearsal`: the mark of a state the offline render wrote (tools/rehearsal.py), taken out of
    the root's outputs, which then read as the program's own; None for a real export."""

    resources: Mapping[str, Mapping[str, Any]] = field(default_factory=dict)
    outputs: Mapping[str, Any] = field(default_factory=dict)
    rehearsal: str | None = None


def read_saved(key: str, path: Path, project: str, stack: str) -> SavedState:
    found = saved_files.read_json(key, path, HOLDS, depth=DEPTH)

    def refuse(why: str) -> ConfigError:
        return saved_files.refused(key, path, f"{why}; expected {HOLDS}")

    if not isinstance(found, dict) or not isinstance(found.get("deployment"), dict):
        raise refuse("no deployment object")
    version = found.get("version")
    if isinstance(version, bool) or version not in VERSIONS:
        raise refuse(f"version is {cut(json.dumps(version))}, which this program does not read (export it with a current CLI)")
    try:  # Go's encoding/json writes UTF-8 only; a lone surrogate escaped as \\ud800 is no text a message can print
        json.dumps(found, ensure_ascii=False).encode("utf-8")
    except UnicodeEncodeError as error:
        raise refuse(f"a lone UTF-16 surrogate ({ascii(error.object[error.start])}) in a string, which no UTF-8 text holds") from None
    listed = found["deployment"].get("resources")
    if listed is not None and not isinstance(listed, list):
        raise refuse(f"deployment.resources is {type(listed).__name__}, not a list")
    resources: dict[str, Mapping[str, Any]] = {}
    outputs: dict[str, Any] = {}
    prefix = f"urn:pulumi:{stack}::{project}::"
    for index, item in enumerate(listed or ()):
        member = f"deployment.resources[{index}]"
        if not isinstance(item, dict):
            raise refuse(f"{member} is not an object")
        kinds = {
            **{"urn": STRING, "type": STRING, "outputs": saved_files.OBJECT, "delete": saved_files.BOOL, "parent": STRING},
            **{"inputs": saved_files.OBJECT, "retainOnDelete": saved_files.BOOL},
        }
        if problem := saved_files.typed(item, kinds):
            raise refuse(f"{member}: {problem}")
        urn, type_ = item.get("urn"), item.get("type")
        if not urn or not type_:
            raise refuse(f"{member} has no {'urn' if not urn else 'type'}")
        if not urn.startswith(prefix) or urn.count("::") < 3:
            raise saved_files.refused(
                key,
                path,
                f"{member}.urn is {shown(urn)}, not of stack {shown(stack)} of project {shown(project)}; "
                f"save this stack's own state: `pulumi stack export --stack {shown(stack)} > {cut(saved_files.shown(path))}`",
            )
        if not (urn.isprintable() and type_.isprintable()):
            raise refuse(f"{member} has a character no URN or type has (urn {shown(urn)}, type {shown(type_)})")
        if item.get("delete"):
            continue
        if urn in resources:
            # Pulumi's own check: one URN twice only where all but one are pending delete
            # (pulumi/pulumi@1b594989 pkg/resource/deploy/snapshot.go VerifyIntegrity).
            raise refuse(f"{member}.urn {shown(urn)} is there twice, neither marked for deletion, which Pulumi's own check refuses")
        plain = _unsealed(key, path, f"{member}.outputs", item.get("outputs") or {})
        inputs = _unsealed(key, path, f"{member}.inputs", item.get("inputs") or {})
        resources[urn] = {"type": type_, "outputs": plain, "inputs": inputs, "retainOnDelete": bool(item.get("retainOnDelete"))}
        if type_ == ROOT_STACK and not item.get("parent"):
            outputs = plain
            try:  # the record of what the stack adopted, which the guards read (adopted_record.py)
                adopted_record.parse(plain)
            except adopted_record.Malformed as why:
                raise refuse(f"{member}.outputs.{adopted_record.OUTPUT} {why}, which this program never writes") from None
    mark = outputs.pop(REHEARSAL, None)
    return SavedState(resources, outputs, rehearsal=None if mark is None else str(mark))


def _unsealed(key: str, path: Path, member: str, outputs: dict[str, Any]) -> dict[str, Any]:
    """Each secret as the live read has it (pulumi 3.272 runtime/invoke.py unwraps them): a
    plaintext one decoded, an encrypted one None, since no secret is known offline."""
    pending: list[Any] = [outputs]
    while pending:  # iterative: the depth is bounded by read_json, the walk is linear
        item = pending.pop()
        children = item.items() if isinstance(item, dict) else enumerate(item) if isinstance(item, list) else ()
        for name, value in list(children):
            if isinstance(value, dict) and value.get(SIG_KEY) == SECRET_SIG:
                item[name] = value = _secret(key, path, member, value)
            if isinstance(value, (dict, list)):
                pending.append(value)
    return outputs


def _secret(key: str, path: Path, member: str, sealed: dict[str, Any]) -> Any:
    plaintext = sealed.get("plaintext")
    if plaintext is None:
        return None
    why = "a secret's plaintext is not JSON text"
    if isinstance(plaintext, str):
        try:
            value = json.loads(plaintext, parse_constant=refuse_constant)
        except (ValueError, RecursionError):
            value, why = None, f"{why} (NaN, a number past Python's limit, or broken)"
        else:
            if not (deep := files.depth_problem(value, DEPTH)):
                return value
            why = f"a secret's plaintext: {deep}"
    raise saved_files.refused(key, path, f"{member}: {why}; expected {HOLDS}")


def check_saved(state_file: str | None, project: str, stack: str, key: str = "aks-gpu:preflight.stateFile") -> None:
    """A stateFile that is not such an export is refused in every run, though only the offline render reads it."""
    if state_file:
        read_saved(key, Path(state_file), project, stack)
