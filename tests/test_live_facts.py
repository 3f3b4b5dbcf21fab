"""Preflight's live reads of Azure (SKUs, usage, the deployed pools' scale sets) against a
local fake of Azure Resource Manager, and the deadline that bounds them."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from azure.core.exceptions import HttpResponseError
from conftest import ROOT
from fake_arm import FakeArm, FakeCredential

from components.azure import azure_facts

FIXTURES = Path(__file__).parent / "fixtures" / "preflight"
T4 = "Standard_NC4as_T4_v3"
SUBSCRIPTION = "33333333-3333-3333-3333-333333333333"


def test_the_live_path_reads_skus_usage_and_the_deployed_pools(arm):
    vmss = {"name": "aks-gpu-123-vmss", "location": "eastus", "tags": {"aks-managed-poolName": "gpu"}, "sku": {"name": T4, "capacity": 2}}
    FakeArm.routes = {
        "/providers/microsoft.compute/skus": (200, {"value": json.loads((FIXTURES / "eastus-skus.json").read_text())}),
        "/locations/eastus/usages": (200, {"value": json.loads((FIXTURES / "eastus-usage.json").read_text())}),
        "/resourcegroups/mc_rg_aks_eastus/providers/microsoft.compute/virtualmachinescalesets": (200, {"value": [vmss]}),
    }
    facts = azure_facts.live(SUBSCRIPTION, "eastus", "MC_rg_aks_eastus", credential=FakeCredential(), base_url=arm, timeout=10)
    assert facts.skus[T4].vcpus == 4 and facts.skus["Standard_NC6s_v3"].restriction == "NotAvailableForSubscription"
    assert facts.usages["standardNCASv3_T4Family"].display == "Standard NCASv3_T4 Family vCPUs"
    assert facts.existing_pools == {"gpu": (T4, 2)}
    assert any("$filter=location%20eq%20%27eastus%27" in p or "filter=location" in p for p in FakeArm.seen)


def test_the_live_path_treats_a_missing_node_resource_group_as_a_first_deployment(arm):
    FakeArm.routes = {
        "/providers/microsoft.compute/skus": (200, {"value": []}),
        "/locations/eastus/usages": (200, {"value": []}),
    }
    facts = azure_facts.live(SUBSCRIPTION, "eastus", "MC_rg_aks_eastus", credential=FakeCredential(), base_url=arm, timeout=10)
    assert facts.existing_pools == {}


def test_the_live_path_raises_on_a_refusal_for_preflight_to_report(arm):
    FakeArm.routes = {"/providers/microsoft.compute/skus": (403, {"error": {"code": "AuthorizationFailed", "message": "no"}})}
    with pytest.raises(HttpResponseError):
        azure_facts.live(SUBSCRIPTION, "eastus", "MC_rg_aks_eastus", credential=FakeCredential(), base_url=arm, timeout=10)


def test_a_stuck_azure_call_does_not_hold_the_program_after_the_timeout():
    """An executor's workers are joined at interpreter exit (concurrent.futures.thread
    `_python_exit`), so a call stuck in a socket held the program after the "not checked"
    warning. The calls now run on daemon threads: the process ends though one never returns."""
    script = (
        "import threading, sys; from components.azure import azure_facts\n"
        "stuck = threading.Event()\n"
        "try:\n    azure_facts.gather([stuck.wait, lambda: 1], timeout=0.2)\n"
        "except TimeoutError as e:\n    print('timeout:', e)\n"
    )
    result = subprocess.run([sys.executable, "-c", script], cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert result.stdout.strip() == "timeout: Azure did not answer within 0.2 s", result.stderr


def test_gather_returns_results_in_order_and_raises_the_first_error():
    assert azure_facts.gather([lambda: "skus", lambda: "usage"], timeout=10) == ["skus", "usage"]
    with pytest.raises(ValueError, match="refused"):
        azure_facts.gather([lambda: 1, lambda: (_ for _ in ()).throw(ValueError("refused"))], timeout=10)
