"""The first `up` of an Entra ID cluster needs no rerun: the Kubernetes objects wait until the
cluster says the deployer may create namespaces (components/cluster/cluster_access.py), asked
with the kubeconfig's own credential plugin. (What a 401, a 403, a new grant and the one
deadline do, and the wait in Pulumi's provider host: test_access_wait.py.)"""

from __future__ import annotations

import base64
import json
import sys

import fake_aks
import pytest
from fake_arm import FakeArm, serve_handler
from support.clock import Clock

from components.cluster import cluster_access
from components.cluster.cluster_access import Answer
from components.errors import ClusterAccessError

# --------------------------------------------------------------------------- the wait


def test_it_asks_again_until_the_cluster_says_yes_backing_off():
    answers = iter([Answer(False, "HTTP 403 Forbidden"), Answer(False, "not allowed (no RBAC policy matched)"), Answer(True, "allowed")])
    clock = Clock()
    got = cluster_access.wait_for_access("kubeconfig", "me", probe=lambda k, s: next(answers), clock=lambda: clock.now, sleep=clock.sleep)
    assert got == "kubeconfig" and clock.slept == [5.0, 10.0]


def test_it_gives_up_within_its_limit_in_one_line_that_says_what_to_do():
    clock = Clock()
    with pytest.raises(ClusterAccessError) as raised:
        cluster_access.wait_for_access(
            "k",
            "p-1",
            probe=lambda k, s: Answer(False, "HTTP 403 Forbidden", "ci@contoso.com (object ID p-1)"),
            clock=lambda: clock.now,
            sleep=clock.sleep,
        )
    said = str(raised.value)
    assert said.startswith("ci@contoso.com (object ID p-1) may still not create namespaces in the cluster after 10 minutes")
    assert "(last answer: HTTP 403 Forbidden)" in said and "`pulumi up` again" in said and "\n" not in said
    assert sum(clock.slept) <= cluster_access.WAIT_SECONDS and max(clock.slept) == cluster_access.LONGEST_DELAY


def test_a_cluster_that_cannot_be_asked_stops_at_once():
    def unreachable(kubeconfig, seconds):
        raise cluster_access.Unreachable("could not reach the cluster's API server https://x: connection refused")

    clock = Clock()
    with pytest.raises(cluster_access.Unreachable, match="could not reach"):
        cluster_access.wait_for_access("k", "me", probe=unreachable, clock=lambda: clock.now, sleep=clock.sleep)
    assert clock.slept == []


# --------------------------------------------------------------------------- one question, over HTTPS


class FakeApiServer(FakeArm):
    """A Kubernetes API server's SelfSubjectAccessReview endpoint, answering as told."""

    answer: tuple[int, dict] = (201, {})
    seen: list = []

    def do_POST(self):
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        self.seen.append((self.path, self.headers["Authorization"], body))
        self.answer_json(*self.answer)


@pytest.fixture
def api(tmp_path):
    """A TLS API server on 127.0.0.1, and a kubeconfig for it whose exec plugin prints a token
    (as kubelogin does) and fails unless client-go's KUBERNETES_EXEC_INFO is set."""
    cert, key = fake_aks._certificate(tmp_path)
    served = serve_handler(FakeApiServer, tls=(cert, key))
    url = next(served)
    plugin = tmp_path / "kubelogin.py"
    plugin.write_text(
        "import json, os, sys\n"
        "assert json.loads(os.environ['KUBERNETES_EXEC_INFO'])['spec']['interactive'] is False\n"
        "print(json.dumps({'apiVersion': 'client.authentication.k8s.io/v1beta1', 'kind': 'ExecCredential',"
        " 'status': {'token': 'token-for-' + sys.argv[-1] + '-' + os.environ['LOGIN']}}))\n"
    )
    kubeconfig = {
        "apiVersion": "v1",
        "kind": "Config",
        "current-context": "aks",
        "clusters": [
            {
                "name": "aks",
                "cluster": {
                    "server": url,
                    "certificate-authority-data": base64.b64encode(cert.read_bytes()).decode(),
                },
            }
        ],
        "contexts": [{"name": "aks", "context": {"cluster": "aks", "user": "u"}}],
        "users": [
            {
                "name": "u",
                "user": {
                    "exec": {
                        "apiVersion": "client.authentication.k8s.io/v1beta1",
                        "command": sys.executable,
                        "args": [str(plugin), "server-id"],
                        "env": [{"name": "LOGIN", "value": "azurecli"}],
                    }
                },
            }
        ],
    }
    FakeApiServer.seen = []
    yield json.dumps(kubeconfig)
    next(served, None)


def test_one_question_is_a_self_subject_access_review_with_the_plugins_token(api):
    FakeApiServer.answer = (201, {"status": {"allowed": True}})
    assert cluster_access.ask(api) == Answer(True, "allowed", "the kubeconfig's user 'u'"), "a token that is no JWT"
    [(path, authorization, body)] = FakeApiServer.seen
    assert path == "/apis/authorization.k8s.io/v1/selfsubjectaccessreviews"
    assert authorization == "Bearer token-for-server-id-azurecli"
    assert body["spec"] == {"resourceAttributes": {"verb": "create", "resource": "namespaces"}}


@pytest.mark.parametrize(
    "status, answer, allowed, said",
    [
        (201, {"status": {"allowed": False, "reason": "no RBAC policy matched"}}, False, "not allowed (no RBAC policy matched)"),
        (403, {"kind": "Status", "code": 403}, False, "HTTP 403 Forbidden"),
    ],
)
def test_not_yet_is_an_answer_to_wait_on(api, status, answer, allowed, said):
    FakeApiServer.answer = (status, answer)
    assert cluster_access.ask(api) == Answer(allowed, said, "the kubeconfig's user 'u'")


