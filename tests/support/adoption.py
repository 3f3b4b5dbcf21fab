"""The guide's worked example adopted: its run, and the Kubernetes objects its cluster lists."""

from __future__ import annotations

import functools
import json
from typing import Any

from support.guide_example import EXAMPLE, STACK_FILE
from tools.azure_mocks import AzureMocks, OfflineReader
from tools.mock_engine import RecordingMonitor, run_program


def guide(kubernetes: dict[str, Any], preview: bool):
    azure = OfflineReader(cluster=json.loads((EXAMPLE / "cluster.json").read_text()), kubernetes=kubernetes)
    overrides = {"gpuPools": {"gpunp": {"existing": "adopt"}}, "devicePlugin": {"adopt": True}}
    return run_program(
        "ml-prod", overrides=overrides, monitor=RecordingMonitor(AzureMocks(reader=azure)), preview=preview, stack_file=STACK_FILE
    )


@functools.cache
def guide_as_listed(preview: bool):
    """`guide` of the list the guide's cluster holds (kubernetes.json): one run per mode in a
    test session, as conftest's run_cached shares runs. Treat it as read-only."""
    return guide(saved_list(), preview)


def saved_cluster() -> dict[str, Any]:
    """The guide's cluster as `az aks show` saved it (cluster.json): a fresh copy, the caller's to change."""
    return json.loads((EXAMPLE / "cluster.json").read_text())


def saved_list() -> dict[str, Any]:
    return json.loads((EXAMPLE / "kubernetes.json").read_text())


def the_guides(listed: dict[str, Any]) -> dict[str, Any]:
    return next(i for i in listed["items"] if i["kind"] == "DaemonSet" and i["metadata"]["name"] == "nvidia-device-plugin-daemonset")
