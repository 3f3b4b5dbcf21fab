"""The AKS-managed pool as the real `pulumi up` runs it: the program's own inputs, pickled
provider and all, handed over gRPC to the SDK's dynamic provider host, which calls a fake
of ARM over HTTPS with a real Azure credential.

The engine does not call the provider in the program's process. It starts the host the
CLI ships (`pulumi-resource-pulumi-python`: `python -u -m pulumi.dynamic`, in the project
directory), and sends it Configure, Check, Diff, Create, Read, Update and Delete with
protobuf `Struct`s: every number a double, a preview's unknowns the UNKNOWN string
(pulumi/pulumi sdk/python/lib/pulumi/dynamic/__main__.py). These tests do the same:

  - the news are the exact Struct the program registered under the mock engine
    (`Registration.wire`), so the pickle, the names and the body are the program's;
  - the olds are what the host answered before, as the engine stores them;
  - the host signs in with azure-identity's DefaultAzureCredential, narrowed to the Azure
    CLI credential (AZURE_TOKEN_CREDENTIALS), whose `az` is a stand-in that prints a token;
  - ARM is tests/fake_aks.py over HTTPS (the SDK sends bearer tokens over HTTPS only),
    trusted through REQUESTS_CA_BUNDLE, and answering as AKS does: 201 and an
    Azure-AsyncOperation to poll, 202 and a Location, 404, 409 while the cluster is busy.
The one input the tests change is `armEndpoint`, to reach the fake.
"""

from __future__ import annotations

import json
import math
import re
from typing import Any

import pytest
from google.protobuf import struct_pb2
from pulumi.runtime import proto
from support.arm_schemas import registry
from support.plan import planned
from support.provider_host import POOL, T4, Host, HostError, host_environment, pool_id, program_inputs, start_host

from components.pools import managed_gpu_pool as mgp
from tools.azure_mocks import AzureMocks
from tools.mock_engine import RecordingMonitor, run_program

# The fake AKS and the host, shared with test_managed_pool_errors.py (support/hosts.py).
pytest_plugins = ["support.hosts"]


@pytest.fixture
def host(managed_pool_host) -> Host:
    return managed_pool_host


@pytest.fixture
def fresh(managed_pool_arm):
    """An empty cluster with no operation running, and no 409s pending."""
    managed_pool_arm.reset()
    return managed_pool_arm


def changed(news: struct_pb2.Struct, **properties: Any) -> struct_pb2.Struct:
    """The same inputs with other pool properties (as the program sends them for another config)."""
    copy = struct_pb2.Struct()
    copy.CopyFrom(news)
    copy["properties"].update(properties)
    return copy


def plain(struct: struct_pb2.Struct) -> dict[str, Any]:
    from google.protobuf.json_format import MessageToDict

    return MessageToDict(struct)


# --------------------------------------------------------------------------- the wire


def integer_properties() -> set[str]:
    """The agent pool properties Azure's schema types as integers (tests/azure-specs)."""
    _, docs = registry()
    definition = docs["2026-01-02-preview/Microsoft.ContainerService.Aks.json"]["definitions"]["ManagedClusterAgentPoolProfileProperties"]
    return {name for name, prop in definition["properties"].items() if prop.get("oneOf", [prop])[0].get("type") == "integer"}


def test_the_put_body_that_leaves_the_host_carries_integers_where_the_spec_types_integers(host, fresh):
    """A Struct has only doubles: the host hands the provider `count: 2.0`, and without the
    conversion the body said `"count": 2.0, "maxPods": 250.0`."""
    news = program_inputs(fresh)
    assert news["properties"]["count"] == 2.0 and isinstance(news["properties"]["count"], float), "a double on the wire"
    host.create(host.check(news))
    [put] = fresh.pool_calls("PUT")
    sent = json.loads(put.raw)["properties"]
    integers = integer_properties() & set(sent)
    assert {"count", "maxPods"} <= integers
    assert {k: type(sent[k]) for k in integers} == {k: int for k in integers}, put.raw
    assert sent["spotMaxPrice"] == -1, "a number stays a number"


