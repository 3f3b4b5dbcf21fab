"""Each read of Azure the program or the managed pool's provider makes has one deadline for
all of it (sign-in, every GET, azure-core's retries, a 429's Retry-After), then one line that
names what was read and the deadline: the management-mode read before anything is registered
(components/pools/pool_modes.py, in a preview and in a deployment), and the provider's GET on
`pulumi refresh` (components/pools/agent_pool_calls.py `get_pool`). The clients' retries
and socket limits are set, not azure-core's defaults (ten retries, 300 s sockets).

No outcome hangs on the machine's speed: Azure here never answers (a socket that accepts and
says nothing) or asks to be called back in an hour (429, Retry-After 3600), so any deadline
shorter than that ends the read, and the tests assert the line, not the time."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from typing import Any

import fake_aks
import fake_arm
import pytest
from conftest import MANAGED_CLUSTER, MANAGED_GROUP
from support.managed_pool import PROVIDER, inputs

from components.cluster import cluster_facts
from components.errors import AzureReadError, ManagedPoolError, ManagedPoolTimeout, PreflightError
from components.live_reader import LiveReader
from components.pools import agent_pool_calls, agent_pools
from components.pools import managed_gpu_pool as mgp
from tools import render
from tools.azure_mocks import MANAGED_CLUSTER_TOKEN, USER_CREDENTIALS_TOKEN, AzureMocks, OfflineReader, existing_cluster
from tools.mock_engine import RecordingMonitor, run_program, run_under_mocks

T4 = "Standard_NC4as_T4_v3"
DEADLINE = 0.05  # seconds: Azure here never answers sooner, however fast the machine


@pytest.fixture
def silent() -> Iterator[str]:
    """An endpoint that accepts connections and never answers; its URL."""
    yield from fake_arm.silent("http")


@pytest.fixture
def throttled() -> Iterator[str]:
    """An endpoint that answers every request 429 with Retry-After: 3600, as ARM throttles."""

    class Handler(fake_arm.JsonHandler):
        def do_GET(self) -> None:
            self.answer_json(429, {"error": {"code": "TooManyRequests", "message": "throttled"}}, {"Retry-After": "3600"})

    yield from fake_arm.serve_handler(Handler)


def retrying_client(url: str) -> Any:
    """The management-mode read's client (agent_pools.client_for: its retries, its socket
    limits), with the fake's bearer header instead of a real credential."""
    from azure.core.pipeline.policies import RetryPolicy
    from azure.mgmt.containerservice import ContainerServiceClient

    return ContainerServiceClient(
        fake_aks.FakeCredential(),
        "sub",
        base_url=url,
        api_version=agent_pools.API_VERSION,
        authentication_policy=fake_aks.FakeBearer(),
        retry_policy=RetryPolicy(retry_total=agent_pools.RETRIES, timeout=agent_pools.READ_SECONDS),
        read_timeout=agent_pools.READ_SECONDS,
    )


# --------------------------------------------------------------------------- the management-mode read


def test_the_management_mode_read_of_an_azure_that_never_answers_ends_at_its_deadline_naming_it(silent):
    client = fake_aks.client_factory_for(silent)("sub", agent_pools.API_VERSION)
    with pytest.raises(TimeoutError) as raised:
        agent_pools.read(client, "rg", "aks", ["gpu", "spare"], limit=DEADLINE)
    assert str(raised.value) == "the agentPools GET of gpu, spare in cluster rg/aks got no answer within 0.05 s"


def test_a_429_whose_retry_after_outlasts_the_deadline_ends_the_read_at_the_deadline(throttled):
    """azure-core sleeps a Retry-After in full, whatever its own `timeout` says: the deadline
    is the read's, not the client's."""
    with pytest.raises(TimeoutError, match=r"^the agentPools GET of gpu in cluster rg/aks got no answer within 0.05 s$"):
        agent_pools.read(retrying_client(throttled), "rg", "aks", ["gpu"], limit=DEADLINE)


class SilentAzure(OfflineReader):
    """The program's reader, reading the pools' management as the live reader does, from an
    Azure that never answers, with a short deadline."""

    def __init__(self, url: str) -> None:
        super().__init__()
        self.client = fake_aks.client_factory_for(url)("sub", agent_pools.API_VERSION)

    def pool_modes(self, subscription: str, resource_group: str, cluster: str, names: Any) -> Any:
        self.reads.append("pool_modes")
        return agent_pools.read(self.client, resource_group, cluster, names, limit=DEADLINE)


