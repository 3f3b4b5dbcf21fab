"""The access wait before the Kubernetes objects (components/azure/cluster_access.py): it asks
only while the grant is new, a 401 stops it at once, a 403 or "not allowed" is waited out within
its limit, and every message names the identity whose token was sent, read from the token's own
claims. No wall clock: the waits run on a fake clock, the API server is a local fake."""

from __future__ import annotations

import base64
import json
from datetime import datetime, timezone

import fake_aks
import pytest
from fake_arm import FakeArm, serve_handler
from test_cluster_access import Clock

from components.azure import cluster_access
from components.errors import ClusterAccessError
from tools.azure_mocks import AzureMocks, OfflineReader
from tools.mock_engine import RecordingMonitor, run_program

T4 = "Standard_NC4as_T4_v3"
ENTRA = {"gpuPool": None, "gpuPools": {"a": {"vmSize": T4}}, "access": {"mode": "entra"}}
ALICE = "11111111-aaaa-4aaa-8aaa-111111111111"
CI_APP, CI = "c1c1c1c1-0000-4000-8000-000000000001", "c1c1c1c1-0000-4000-8000-0000000000aa"
NOW = datetime(2026, 11, 27, 12, 0, tzinfo=timezone.utc)


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
    assert "Azure RBAC may not have taken the role assignment yet" in said and "\n" not in said
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


# --------------------------------------------------------------------------- only while the grant is new


@pytest.mark.parametrize(
    "created_on, new",
    [
        ("2026-11-27T11:59:58.1234567Z", True),  # ARM's seven decimals: created by this run
        ("2026-11-27T11:51:00Z", True),  # nine minutes: an earlier run's, maybe still propagating
        ("2026-11-27T11:49:59Z", False),
        ("2026-11-27T12:55:00+01:00", True),  # 11:55 UTC
        ("2026-11-27T10:55:00-01:00", True),  # 11:55 UTC
        ("2026-11-27T12:30:00+01:00", False),  # 11:30 UTC
        ("2026-11-26T12:00:00Z", False),
        ("2026-11-27T12:00:30Z", True),  # ARM's clock ahead of the runner's
        (None, True),
        ("", True),
        ("yesterday", True),
        ("2026-13-27T12:00:00Z", True),
        ("2026-11-27T12:00:00+25:00", True),
    ],
)
def test_the_grant_is_new_while_younger_than_the_longest_wait(created_on, new):
    assert cluster_access.grant_is_new(created_on, NOW) is new


class GrantMadeAt(AzureMocks):
    """Azure, whose role assignment reports it was created at `created_on` (ARM's createdOn)."""

    def __init__(self, created_on: str, reader: OfflineReader) -> None:
        super().__init__(reader=reader)
        self.created_on = created_on

    def new_resource(self, args):
        id_, state = super().new_resource(args)
        if args.typ == "azure-native:authorization:RoleAssignment":
            state["createdOn"] = self.created_on
        return id_, state


def deploy(created_on: str, preview: bool = False) -> list[str]:
    asked: list[str] = []
    reader = OfflineReader(wait_for_access=lambda kubeconfig, granted: asked.append(granted) or kubeconfig)
    run_program("dev", overrides=ENTRA, monitor=RecordingMonitor(GrantMadeAt(created_on, reader)), preview=preview)
    return asked


def test_an_up_after_the_one_that_made_the_grant_does_not_ask_the_cluster():
    """A runner outside access.authorizedIpRanges, or a change outside Kubernetes, needs no API server."""
    assert deploy("2020-01-01T00:00:00.0000000Z") == []


def test_the_up_that_makes_the_grant_asks_once_for_its_principal():
    # A createdOn ahead of any clock this runs on: as young as a grant can be.
    assert deploy("2999-01-01T00:00:00Z") == ["22222222-2222-2222-2222-222222222222"]
    assert deploy("2999-01-01T00:00:00Z", preview=True) == [], "a preview asks nothing"
