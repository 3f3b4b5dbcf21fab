"""The access wait before the Kubernetes objects (components/cluster/cluster_access.py), a resource
of its own whose create runs in Pulumi's provider host (components/cluster/access_wait.py):
a new grant is asked about; a 401 stops it at once, a 403 or "not allowed" is waited out within
one deadline that bounds each question too, and every message names the identity whose token
was sent, read from the token's own claims, and the one granted. No wall clock: the waits run on
a fake clock, the API server is a local fake; in the host, the cluster answers at once."""

from __future__ import annotations

import base64
import json

import fake_aks
import fake_engine
import pytest
from conftest import run_cached
from fake_arm import FakeArm, serve_handler
from google.protobuf import struct_pb2
from pulumi.runtime import proto
from pulumi.runtime.proto import engine_pb2
from support.clock import Clock
from support.provider_host import HostError, host_environment, start_host

from components.cluster import access_wait, cluster_access
from components.errors import ClusterAccessError
from components.proof.proof_watch import UNKNOWN

T4 = "Standard_NC4as_T4_v3"
ENTRA = {"gpuPool": None, "gpuPools": {"a": {"vmSize": T4}}, "access": {"mode": "entra"}}
ALICE = "11111111-aaaa-4aaa-8aaa-111111111111"
CI_APP, CI = "c1c1c1c1-0000-4000-8000-000000000001", "c1c1c1c1-0000-4000-8000-0000000000aa"


def jwt(**claims) -> str:
    """A token shaped as Entra ID issues them (header.payload.signature, base64url, unpadded)."""

    def part(value: dict) -> str:
        return base64.urlsafe_b64encode(json.dumps(value).encode()).decode().rstrip("=")

    return f"{part({'alg': 'RS256', 'typ': 'JWT'})}.{part(claims)}.c2lnbmF0dXJl"


# --------------------------------------------------------------------------- whose token


@pytest.mark.parametrize(
    "token, who",
    [
        (jwt(upn="alice@contoso.com", oid=ALICE, appid="04b07795-8ddb-461a-bbee-02f9e1bf7b46"), f"alice@contoso.com (object ID {ALICE})"),
        (jwt(preferred_username="bob@fabrikam.com"), "bob@fabrikam.com"),
        (jwt(appid=CI_APP, oid=CI, idtyp="app"), f"the application {CI_APP} (object ID {CI})"),
        (jwt(azp=CI_APP), f"the application {CI_APP}"),
        (jwt(oid=CI), f"object ID {CI}"),
        ("static-token", "the kubeconfig's user 'clusterUser'"),
        ("a.bm90IGpzb24.c", "the kubeconfig's user 'clusterUser'"),
        ("a.W10.c", "the kubeconfig's user 'clusterUser'"),
    ],
    ids=[
        "a user",
        "a guest by sign-in name",
        "a service principal",
        "an app without oid",
        "an oid alone",
        "no JWT",
        "no JSON",
        "no object",
    ],
)
def test_the_identity_is_read_from_the_tokens_claims_without_verifying_them(token, who):
    assert cluster_access.identity(token, "clusterUser") == who


# --------------------------------------------------------------------------- one question, over HTTPS


class FakeApiServer(FakeArm):
    """A Kubernetes API server's SelfSubjectAccessReview endpoint, answering from a script."""

    answers: list[tuple[int, dict]] = []
    asked = 0

    def do_POST(self):
        self.rfile.read(int(self.headers["Content-Length"]))
        type(self).asked += 1
        self.answer_json(*(self.answers.pop(0) if len(self.answers) > 1 else self.answers[0]))


@pytest.fixture
def api(tmp_path):
    """A TLS API server on 127.0.0.1, and a kubeconfig for it whose user holds `token` (a
    function: the kubeconfig for a given token)."""
    cert, key = fake_aks._certificate(tmp_path)
    served = serve_handler(FakeApiServer, tls=(cert, key))
    url = next(served)
    FakeApiServer.asked = 0

    def kubeconfig(token: str) -> str:
        ca = base64.b64encode(cert.read_bytes()).decode()
        return json.dumps(
            {
                "current-context": "aks",
                "clusters": [{"name": "aks", "cluster": {"server": url, "certificate-authority-data": ca}}],
                "contexts": [{"name": "aks", "context": {"cluster": "aks", "user": "clusterUser"}}],
                "users": [{"name": "clusterUser", "user": {"token": token}}],
            }
        )

    yield kubeconfig
    next(served, None)


FORBIDDEN = (403, {"kind": "Status", "code": 403, "reason": "Forbidden"})
NOT_YET = (201, {"status": {"allowed": False, "reason": "no RBAC policy matched"}})
ALLOWED = (201, {"status": {"allowed": True}})


def wait(kubeconfig: str, granted: str, clock: Clock) -> str:
    return cluster_access.wait_for_access(kubeconfig, granted, clock=lambda: clock.now, sleep=clock.sleep)