def test_a_management_mode_read_past_its_deadline_leaves_a_previews_plan_unknown_in_one_warning(silent):
    monitor = RecordingMonitor(AzureMocks(reader=SilentAzure(silent)))
    run = run_program("dev", overrides={"gpuPool": {"vmSize": T4, "management": "aks-managed"}}, monitor=monitor, preview=True)
    said = [w for w in run.warnings if "GPU pools' management" in w]
    assert said == [
        "preflight: the plan is not known for GPU pool(s) gpu: the GPU pools' management in Azure was not read (TimeoutError: "
        f"the agentPools GET of gpu in cluster {MANAGED_GROUP}/{MANAGED_CLUSTER} got no answer within 0.05 s), and `pulumi up` "
        "reads it again and may plan otherwise: pool gpu is refused if it runs as a typed pool (device-plugin or gpu-operator); "
        'a deployment stops here while the read fails (docs/lifecycle.md, "A plan that rests on a read")'
    ]
    assert run.of_type("pulumi-python:dynamic/aksgpu:ManagedGpuPool"), "a preview goes on"


def test_a_previews_unknown_management_mode_is_counted_among_what_would_stop_pulumi_up(silent):
    monitor = RecordingMonitor(AzureMocks(reader=SilentAzure(silent)))
    run = run_program("dev", overrides={"gpuPool": {"vmSize": T4, "management": "aks-managed"}}, monitor=monitor, preview=True)
    unknown = [w for w in run.warnings if "GPU pools' management" in w]
    assert len(unknown) == 1
    assert render.STOPS in unknown[0], "the render's count of what would stop `pulumi up` finds it"


def test_a_management_mode_read_past_its_deadline_stops_a_deployment_in_one_line(silent):
    monitor = RecordingMonitor(AzureMocks(reader=SilentAzure(silent)))
    with pytest.raises(PreflightError) as raised:
        run_program("dev", overrides={"gpuPool": {"vmSize": T4, "management": "aks-managed"}}, monitor=monitor, preview=False)
    assert str(raised.value).startswith(
        "preflight: the GPU pools' management in Azure could not be read (TimeoutError: the agentPools GET of gpu in "
        f"cluster {MANAGED_GROUP}/{MANAGED_CLUSTER} got no answer within 0.05 s); it decides whether GPU pool(s) gpu are "
        "replaced or refused, so nothing was deployed"
    )
    assert monitor.registrations == []


def test_the_management_mode_client_sets_its_retries_and_socket_limits():
    from azure.core.credentials import AccessToken

    class Credential:
        def get_token(self, *scopes: str, **kwargs: Any) -> AccessToken:
            return AccessToken("t", 0)

    client = agent_pools.client_for("sub", Credential(), timeout=12)
    policy = client._config.retry_policy
    connection = client._client._pipeline._transport.connection_config
    assert (policy.total_retries, policy.timeout) == (agent_pools.RETRIES, 12)
    assert (connection.timeout, connection.read_timeout) == (agent_pools.CONNECT_SECONDS, 12)


def test_the_providers_client_retries_ten_times_within_the_steps_limit_or_a_reads_minute(monkeypatch):
    """What docs/design/managed-pool-provider.md promises of the provider's client: ten retries within
    the step's limit (a minute for a read), 10 s to connect and 60 s to read, never past the limit."""
    monkeypatch.setattr("azure.identity.DefaultAzureCredential", lambda: object())
    for seconds, bound, connect, read in (
        (None, 60.0, 10.0, 60.0),
        (120.0, 120.0, 10.0, 60.0),
        (30.0, 30.0, 10.0, 30.0),
        (5.0, 5.0, 5.0, 5.0),
    ):
        client = agent_pool_calls.client_factory("sub", mgp.STABLE_API_VERSION, seconds=seconds)
        policy = client._config.retry_policy
        connection = client._client._pipeline._transport.connection_config
        assert (policy.total_retries, policy.timeout) == (10, bound)
        assert (connection.timeout, connection.read_timeout) == (connect, read)


# --------------------------------------------------------------------------- the managed pool's read


def state(limit_minutes: float | None = None) -> dict[str, Any]:
    """The pool's state as a refresh hands it to the provider, with a read deadline of its own."""
    props = inputs()
    if limit_minutes is not None:
        props[mgp.TIMEOUTS]["read"] = limit_minutes
    return props


def test_a_refresh_of_an_azure_that_never_answers_ends_at_its_deadline_in_one_line(silent, monkeypatch):
    monkeypatch.setattr(agent_pool_calls, "client_factory", fake_aks.client_factory_for(silent))
    olds = state(limit_minutes=DEADLINE / 60)
    with pytest.raises(ManagedPoolTimeout) as raised:
        PROVIDER.read(mgp.pool_id(olds), olds)
    assert str(raised.value) == (
        f"reading node pool gpu in cluster {MANAGED_GROUP}/{MANAGED_CLUSTER} (agentPools GET): no answer from Azure "
        "within 0.05 s (the sign-in, the GET and its retries); try again"
    )


