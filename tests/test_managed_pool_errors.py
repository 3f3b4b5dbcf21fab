"""What reaches the CLI when a step of the AKS-managed pool's provider fails: one line with the
step and Azure's own words, not the Python traceback the SDK's dynamic provider host sends
for any exception (pulumi/dynamic/__main__.py `_abort_with_traceback`:
`context.abort(UNKNOWN, traceback.format_exc())`, whose text the engine prints as the
resource's error). The provider's failures are `pulumi.RunError`s, and the provider tells the
host to send those as their message alone (components/seam/provider_host_patch.py, pinned
by test_provider_host_patch.py); anything else, a bug, keeps its traceback.

These tests run the SDK's own host, as the engine does (test_managed_pool_provider_host.py
says how), so an SDK whose host changes shape fails here."""

from __future__ import annotations

import math
from collections.abc import Iterator
from pathlib import Path

import fake_aks
import fake_arm
import pytest
from google.protobuf import struct_pb2
from support.provider_host import CLUSTER, GROUP, HostError, program_inputs

from components.pools import agent_pool_calls
from components.pools import managed_gpu_pool as mgp

FORBIDDEN = "The client 'x' does not have authorization to perform action 'Microsoft.ContainerService/managedClusters/agentPools/write'"
SIGNED_OUT_AZ = """#!/bin/sh
# `az account get-access-token` when nobody is signed in.
echo "ERROR: Please run 'az login' to setup account." >&2
exit 1
"""


# The fake AKS and the host, shared with test_managed_pool_provider_host.py (support/hosts.py).
pytest_plugins = ["support.hosts"]


@pytest.fixture
def host(managed_pool_host):
    return managed_pool_host


@pytest.fixture
def fresh(managed_pool_arm) -> fake_aks.FakeAks:
    managed_pool_arm.reset()
    return managed_pool_arm


def failure(call) -> str:
    """What the host answered instead of a result: the text the CLI prints."""
    with pytest.raises(HostError) as raised:
        call()
    return str(raised.value)


def test_azures_refusal_reaches_the_cli_as_one_line_with_azures_words(host, fresh):
    fresh.refuse["PUT"] = (403, "AuthorizationFailed", FORBIDDEN)
    said = failure(lambda: host.create(host.check(program_inputs(fresh))))
    assert said == (
        f"creating node pool gpu: Azure answered 403 AuthorizationFailed: {FORBIDDEN}; the identity running Pulumi "
        "may not do it (docs/deploying.md)"
    )


def test_a_step_past_its_time_limit_reaches_the_cli_as_one_line(host, fresh):
    fresh.operation_seconds = math.inf
    news = program_inputs(fresh)
    news[mgp.TIMEOUTS]["create"] = 0.02
    said = failure(lambda: host.create(host.check(news)))
    assert said == "creating node pool gpu did not finish within its time limit; Azure may still be working on it"


@pytest.fixture
def silent() -> Iterator[str]:
    """An HTTPS endpoint that accepts connections and never answers (not even the TLS
    handshake); its URL."""
    yield from fake_arm.silent("https")


def test_a_refresh_that_azure_never_answers_reaches_the_cli_as_one_line_at_its_deadline(host, fresh, silent):
    olds = host.create(host.check(program_inputs(fresh)))
    stalled = struct_pb2.Struct()
    stalled.CopyFrom(olds)
    stalled[mgp.ENDPOINT] = silent
    stalled[mgp.TIMEOUTS]["read"] = 0.05 / 60
    said = failure(lambda: host.read(stalled))
    assert said == (
        f"reading node pool gpu in cluster {GROUP}/{CLUSTER} (agentPools GET): no answer from Azure within 0.05 s "
        "(the sign-in, the GET and its retries); try again"
    )


def test_a_bug_still_reaches_the_cli_with_its_traceback(host, fresh):
    """Only the provider's own one-line errors lose their traceback: anything else is a bug,
    and where it happened is what a maintainer needs."""
    broken = program_inputs(fresh)
    del broken["agentPoolName"]
    said = failure(lambda: host.delete(broken))
    assert said.startswith("Traceback (most recent call last):") and "KeyError: 'agentPoolName'" in said


@pytest.fixture
def signed_out(managed_pool_bin: Path) -> Iterator[None]:
    """Nobody signed in, for the host's next steps: its `az` says so. The provider asks `az`
    for a token in each step (a DefaultAzureCredential per call, components/pools/agent_pool_calls.py),
    so the host already started sees it; the stand-in that prints a token is put back after."""
    az = managed_pool_bin / "az"
    signed_in = az.read_text()
    az.write_text(SIGNED_OUT_AZ)
    try:
        yield
    finally:
        az.write_text(signed_in)


def test_no_sign_in_reaches_the_cli_as_one_line_that_says_az_login(host, fresh, signed_out):
    said = failure(lambda: host.create(program_inputs(fresh)))
    assert "\n" not in said and said.startswith("creating node pool gpu: reading the pool of that name: no Azure sign-in (")
    assert "AzureCliCredential" in said and said.endswith("; run `az login` (or azure/login in GitHub Actions) and try again")


def test_an_operation_that_failed_in_azure_says_so_with_its_error():
    """azure-core raises a failed long-running operation as an HttpResponseError of the status
    URL's answer, a 200 whose body says Failed (azure/core/polling/base_polling.py
    `OperationFailed`): not "Azure answered 200"."""
    from azure.core.exceptions import HttpResponseError, ODataV4Format

    error = HttpResponseError(message="Operation failed or canceled")
    error.status_code = 200
    error.error = ODataV4Format({"error": {"code": "VMExtensionProvisioningError", "message": "the GPU driver\nfailed"}})
    said = str(agent_pool_calls.failed("creating node pool gpu", error))
    assert said == "creating node pool gpu: the operation failed in Azure VMExtensionProvisioningError: the GPU driver failed"