def test_a_create_polls_the_operation_and_records_what_aks_reports(host, fresh):
    outs = plain(host.create(host.check(program_inputs(fresh))))
    assert outs["provisioningState"] == "Succeeded"
    assert fresh.requests[0].method == "GET", "the create looks at the pool of its name first"
    assert fresh.calls("PUT")[0].api_version == mgp.STABLE_API_VERSION
    assert any(r.path.startswith("/fake-operations/") for r in fresh.calls("GET")), "the Azure-AsyncOperation was polled"
    assert outs[mgp.TIMEOUTS] == {"create": 60.0, "update": 60.0, "delete": 45.0}, "the time limits are in the state"


def test_a_second_up_with_nothing_changed_shows_no_change(host, fresh):
    news = program_inputs(fresh)
    olds = host.create(host.check(news))
    diff = host.diff(olds, host.check(news, olds))
    assert diff.changes == proto.DiffResponse.DIFF_NONE


def test_a_preview_of_a_cluster_update_shows_no_pool_change(host, fresh):
    """In a preview the cluster's resourceUID is unknown; the host hands the diff a
    `pulumi.output.Unknown`, which is no change. A new known UID is one."""
    olds = host.create(host.check(program_inputs(fresh)))
    preview = program_inputs(fresh, preview=True)
    assert preview[mgp.CLUSTER_UID] == mgp.UNKNOWN, "the program's preview sends the UID as unknown"
    assert host.diff(olds, host.check(preview, olds)).changes == proto.DiffResponse.DIFF_NONE
    recreated = host.diff(olds, program_inputs(fresh, uid="uid-2"))
    assert recreated.changes == proto.DiffResponse.DIFF_SOME and not recreated.replaces


def test_a_change_of_size_replaces_deleting_first_and_a_change_of_count_updates_with_integers(host, fresh):
    news = program_inputs(fresh)
    olds = host.create(host.check(news))
    bigger = host.diff(olds, changed(news, vmSize="Standard_NC8as_T4_v3"))
    assert list(bigger.replaces) == ["properties.vmSize"] and bigger.deleteBeforeReplace
    scaled_news = changed(news, count=3.0)
    scaled = host.diff(olds, scaled_news)
    assert scaled.changes == proto.DiffResponse.DIFF_SOME and not scaled.replaces
    host.update(olds, scaled_news)
    put = fresh.pool_calls("PUT")[-1]
    assert re.search(rb'"count": 3[,}]', put.raw), put.raw


def test_refresh_sees_a_deleted_pool_and_delete_polls_until_it_is_gone(host, fresh):
    olds = host.create(host.check(program_inputs(fresh)))
    assert host.read(olds).id == pool_id()
    host.delete(olds)
    assert not fresh.pools and fresh.pool_calls("DELETE")
    assert any(r.method == "GET" and r.path.startswith("/fake-operations/") for r in fresh.requests), "the Location was polled"
    assert host.read(olds).id == "", "an empty ID: refresh drops the pool from the state"
    host.delete(olds)  # a second delete: already gone is done


# --------------------------------------------------------------------------- time limits and a busy cluster
#
# The host's clock is real, so these tests give it nothing to race: an operation that must
# outlast its limit runs until the test ends (or until the fake has refused a set number of
# requests), never for a set time. What is left of wall-clock time is the limit itself, which
# must hold the PUT's connection: azure-core bounds the connection by it (client_factory).
# SHORT_LIMIT is 1.2 s; the slowest HTTPS connection and GET to the fake measured with the
# two-core machine running six busy processes took 0.05 s.
SHORT_LIMIT = 0.02


def test_the_time_limit_in_the_inputs_is_the_one_the_operation_gets(host, fresh):
    """The host never reads the request's timeout (customTimeouts): the limit is an input.
    A create that AKS takes longer over than its limit fails, saying so."""
    fresh.operation_seconds = math.inf
    news = program_inputs(fresh)
    news[mgp.TIMEOUTS]["create"] = SHORT_LIMIT
    with pytest.raises(HostError, match=r"creating node pool gpu did not finish within its time limit"):
        host.create(host.check(news))


