"""The one seam (components/seam/reader.py): the program reads Azure and the cluster through
the reader it is handed, so a test that runs the whole program can answer for Azure; the live
reader makes azure-native's invokes and the Azure SDK's calls with one credential, and
preflight's live reads (SKUs, usage, the deployed pools' scale sets) run against a local fake
of Azure Resource Manager within the deadline that bounds them."""

from __future__ import annotations

import json
import subprocess
import sys
import threading
from pathlib import Path

import fake_prices
import pytest
from azure.core.exceptions import HttpResponseError
from conftest import ROOT
from fake_arm import FakeArm, FakeCredential

from components.errors import AzureReadError, PreflightError
from components.live_reader import LiveReader
from components.seam import azure_facts, compute, deadline
from tools.azure_mocks import (
    CLIENT_CONFIG_TOKEN,
    FEATURE_REGISTRATION_TOKEN,
    MANAGED_CLUSTER_TOKEN,
    MOCK_CLIENT,
    AzureMocks,
    OfflineReader,
    existing_cluster,
)
from tools.mock_engine import RecordingMonitor, run_program, run_under_mocks

FIXTURES = Path(__file__).parent / "fixtures" / "preflight"
T4 = "Standard_NC4as_T4_v3"
USER_CREDENTIALS_TOKEN = "azure-native:containerservice:listManagedClusterUserCredentials"


def handed(azure: OfflineReader, preview: bool, **overrides):
    """The dev stack with `overrides`, handed `azure` as its reader: (run or error, monitor)."""
    monitor = RecordingMonitor(AzureMocks(reader=azure))
    try:
        return run_program("dev", overrides=overrides, monitor=monitor, preview=preview), monitor
    except (PreflightError, AzureReadError) as error:
        return error, monitor


SUBSCRIPTION = "33333333-3333-3333-3333-333333333333"


# --------------------------------------------------------------------------- a test answers for Azure


def test_quota_a_test_hands_in_stops_a_deployment_before_anything_is_registered():
    facts = azure_facts.from_files(FIXTURES / "eastus-skus.json", FIXTURES / "eastus-usage.json", "eastus")
    error, monitor = handed(OfflineReader(facts=facts), preview=False, gpuPool={"vmSize": T4})
    assert isinstance(error, PreflightError) and monitor.registrations == []
    assert "'Standard NCASv3_T4 Family vCPUs' (standardNCASv3_T4Family) in eastus: 0 in use, limit 0" in str(error)
    assert monitor.mocks.reader.reads.count("facts") == 1


def test_prices_a_test_hands_in_are_the_estimate_a_preview_prints():
    run, _ = handed(OfflineReader(prices=fake_prices.price_list()), preview=True, gpuPool={"vmSize": T4})
    estimate = run.outputs["estimatedCost"].value
    assert estimate["source"] == "the Azure Retail Prices API"
    assert estimate["mostHourly"] > 0 and not [w for w in run.warnings if w.startswith("cost:")]


def test_a_pool_running_under_aks_management_that_a_test_hands_in_is_refused_in_a_preview():
    error, monitor = handed(OfflineReader(pool_modes={"gpu": "aks-managed"}), preview=True, gpuPool={"vmSize": T4})
    assert isinstance(error, PreflightError) and monitor.registrations == []
    assert "node pool gpu in cluster aks-gpu-dev runs aks-managed (as Azure describes it)" in str(error)


def test_the_offline_readers_reads_are_the_programs_and_nothing_else_asks_azure():
    """Every pre-registration read of an existing-cluster stack goes through the reader."""
    overrides = {"existingCluster": {"resourceGroupName": "team-rg", "name": "team-aks"}, "gpuPool": {"vmSize": T4}}
    _, monitor = handed(OfflineReader(cluster=existing_cluster()), preview=True, **overrides)
    assert set(monitor.mocks.reader.reads) >= {"cluster", "user_kubeconfig", "facts", "pool_modes", "prices", "client_subscription"}
    assert MANAGED_CLUSTER_TOKEN not in monitor.mocks.calls and FEATURE_REGISTRATION_TOKEN not in monitor.mocks.calls


