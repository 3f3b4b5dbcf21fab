"""The pods' security baseline and the Checkov checks a stack leaves open."""

from __future__ import annotations

import re
from pathlib import Path

import yaml

from tools.mock_engine import ProgramRun
from tools.stack_files import ROOT

JOB = "kubernetes:batch/v1:Job"

DAEMONSET = "kubernetes:apps/v1:DaemonSet"

PLUGIN, EXPORTER = "nvidia-device-plugin-daemonset", "dcgm-exporter"


def workloads(run: ProgramRun) -> list:
    return [*run.of_type(DAEMONSET), *run.of_type(JOB)]


def check_pods(run: ProgramRun) -> None:
    for workload in workloads(run):
        pod = workload.inputs["spec"]["template"]["spec"]
        assert pod["automountServiceAccountToken"] is False
        assert pod["securityContext"]["seccompProfile"] == {"type": "RuntimeDefault"}
        for container in pod["containers"]:
            ctx = container["securityContext"]
            assert ctx["allowPrivilegeEscalation"] is False and ctx["capabilities"]["drop"] == ["ALL"]
            if workload.inputs["metadata"]["name"] == EXPORTER:
                # NVIDIA's manifest: CAP_SYS_ADMIN for profiling metrics, a writable root.
                assert ctx["capabilities"]["add"] == ["SYS_ADMIN"] and "readOnlyRootFilesystem" not in ctx
                continue
            mig = {"name": "NVIDIA_MIG_MONITOR_DEVICES", "value": "all"} in (container.get("env") or [])
            if workload.inputs["metadata"]["name"] == PLUGIN and mig:
                # NVIDIA's chart with a MIG strategy: CAP_SYS_ADMIN for the MIG monitor devices.
                assert ctx["capabilities"] == {"drop": ["ALL"], "add": ["SYS_ADMIN"]}
            else:
                assert ctx["capabilities"] == {"drop": ["ALL"]}
            assert ctx["readOnlyRootFilesystem"] is True
            assert set(container["resources"]["requests"]) == {"cpu", "memory"}
            assert {"cpu", "memory"} <= set(container["resources"]["limits"])


def checkov_settings(stack: str) -> Path:
    """The stack's Checkov settings, as the Makefile picks them: its own, or the default."""
    own = ROOT / "security" / f"checkov-aks-{stack}.yaml"
    return own if own.exists() else ROOT / "security" / "checkov-aks.yaml"


def open_checks(stack: str) -> dict[str, str]:
    """`skip-check` entries of the stack's Checkov settings, with their comments."""
    path = checkov_settings(stack)
    found = dict(re.findall(r"^\s*-\s*(CKV_AZURE_\d+)\s*#\s*(.+)$", path.read_text(), re.M))
    assert sorted(found) == sorted(yaml.safe_load(path.read_text())["skip-check"]), "every skip has a reason comment"
    return found


def check_open_checks_documented(stack: str) -> None:
    doc = (ROOT / "docs" / "design" / "security.md").read_text()
    for check in open_checks(stack):
        assert re.search(rf"\| `{check}` \|", doc), f"{check} missing from docs/design/security.md's open-checks table"