def test_any_other_answer_or_no_plugin_stops_at_once(api):
    FakeApiServer.answer = (500, {"kind": "Status", "code": 500})
    with pytest.raises(ClusterAccessError, match="HTTP 500 .* sent with the token of the kubeconfig's user 'u'"):
        cluster_access.ask(api)
    config = json.loads(api)
    config["users"][0]["user"]["exec"]["command"] = "/nonexistent/kubelogin"
    with pytest.raises(ClusterAccessError, match="^the kubeconfig's credential plugin /nonexistent/kubelogin failed: .*No such file"):
        cluster_access.ask(json.dumps(config))
    config["clusters"][0]["cluster"]["server"] = "https://127.0.0.1:9"
    config["users"][0]["user"] = {"token": "t"}
    with pytest.raises(cluster_access.Unreachable, match="could not reach the cluster's API server https://127.0.0.1:9"):
        cluster_access.ask(json.dumps(config))


def test_a_failing_credential_plugin_stops_at_once_in_one_line_with_its_own_words(api, tmp_path):
    """The kubernetes package logs a plugin's failure instead of raising it: the question says it."""
    config = json.loads(api)
    failing = tmp_path / "failing.py"
    failing.write_text("import sys\nsys.stderr.write('AADSTS50076: sign in again\\n')\nsys.exit(3)\n")
    config["users"][0]["user"]["exec"]["args"] = [str(failing)]
    with pytest.raises(ClusterAccessError) as raised:
        cluster_access.ask(json.dumps(config))
    said = str(raised.value)
    assert said.startswith(f"the kubeconfig's credential plugin {sys.executable} failed: exec: process returned 3")
    assert "AADSTS50076: sign in again" in said and "\n" not in said and FakeApiServer.seen == []


def test_the_request_gets_only_what_is_left_of_the_questions_deadline(api, monkeypatch):
    """A request may take 30 s: within a wait's last 10 s, of which the plugin took 8, it gets 2."""
    from kubernetes.client import rest

    limits = []
    real = rest.RESTClientObject.request

    def request(self, *args, _request_timeout=None, **kwargs):
        limits.append(_request_timeout)
        return real(self, *args, _request_timeout=_request_timeout, **kwargs)

    monkeypatch.setattr(rest.RESTClientObject, "request", request)
    FakeApiServer.answer = (201, {"status": {"allowed": True}})
    times = iter([0.0, 8.0])  # the plugin took 8 of the 10 s
    assert cluster_access.ask(api, 10.0, clock=lambda: next(times)).allowed
    assert limits == [2.0]
    times = iter([0.0, 10.0])  # ...or all of them: no request is sent
    with pytest.raises(TimeoutError, match="the credential plugin took the 10 s left"):
        cluster_access.ask(api, 10.0, clock=lambda: next(times))
    assert limits == [2.0]


def kubeconfig_with(server: str, authority: str | None) -> str:
    cluster = {"server": server, **({"certificate-authority-data": authority} if authority is not None else {})}
    return json.dumps(
        {
            "current-context": "aks",
            "clusters": [{"name": "aks", "cluster": cluster}],
            "contexts": [{"name": "aks", "context": {"cluster": "aks", "user": "u"}}],
            "users": [{"name": "u", "user": {"token": "t"}}],
        }
    )


def test_the_clusters_ca_is_the_only_one_trusted_and_without_one_the_systems_are(api, tmp_path, monkeypatch):
    """As kubectl (client-go transport.go rootCertPool): a kubeconfig's CA is the one trust
    anchor, not one more beside the machine's; with none, the machine's CAs."""
    server = json.loads(api)["clusters"][0]["cluster"]
    (tmp_path / "other").mkdir()
    other_ca, _ = fake_aks._certificate(tmp_path / "other")
    monkeypatch.setenv("SSL_CERT_FILE", str(tmp_path / "fake-arm.pem"))  # the machine trusts the server's certificate (fake_aks's)
    FakeApiServer.answer = (201, {"status": {"allowed": True}})
    assert cluster_access.ask(kubeconfig_with(server["server"], None)).allowed
    with pytest.raises(cluster_access.Unreachable, match="CERTIFICATE_VERIFY_FAILED"):
        cluster_access.ask(kubeconfig_with(server["server"], base64.b64encode(other_ca.read_bytes()).decode()))
    assert cluster_access.ask(kubeconfig_with(server["server"], server["certificate-authority-data"])).allowed


@pytest.mark.parametrize(
    "authority, says",
    [
        ("not base64!", "the kubeconfig's certificate-authority-data or client-certificate-data is not base64: "),
        (base64.b64encode(b"no certificate here").decode(), "the kubeconfig's certificate-authority-data holds no PEM certificate"),
        (base64.b64encode(bytes(range(256))).decode(), "the kubeconfig's certificate-authority-data holds no PEM certificate"),
    ],
    ids=["not base64", "no certificate", "not text"],
)
def test_a_ca_that_is_no_certificate_stops_in_one_line_before_any_request(api, authority, says):
    with pytest.raises(ClusterAccessError) as raised:
        cluster_access.ask(kubeconfig_with(json.loads(api)["clusters"][0]["cluster"]["server"], authority))
    assert str(raised.value).startswith(says) and "\n" not in str(raised.value) and FakeApiServer.seen == []
    assert not isinstance(raised.value, cluster_access.Unreachable), "a kubeconfig that is wrong is no unreachable server"