# --------------------------------------------------------------------------- the live reader


def test_the_live_readers_cluster_reads_are_azure_natives_invokes():
    """Signed in as azure-native is: getManagedCluster, listClusterUserCredential in the exec
    format, getClientConfig, and the feature's registration read, never created."""
    azure = OfflineReader(cluster=existing_cluster())
    monitor = RecordingMonitor(AzureMocks(reader=azure))
    seen = {}

    def body() -> None:
        live = LiveReader()
        seen["cluster"] = live.cluster("team-rg", "team-aks")["name"]
        seen["kubeconfig"] = live.user_kubeconfig("team-rg", "team-aks")
        seen["subscription"] = live.client_subscription()
        seen["feature"] = live.feature_state("Microsoft.ContainerService", "ManagedGPUExperiencePreview")

    run = run_under_mocks(body, monitor=monitor)
    assert seen["cluster"] == "team-aks" and seen["subscription"] == MOCK_CLIENT["subscriptionId"] and seen["feature"] == "Registered"
    assert seen["kubeconfig"] == azure.kubeconfig_of("team-aks", exec_format=True)
    assert monitor.mocks.calls == [MANAGED_CLUSTER_TOKEN, USER_CREDENTIALS_TOKEN, CLIENT_CONFIG_TOKEN, FEATURE_REGISTRATION_TOKEN]
    assert run.resources == []


class CountedCredential:
    built = 0

    def __init__(self) -> None:
        CountedCredential.built += 1

    def get_token(self, *scopes, **kwargs):
        from azure.core.credentials import AccessToken

        return AccessToken("fake-token", 4102444800)


def test_the_live_reader_signs_in_once_for_every_read_of_the_azure_sdk(monkeypatch, arm):
    import azure.identity

    CountedCredential.built = 0
    monkeypatch.setattr(azure.identity, "DefaultAzureCredential", CountedCredential)
    FakeArm.routes = {
        "/providers/microsoft.compute/skus": (200, {"value": json.loads((FIXTURES / "eastus-skus.json").read_text())}),
        "/locations/eastus/usages": (200, {"value": json.loads((FIXTURES / "eastus-usage.json").read_text())}),
        "/subscriptions/sub-1/providers/microsoft.authorization/permissions": (200, {"value": [{"actions": ["*"]}]}),
    }
    live = LiveReader(arm_endpoint=arm)
    assert live.sign_in_problem() is None
    assert live.facts("sub-1", "eastus", "MC_rg_aks_eastus").skus[T4].vcpus == 4
    assert live.permissions("sub-1") == [{"actions": ["*"]}]
    assert CountedCredential.built == 1


@pytest.mark.parametrize("preview", [True, False])
def test_a_read_the_reader_refuses_is_one_line_in_a_preview_and_a_deployment(preview):
    error, monitor = handed(
        OfflineReader(refuse={"cluster": "(AuthorizationFailed) no"}),
        preview=preview,
        existingCluster={"resourceGroupName": "team-rg", "name": "team-aks"},
        gpuPool={"vmSize": T4},
    )
    assert monitor.registrations == []
    assert "\n" not in str(error) and "the identity running Pulumi may not read it (AuthorizationFailed)" in str(error)


# --------------------------------------------------------------------------- preflight's live reads