def test_a_create_retried_while_aks_still_works_on_the_pool_waits_for_it(host, fresh):
    """The first `up` timed out, AKS goes on; the next `up` creates again and AKS answers
    409 OperationNotAllowed until it has finished: the create waits it out. AKS finishes
    once it has refused two of the retried create's PUTs, however long they take."""
    fresh.operation_refusals = 2
    short = program_inputs(fresh)
    short[mgp.TIMEOUTS]["create"] = SHORT_LIMIT
    with pytest.raises(HostError, match="did not finish within its time limit"):
        host.create(host.check(short))
    fresh.operation_refusals, fresh.busy_retry_after = None, "0.01"
    outs = plain(host.create(host.check(program_inputs(fresh))))
    assert len(fresh.pool_calls("PUT")) == 4, "the first PUT, two refused while AKS still worked on the pool, the one that went through"
    assert outs["provisioningState"] == "Succeeded"


def test_update_and_delete_wait_out_more_409s_than_azure_core_retries(host, fresh):
    """azure-core retries an answer with a Retry-After ten times; AKS may answer 409 longer
    than that, or with no Retry-After at all (test_managed_pool_waits.py): the provider goes on."""
    news = program_inputs(fresh)
    olds = host.create(host.check(news))
    fresh.busy, fresh.busy_retry_after = 12, "0.01"
    host.update(olds, changed(news, count=3.0))
    assert len(fresh.pool_calls("PUT")) == 1 + 12 + 1, "the create, twelve 409s, the update"
    fresh.busy = 12
    host.delete(olds)
    assert len(fresh.pool_calls("DELETE")) == 13 and not fresh.pools


def test_a_cluster_busy_past_the_time_limit_fails_the_operation_at_its_limit(host, fresh):
    """A Retry-After longer than the whole limit: the create stops at once rather than wait
    past its limit (a minute: no machine takes that long to reach the fake)."""
    fresh.busy, fresh.busy_retry_after = 10_000, "61"
    limited = program_inputs(fresh)
    limited[mgp.TIMEOUTS]["create"] = 1  # 60 s, less than one Retry-After
    with pytest.raises(
        HostError, match=r"creating node pool gpu could not start within its time limit: Azure kept answering that it is busy"
    ):
        host.create(host.check(limited))
    assert len(fresh.pool_calls("PUT")) == 1, "no second try: it would come after the limit"


def test_with_pythonsafepath_the_host_cannot_load_the_provider(managed_pool_arm, tmp_path):
    """What the program refuses before anything is registered (test_a_pythonsafepath_..._stops_the_program)."""
    environment = host_environment(managed_pool_arm, tmp_path, PYTHONSAFEPATH="1")
    for safe in start_host(environment):
        with pytest.raises(HostError, match="No module named 'components'"):
            safe.create(program_inputs(managed_pool_arm))


def test_a_pythonsafepath_environment_stops_the_program_before_anything_is_registered(monkeypatch):
    """A preview stops too: the check takes no mode (components/preflight/preflight.py
    provider_host). A preview's run registers nothing; a deployment's plan stops the same way,
    and the plan is made before anything is declared (__main__.py main). Nothing but that check
    reads the variable, so a stack without a managed pool plans in both."""
    from components.errors import PreflightError

    monkeypatch.setenv("PYTHONSAFEPATH", "1")
    says = r"^preflight: PYTHONSAFEPATH=1 is set: Pulumi's provider host .* unset it"
    monitor = RecordingMonitor(AzureMocks())
    with pytest.raises(PreflightError, match=says) as raised:
        run_program("dev", overrides={"gpuPool": POOL}, monitor=monitor, preview=True)
    assert "\n" not in str(raised.value) and monitor.registrations == []
    with pytest.raises(PreflightError, match=says) as raised:
        planned("dev", preview=False, gpuPool=POOL)
    assert "\n" not in str(raised.value)
    for preview in (True, False):
        planned("dev", preview, gpuPool={"vmSize": T4})  # without a managed pool, no host