def test_a_create_that_reads_the_pool_of_its_name_first_says_so_at_the_deadline(silent, monkeypatch):
    """A create reads the pool of its name first: its count, and on an existing cluster its
    owner (refuse_others_pool)."""
    from components.cluster.cluster_facts import OWNER_TAG

    monkeypatch.setattr(agent_pool_calls, "client_factory", fake_aks.client_factory_for(silent))
    props = {**inputs(tags={OWNER_TAG: "aks-gpu/team"}), mgp.TIMEOUTS: {"read": DEADLINE / 60}}
    with pytest.raises(
        ManagedPoolTimeout, match=r"^creating node pool gpu: reading the pool of that name: no answer from Azure within 0.05 s"
    ):
        PROVIDER.create(props)


def test_a_state_without_a_read_limit_reads_within_a_minute(aks, monkeypatch):
    """No stack registers a read limit (a new input would be a diff on every stack): a refresh
    gets READ_MINUTES, and its client is bounded by it."""
    limits: list[Any] = []
    real = agent_pool_calls.client_factory

    def factory(subscription_id: str, api_version: str, endpoint: str = "", seconds: Any = None) -> Any:
        limits.append(seconds)
        return real(subscription_id, api_version, endpoint, seconds)

    monkeypatch.setattr(agent_pool_calls, "client_factory", factory)
    olds = PROVIDER.create(inputs()).outs
    limits.clear()
    assert PROVIDER.read(mgp.pool_id(olds), olds).id == mgp.pool_id(olds)
    assert limits == [agent_pool_calls.READ_MINUTES * 60] == [60.0]


def test_the_providers_client_sets_its_retries_and_socket_limits(monkeypatch):
    monkeypatch.setenv("AZURE_TOKEN_CREDENTIALS", "AzureCliCredential")  # build one; it signs in only when asked
    client = agent_pool_calls.client_factory("sub", mgp.STABLE_API_VERSION, seconds=3600)
    policy = client._config.retry_policy
    connection = client._client._pipeline._transport.connection_config
    assert (policy.total_retries, policy.timeout) == (agent_pool_calls.RETRIES, 3600)
    assert (connection.timeout, connection.read_timeout) == (agent_pool_calls.CONNECT_SECONDS, agent_pool_calls.REQUEST_SECONDS)
    short = agent_pool_calls.client_factory("sub", mgp.STABLE_API_VERSION, seconds=2)
    assert short._client._pipeline._transport.connection_config.read_timeout == 2, "no request outlasts the step's limit"


def test_a_refresh_that_azure_refuses_is_one_line_with_azures_words(aks):
    olds = PROVIDER.create(inputs()).outs
    aks.refuse["GET"] = (403, "AuthorizationFailed", "The client 'x' may not read\nagentPools.")
    with pytest.raises(ManagedPoolError) as raised:
        PROVIDER.read(mgp.pool_id(olds), olds)
    assert str(raised.value) == (
        f"reading node pool gpu in cluster {MANAGED_GROUP}/{MANAGED_CLUSTER} (agentPools GET): Azure answered 403 "
        "AuthorizationFailed: The client 'x' may not read agentPools.; the identity running Pulumi may not do it "
        "(docs/deploying.md)"
    )


# --------------------------------------------------------------------------- an existing cluster's invokes


class SilentProvider(AzureMocks):
    """azure-native, whose invokes of an existing cluster never answer (until the test ends)."""

    def __init__(self) -> None:
        super().__init__(reader=OfflineReader(cluster=existing_cluster()))
        self.released = threading.Event()

    def call(self, args: Any) -> Any:
        if args.token in (MANAGED_CLUSTER_TOKEN, USER_CREDENTIALS_TOKEN):
            self.released.wait()
        return super().call(args)


@pytest.mark.parametrize("preview", [True, False], ids=["preview", "deployment"])
@pytest.mark.parametrize(
    "read, said",
    [
        (
            cluster_facts.read,
            "aks-gpu:existingCluster team-rg/team-aks: reading the cluster (getManagedCluster): azure-native's getManagedCluster "
            "got no answer within 0.05 s; try again",
        ),
        (
            cluster_facts.read_user_kubeconfig,
            "aks-gpu:existingCluster team-rg/team-aks: fetching its user credential (listClusterUserCredential): azure-native's "
            "listClusterUserCredential got no answer within 0.05 s; try again",
        ),
    ],
    ids=["the cluster", "its user credential"],
)
def test_an_existing_clusters_invoke_past_its_deadline_is_one_line_and_the_run_ends(read, said, preview):
    """The engine never answers; the run still ends, with the read's one line (the invoke's
    RPC, left waiting, is none the program's end waits for)."""
    provider = SilentProvider()
    failed: list[str] = []

    def body() -> None:
        try:
            read(LiveReader(invoke_seconds=DEADLINE), "team-rg", "team-aks")
        except AzureReadError as error:
            failed.append(str(error))

    try:
        run = run_under_mocks(body, monitor=RecordingMonitor(provider), preview=preview)
    finally:
        provider.released.set()
    assert failed == [said] and run.resources == []