def test_the_live_path_reads_skus_usage_and_the_deployed_pools(arm):
    vmss = {"name": "aks-gpu-123-vmss", "location": "eastus", "tags": {"aks-managed-poolName": "gpu"}, "sku": {"name": T4, "capacity": 2}}
    FakeArm.routes = {
        "/providers/microsoft.compute/skus": (200, {"value": json.loads((FIXTURES / "eastus-skus.json").read_text())}),
        "/locations/eastus/usages": (200, {"value": json.loads((FIXTURES / "eastus-usage.json").read_text())}),
        "/resourcegroups/mc_rg_aks_eastus/providers/microsoft.compute/virtualmachinescalesets": (200, {"value": [vmss]}),
    }
    facts = compute.facts(SUBSCRIPTION, "eastus", "MC_rg_aks_eastus", credential=FakeCredential(), base_url=arm, timeout=10)
    assert facts.skus[T4].vcpus == 4 and facts.skus["Standard_NC6s_v3"].restriction == "NotAvailableForSubscription"
    assert facts.usages["standardNCASv3_T4Family"].display == "Standard NCASv3_T4 Family vCPUs"
    assert facts.existing_pools == {"gpu": (T4, 2)}
    assert any("$filter=location%20eq%20%27eastus%27" in p or "filter=location" in p for p in FakeArm.seen)


def test_the_live_path_treats_a_missing_node_resource_group_as_a_first_deployment(arm):
    FakeArm.routes = {
        "/providers/microsoft.compute/skus": (200, {"value": []}),
        "/locations/eastus/usages": (200, {"value": []}),
    }
    facts = compute.facts(SUBSCRIPTION, "eastus", "MC_rg_aks_eastus", credential=FakeCredential(), base_url=arm, timeout=10)
    assert facts.existing_pools == {}


def test_the_live_path_raises_on_a_refusal_for_preflight_to_report(arm):
    FakeArm.routes = {"/providers/microsoft.compute/skus": (403, {"error": {"code": "AuthorizationFailed", "message": "no"}})}
    with pytest.raises(HttpResponseError):
        compute.facts(SUBSCRIPTION, "eastus", "MC_rg_aks_eastus", credential=FakeCredential(), base_url=arm, timeout=10)


def test_a_stuck_azure_call_does_not_hold_the_program_after_the_timeout():
    """An executor's workers are joined at interpreter exit (concurrent.futures.thread
    `_python_exit`), so a call stuck in a socket held the program after the "not checked"
    warning. The calls now run on daemon threads: the process ends though one never returns."""
    script = (
        "import threading, sys; from components.seam import deadline\n"
        "stuck = threading.Event()\n"
        "try:\n    deadline.gather([stuck.wait, lambda: 1], timeout=0.2)\n"
        "except TimeoutError as e:\n    print('timeout:', e)\n"
    )
    result = subprocess.run([sys.executable, "-c", script], cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert result.stdout.strip() == "timeout: Azure did not answer within 0.2 s", result.stderr


def test_gather_returns_results_in_order_and_raises_the_first_error():
    assert deadline.gather([lambda: "skus", lambda: "usage"], timeout=10) == ["skus", "usage"]
    with pytest.raises(ValueError, match="refused"):
        deadline.gather([lambda: 1, lambda: (_ for _ in ()).throw(ValueError("refused"))], timeout=10)


class _Clock:
    """deadline's clock: the waiting thread's time stands at 0, a call's at `at`, so what a
    call raised is before or after the deadline whenever the threads really ran."""

    def __init__(self, at: float) -> None:
        self.at, self.waiter = at, threading.get_ident()

    def monotonic(self) -> float:
        return 0.0 if threading.get_ident() == self.waiter else self.at


@pytest.mark.parametrize("at, raised", [(5.0, ValueError), (31.0, TimeoutError)], ids=["before the deadline", "after it"])
def test_an_error_a_call_raises_after_the_deadline_is_the_deadlines_however_late_the_waiter_wakes(monkeypatch, at, raised):
    """A socket's timeout and the deadline end together when they are the same length (the
    managed pool's read): whichever thread the machine runs first, the line is the deadline's."""
    monkeypatch.setattr(deadline, "time", _Clock(at))
    with pytest.raises(raised):
        deadline.gather([lambda: (_ for _ in ()).throw(ValueError("read timed out"))], timeout=30)