def test_a_401_fails_at_once_in_one_line_naming_whose_token_it_refused(api):
    FakeApiServer.answers = [(401, {"kind": "Status", "code": 401})]
    clock = Clock()
    with pytest.raises(ClusterAccessError) as raised:
        wait(api(jwt(upn="alice@contoso.com", oid=ALICE)), ALICE, clock)
    said = str(raised.value)
    assert said.startswith(f"the cluster refused the token of alice@contoso.com (object ID {ALICE}) (HTTP 401 Unauthorized)")
    assert "\n" not in said and "`az login`" in said
    assert FakeApiServer.asked == 1 and clock.slept == [], "asked once, no wait"


def test_a_403_or_not_yet_is_waited_out_until_the_cluster_says_yes(api):
    FakeApiServer.answers = [FORBIDDEN, NOT_YET, ALLOWED]
    clock = Clock()
    kubeconfig = api(jwt(upn="alice@contoso.com", oid=ALICE))
    assert wait(kubeconfig, ALICE, clock) == kubeconfig
    assert FakeApiServer.asked == 3 and clock.slept == [5.0, 10.0]


@pytest.mark.parametrize("answer", [FORBIDDEN, NOT_YET], ids=["403", "not allowed"])
def test_a_grant_that_never_takes_fails_within_the_limit_naming_whose_token_was_sent(api, answer):
    FakeApiServer.answers = [answer]
    clock = Clock()
    with pytest.raises(ClusterAccessError) as raised:
        wait(api(jwt(upn="alice@contoso.com", oid=ALICE)), ALICE, clock)
    said = str(raised.value)
    assert said.startswith(f"alice@contoso.com (object ID {ALICE}) may still not create namespaces in the cluster after 10 minutes")
    assert f"cluster-admin was granted to object ID {ALICE}: Azure RBAC may not have taken the role assignment yet" in said
    assert "if it was deleted outside Pulumi, `pulumi refresh` and `pulumi up` create it again" in said and "\n" not in said
    assert sum(clock.slept) <= cluster_access.WAIT_SECONDS and FakeApiServer.asked == len(clock.slept) + 1 > 2


def test_when_the_grant_is_to_another_identity_the_message_says_so(api):
    """access.deployerObjectId pins the grant to CI's principal; someone else runs the `up`."""
    FakeApiServer.answers = [FORBIDDEN]
    clock = Clock()
    with pytest.raises(ClusterAccessError) as raised:
        wait(api(jwt(upn="alice@contoso.com", oid=ALICE)), CI, clock)
    said = str(raised.value)
    assert said.startswith(f"alice@contoso.com (object ID {ALICE}) may still not create namespaces")
    assert f"cluster-admin was granted to object ID {CI}" in said and "access.deployerObjectId" in said


# --------------------------------------------------------------------------- one deadline, each question included


def test_each_question_gets_what_is_left_of_the_one_deadline_and_none_is_asked_past_it():
    """One question can take kubelogin's 120 s and the request's 30: the wait hands each what is
    left, so ten minutes are ten minutes, not ten plus one question."""
    clock, given = Clock(), []

    def slow(kubeconfig: str, seconds: float) -> cluster_access.Answer:
        given.append(seconds)
        clock.now += min(seconds, 150.0)
        return cluster_access.Answer(False, "HTTP 403 Forbidden", f"alice@contoso.com (object ID {ALICE})")

    with pytest.raises(ClusterAccessError, match=r"^alice@contoso.com \(object ID .*\) may still not create namespaces"):
        cluster_access.wait_for_access("k", ALICE, probe=slow, clock=lambda: clock.now, sleep=clock.sleep)
    assert given[0] == cluster_access.WAIT_SECONDS and given == sorted(given, reverse=True)
    assert clock.now <= cluster_access.WAIT_SECONDS, "nothing runs past the deadline"


def test_a_question_that_outlasts_the_deadline_fails_naming_the_identity_and_the_grant():
    clock = Clock()
    answers = iter([cluster_access.Answer(False, "HTTP 403 Forbidden", f"alice@contoso.com (object ID {ALICE})")])

    def probe(kubeconfig: str, seconds: float) -> cluster_access.Answer:
        answer = next(answers, None)
        if answer is None:
            clock.now += seconds
            raise TimeoutError(f"a question got no answer within the {seconds:g} s left")
        return answer

    with pytest.raises(ClusterAccessError) as raised:
        cluster_access.wait_for_access("k", ALICE, probe=probe, clock=lambda: clock.now, sleep=clock.sleep)
    said = str(raised.value)
    assert said.startswith(
        f"alice@contoso.com (object ID {ALICE}) was not shown to be allowed to create namespaces in the cluster within 10 minutes "
        "(a question got no answer within the 595 s left); "
        f"cluster-admin was granted to object ID {ALICE}"
    )
    assert clock.now == cluster_access.WAIT_SECONDS and "\n" not in said


# --------------------------------------------------------------------------- a resource of its own, in the provider host


