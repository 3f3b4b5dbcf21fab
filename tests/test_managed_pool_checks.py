"""What an AKS-managed GPU pool needs of Azure before anything is created
(components/pools/managed_pool_checks.py): the preview feature registered, read and never
created, and a sign-in for the pool's own provider. A preview warns; a deployment stops."""

from __future__ import annotations

import pytest
from conftest import run_cached

from components.errors import PreflightError
from components.live_reader import LiveReader
from tools.azure_mocks import AzureMocks, OfflineReader
from tools.mock_engine import RecordingMonitor, run_program

T4 = "Standard_NC4as_T4_v3"
MANAGED = {"vmSize": T4, "dedicatedVhd": True}
MANAGED_POOL = "pulumi-python:dynamic/aksgpu:ManagedGpuPool"


def dev(preview: bool = True, feature_state: str = "Registered", **overrides):
    return run_cached("dev", preview=preview, feature_state=feature_state, **overrides)


def test_the_feature_registration_is_read_never_created():
    """pulumi-azure-native #1722 (open): creating a SubscriptionFeatureRegistration always
    fails with "cannot create already existing resource"."""
    run, monitor = dev(gpuPool=MANAGED)
    assert run.of_type("azure-native:features:SubscriptionFeatureRegistration") == []
    assert "feature_state" in monitor.mocks.reader.reads


def test_the_feature_is_not_read_when_no_managed_pool_is_asked_for():
    _, monitor = dev()
    assert "feature_state" not in monitor.mocks.reader.reads


@pytest.mark.parametrize("state", ["NotRegistered", "Registering", "Unregistered"])
def test_a_preview_warns_with_the_two_commands_when_the_feature_is_not_registered(state):
    run, _ = dev(preview=True, feature_state=state, gpuPool=MANAGED)
    [warning] = [w for w in run.warnings if "ManagedGPUExperiencePreview" in w and "register" in w]
    assert f"which is {state}" in warning
    assert "az feature register --namespace Microsoft.ContainerService --name ManagedGPUExperiencePreview" in warning
    assert "az provider register --namespace Microsoft.ContainerService" in warning
    assert run.one(MANAGED_POOL), "a preview still shows the whole plan"


def test_a_deployment_stops_before_any_resource_when_the_feature_is_not_registered():
    monitor = RecordingMonitor(AzureMocks(feature_state="NotRegistered"))
    with pytest.raises(PreflightError, match=r"\n- aks-gpu:gpuPool.dedicatedVhd = true \(AKS-managed GPU nodes\) needs .* NotRegistered"):
        run_program("dev", overrides={"gpuPool": MANAGED}, monitor=monitor, preview=False)
    assert [r for r in monitor.registrations if not r.type.startswith("pulumi:providers:")] == []


def test_a_registered_feature_passes_silently():
    run, _ = dev(preview=True, gpuPool=MANAGED)
    assert not [w for w in run.warnings if "az feature register" in w]


@pytest.mark.parametrize("preview", [True, False])
def test_a_managed_pool_that_could_not_sign_in_stops_a_deployment_before_the_cluster(preview):
    """The pool's dynamic provider signs in with DefaultAzureCredential: checked first, so a
    missing `az login` does not surface only after the cluster was created."""
    azure = OfflineReader(sign_in="CredentialUnavailableError: run az login", refuse={"facts": "no sign-in"})
    managed = {"gpuPool": {"vmSize": T4, "management": "aks-managed"}}
    monitor = RecordingMonitor(AzureMocks(reader=azure))
    if preview:
        run = run_program("dev", overrides=managed, monitor=monitor, preview=True)
        assert any("DefaultAzureCredential, which cannot sign in here (CredentialUnavailableError" in w for w in run.warnings)
        return
    with pytest.raises(PreflightError, match=r"gpuPool.management = aks-managed: the managed GPU pool is created with azure-identity"):
        run_program("dev", overrides=managed, monitor=monitor, preview=False)
    assert [r for r in monitor.registrations if not r.type.startswith("pulumi:providers:")] == []


def test_the_sign_in_check_asks_for_an_arm_token_and_reports_why_it_failed(monkeypatch):
    import azure.identity

    scopes = []

    class NoSignIn:
        def get_token(self, *asked, **kwargs):
            scopes.extend(asked)
            raise azure.identity.CredentialUnavailableError("Please run 'az login' to set up an account")

    monkeypatch.setattr(azure.identity, "DefaultAzureCredential", NoSignIn)
    assert LiveReader().sign_in_problem() == "CredentialUnavailableError: Please run 'az login' to set up an account"
    assert scopes == ["https://management.azure.com/.default"]
