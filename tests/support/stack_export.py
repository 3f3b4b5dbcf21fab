"""What `pulumi stack export` writes after a deployment the mock engine ran: an UntypedDeployment
of version 3 (pulumi/pulumi@1b594989 sdk/go/common/apitype/core.go DeploymentV3, ResourceV3), the
root Stack first with the program's outputs, each resource's outputs its inputs (the mocks echo
them), and each secret encrypted, as an export without --show-secrets has it."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from tools.mock_engine import ProgramRun, Secret
from tools.rehearsal import root_urn, sealed  # an export's secrets and root, as the rehearsal writes them


def exported(run: ProgramRun, **extra: Any) -> dict[str, Any]:
    """The export of the state `run` (a deployment) left; `extra` members added to the deployment."""
    root = root_urn(run)
    outputs = {name: sealed(Secret(out.value) if out.secret else out.value) for name, out in run.outputs.items()}
    resources = [{"urn": root, "custom": False, "type": "pulumi:pulumi:Stack", "outputs": outputs}]
    for r in run.resources:
        entry = {"urn": r.urn, "custom": r.custom, "type": r.type, "inputs": sealed(r.inputs), "outputs": sealed(r.inputs)}
        entry.update({"id": f"{r.name}-id"} if r.custom else {})
        entry.update({"parent": r.parent or root})
        resources.append(entry)
    manifest = {"time": "2026-11-28T10:00:00Z", "magic": "0" * 64, "version": "v3.209.0"}
    return {"version": 3, "deployment": {"manifest": manifest, "resources": resources, **extra}}


def saved(path: Path, export: dict[str, Any]) -> str:
    """`pulumi stack export > path`: the file's path, as a config value names it."""
    path.write_text(json.dumps(export, indent=4))
    return str(path)