def program_wait(**overrides):
    """The access wait as a deployment of the dev stack registers it."""
    return run_cached("dev", preview=False, **{**ENTRA, **overrides})[0].of_type(access_wait.TYPE)


def test_a_created_cluster_with_a_grant_declares_one_wait_for_the_granted_identity_and_no_credential():
    [wait] = program_wait()
    assert (wait.inputs["granted"], wait.inputs["clusterName"], wait.inputs["entra"]) == (
        "22222222-2222-2222-2222-222222222222",
        "aks-gpu-dev",
        True,
    )
    assert wait.inputs["grantId"] and not [k for k in wait.inputs if "kubeconfig" in k.lower() or "token" in k.lower()]
    assert program_wait(access={"mode": "local"}) == [], "local accounts: no grant, no wait"


def test_the_wait_asks_again_only_about_another_grant():
    olds = {"granted": ALICE, "grantId": "g1", "clusterName": "aks", access_wait.STATUS_URN: "urn:a"}
    assert not access_wait.diff_wait(olds, dict(olds)).changes
    assert access_wait.diff_wait(olds, {**olds, "grantId": "g2"}).replaces == ["grantId"]
    assert access_wait.diff_wait(olds, {**olds, "grantId": UNKNOWN}).replaces == ["grantId"], "a grant being replaced"
    moved = access_wait.diff_wait(olds, {**olds, access_wait.STATUS_URN: "urn:b"})
    assert moved.changes and moved.replaces == []


@pytest.fixture(scope="module")
def served_engine():
    yield from fake_engine.served()


@pytest.fixture(scope="module")
def arm():
    yield from fake_aks.serve(tls=True)


@pytest.fixture(scope="module")
def host(arm, served_engine, tmp_path_factory):
    yield from start_host(host_environment(arm, tmp_path_factory.mktemp("bin")), engine=served_engine[1])


def create(host, arm, kubeconfig: str):
    """Check, then Create, as the engine does, with the program's inputs pointed at the fake ARM,
    which answers the cluster's listClusterUserCredential with `kubeconfig`."""
    [wait] = program_wait()
    arm.reset()
    arm.kubeconfigs[(wait.inputs["resourceGroupName"], wait.inputs["clusterName"])] = kubeconfig
    sent = struct_pb2.Struct()
    sent.CopyFrom(wait.wire)
    sent["armEndpoint"] = arm.url
    checked = host.call("Check", proto.CheckRequest(urn=wait.urn, olds=struct_pb2.Struct(), news=sent))
    return host.call("Create", proto.CreateRequest(urn=wait.urn, properties=checked.inputs))


def test_in_the_provider_host_the_wait_fetches_the_kubeconfig_itself_and_is_done_once_the_cluster_says_yes(host, arm, api, served_engine):
    FakeApiServer.answers = [ALLOWED]
    created = create(host, arm, api(jwt(upn="alice@contoso.com", oid=ALICE)))
    assert created.id == "aks-gpu-dev/22222222-2222-2222-2222-222222222222"
    assert FakeApiServer.asked == 1 and [r.path.rsplit("/", 1)[-1] for r in arm.calls("POST")] == ["listClusterUserCredential"]
    assert served_engine[0].logged == []


def test_in_the_provider_host_a_401_fails_the_create_in_one_line_naming_whose_token_it_refused(host, arm, api):
    FakeApiServer.answers = [(401, {"kind": "Status", "code": 401})]
    with pytest.raises(HostError) as raised:
        create(host, arm, api(jwt(upn="alice@contoso.com", oid=ALICE)))
    said = str(raised.value)
    assert said.startswith(f"the cluster refused the token of alice@contoso.com (object ID {ALICE}) (HTTP 401 Unauthorized)")
    assert "\n" not in said and "Traceback" not in said


def test_in_the_provider_host_an_api_server_it_cannot_reach_is_a_warning_on_the_waits_row_and_the_up_goes_on(host, arm, served_engine):
    """A runner outside access.authorizedIpRanges may still change what lives in Azure; what
    it changes in Kubernetes fails there by itself."""
    served_engine[0].logged.clear()
    closed = {"current-context": "aks", "clusters": [{"name": "aks", "cluster": {"server": "https://127.0.0.1:9"}}]}
    closed |= {"contexts": [{"name": "aks", "context": {"cluster": "aks", "user": "u"}}], "users": [{"name": "u", "user": {"token": "t"}}]}
    created = create(host, arm, json.dumps(closed))
    assert created.id
    [warned] = served_engine[0].logged
    [wait] = program_wait()
    assert (warned.severity, warned.urn, warned.ephemeral) == (engine_pb2.WARNING, wait.inputs[access_wait.STATUS_URN], False)
    assert warned.message.startswith(
        "the deployer's access to the cluster was not checked: could not reach the cluster's API server https://127.0.0.1:9"
    )
    assert warned.message.endswith("needs that API server (aks-gpu:access.authorizedIpRanges)")
