"""A failed credential lookup (listClusterUserCredential) on the cluster the stack creates is
one line with the existing-cluster path's words (components/cluster/cluster_facts.py
`credential_error`), in a preview and in a deployment, instead of the SDK's plain
`Exception("invoke of ... failed: ...")` and its traceback. The engine makes that invoke in a
preview once the cluster is in the state (a cluster still to be created gets an unknown
answer): an identity that may not list credentials, or a cluster deleted outside Pulumi."""

from __future__ import annotations

import pytest

from components.errors import AzureReadError
from tools.azure_mocks import USER_CREDENTIALS_TOKEN, AzureMocks, OfflineReader
from tools.mock_engine import RecordingMonitor, run_program

T4 = "Standard_NC4as_T4_v3"  # a deployment on the guide's retired size stops at preflight
# How azure-native quotes ARM's refusal (azure-sdk-for-go azcore's ResponseError text:
# the request, RESPONSE <status>, ERROR CODE, and the body), several lines of it.
FORBIDDEN = """POST https://management.azure.com/subscriptions/s/resourceGroups/aks-gpu-dev-rg/providers/Microsoft.ContainerService/managedClusters/aks-gpu-dev/listClusterUserCredential
--------------------------------------------------------------------------------
RESPONSE 403: 403 Forbidden
ERROR CODE: AuthorizationFailed
--------------------------------------------------------------------------------
{"error": {"code": "AuthorizationFailed", "message": "The client 'x' does not have authorization to perform action 'Microsoft.ContainerService/managedClusters/listClusterUserCredential/action'"}}"""
NOT_FOUND = """POST https://management.azure.com/.../listClusterUserCredential
RESPONSE 404: 404 Not Found
ERROR CODE: ResourceNotFound"""


def refused(answer: str, preview: bool) -> AzureReadError:
    monitor = RecordingMonitor(AzureMocks(reader=OfflineReader(refuse={USER_CREDENTIALS_TOKEN: answer})))
    with pytest.raises(AzureReadError) as raised:
        run_program("dev", overrides={"gpuPool": {"vmSize": T4}}, monitor=monitor, preview=preview)
    assert USER_CREDENTIALS_TOKEN in monitor.mocks.calls, "the refusal came from the invoke itself"
    return raised.value


@pytest.mark.parametrize("preview", [True, False], ids=["preview", "deployment"])
def test_an_identity_that_may_not_list_the_created_clusters_credential_gets_one_line_naming_the_role(preview):
    said = str(refused(FORBIDDEN, preview))
    assert "\n" not in said and "Traceback" not in said
    assert said.startswith(
        "cluster aks-gpu-dev-rg/aks-gpu-dev (this stack's): fetching its user credential (listClusterUserCredential): "
        "the identity running Pulumi may not read it (AuthorizationFailed); it needs "
        "Microsoft.ContainerService/managedClusters/listClusterUserCredential/action"
    ), said
    assert "Azure Kubernetes Service Cluster User Role" in said


@pytest.mark.parametrize("preview", [True, False], ids=["preview", "deployment"])
def test_a_created_cluster_deleted_outside_pulumi_says_refresh_then_up(preview):
    said = str(refused(NOT_FOUND, preview))
    assert "\n" not in said
    assert "Azure says it does not exist (ResourceNotFound); the state has a cluster Azure does not: `pulumi refresh`" in said


def test_the_existing_cluster_path_keeps_its_words():
    """The words are one function's (cluster_facts.credential_error), used by both paths."""
    monitor = RecordingMonitor(AzureMocks(reader=OfflineReader(refuse={"user_kubeconfig": FORBIDDEN})))
    with pytest.raises(AzureReadError) as raised:
        run_program(
            "dev", overrides={"existingCluster": {"resourceGroupName": "team-rg", "name": "team-aks"}}, monitor=monitor, preview=True
        )
    said = str(raised.value)
    assert said.startswith(
        "aks-gpu:existingCluster team-rg/team-aks: fetching its user credential (listClusterUserCredential): "
        "the identity running Pulumi may not read it (AuthorizationFailed)"
    ), said
    assert "\n" not in said and monitor.registrations == []
