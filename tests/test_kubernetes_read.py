"""The live read of what an existing cluster runs (components/cluster/kubernetes_read.py), against
a local fake of the API server: the two lists kubectl asks for, with the kubeconfig's own
token, bounded by one deadline."""

from __future__ import annotations

import threading
from typing import Any

import pytest
from fake_arm import JsonHandler, serve_handler

from components.cluster import kubernetes_read
from components.errors import ClusterAccessError
from components.gpu_stack import cluster_objects
from components.live_reader import LiveReader

TOKEN = "kube-token-0123"


class FakeApiServer(JsonHandler):
    routes: dict[str, tuple[int, Any]] = {}
    seen: list[tuple[str, str]] = []
    #: Set: every request waits for it (a server that accepts and never answers).
    hold: threading.Event | None = None

    def do_GET(self):
        self.seen.append((self.path, self.headers.get("Authorization", "")))
        if self.hold is not None:
            self.hold.wait()
            return
        self.answer_json(*self.routes.get(self.path, (404, {"kind": "Status", "code": 404})))


@pytest.fixture
def api():
    FakeApiServer.seen, FakeApiServer.hold = [], None
    FakeApiServer.routes = {
        "/api/v1/namespaces": (200, {"kind": "NamespaceList", "items": [{"metadata": {"name": "gpu-resources"}}]}),
        "/apis/apps/v1/daemonsets": (
            200,
            {
                "kind": "DaemonSetList",
                "items": [
                    {
                        "metadata": {"name": "nvidia-device-plugin-daemonset", "namespace": "gpu-resources"},
                        "spec": {"template": {"spec": {"containers": [{"image": "nvcr.io/nvidia/k8s-device-plugin:v0.18.0"}]}}},
                    }
                ],
            },
        ),
    }
    served = serve_handler(FakeApiServer)
    yield next(served)
    if FakeApiServer.hold is not None:
        FakeApiServer.hold.set()
    next(served, None)


def kubeconfig(server: str) -> str:
    return (
        "apiVersion: v1\nkind: Config\n"
        f"clusters:\n- name: c\n  cluster:\n    server: {server}\n"
        "contexts:\n- name: c\n  context:\n    cluster: c\n    user: u\n"
        "current-context: c\n"
        f"users:\n- name: u\n  user:\n    token: {TOKEN}\n"
    )


def test_the_live_read_lists_namespaces_and_daemon_sets_with_the_kubeconfigs_own_token(api):
    listed = LiveReader().kubernetes_objects(kubeconfig(api))
    assert [path for path, _ in FakeApiServer.seen] == ["/api/v1/namespaces", "/apis/apps/v1/daemonsets"]
    assert {auth for _, auth in FakeApiServer.seen} == {f"Bearer {TOKEN}"}
    seen = cluster_objects.parse(listed)
    assert list(seen.namespaces) == ["gpu-resources"]
    assert [d.where for d in seen.daemon_sets] == ["DaemonSet gpu-resources/nvidia-device-plugin-daemonset"]
    assert seen.daemon_sets[0].device_plugin


def test_a_server_that_never_answers_is_given_up_at_the_deadline(api):
    """Whether the request reached the server before the 0.2 s ran out depends on the machine's
    load, so only the giving up is asserted (no wall-clock margin: the server never answers)."""
    FakeApiServer.hold = threading.Event()
    with pytest.raises((TimeoutError, ClusterAccessError)):
        kubernetes_read.read(kubeconfig(api), limit=0.2)


def test_the_deadline_bounds_the_whole_read_not_each_request(api):
    """The clock says the time is up once the credential is had: no list is asked for."""
    ticks = iter([0.0, 100.0, 100.0])
    with pytest.raises(TimeoutError, match="did not answer within 30 s"):
        kubernetes_read.read(kubeconfig(api), limit=30.0, clock=lambda: next(ticks))
    assert FakeApiServer.seen == []


def test_a_refusal_names_the_list_the_cluster_refused(api):
    FakeApiServer.routes["/apis/apps/v1/daemonsets"] = (403, {"kind": "Status", "reason": "Forbidden"})
    with pytest.raises(ClusterAccessError, match="HTTP 403 .* to GET /apis/apps/v1/daemonsets"):
        kubernetes_read.read(kubeconfig(api), limit=30.0)


CONFIG_MAP = "/api/v1/namespaces/kube-system/configmaps/cluster-autoscaler-priority-expander"


def test_the_live_read_of_a_configmap_asks_for_it_by_name_and_the_apis_not_found_is_none(api):
    """What `kubectl get configmap` answers: the object, or the API's NotFound Status about
    configmaps (k8s.io/apimachinery pkg/api/errors NewNotFound)."""
    owners = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "cluster-autoscaler-priority-expander"}, "data": {}}
    FakeApiServer.routes[CONFIG_MAP] = (200, owners)
    assert LiveReader().config_map(kubeconfig(api), "kube-system", "cluster-autoscaler-priority-expander") == owners
    assert FakeApiServer.seen == [(CONFIG_MAP, f"Bearer {TOKEN}")]
    not_found = {"kind": "Status", "reason": "NotFound", "code": 404, "details": {"name": "x", "kind": "configmaps"}}
    FakeApiServer.routes[CONFIG_MAP] = (404, not_found)
    assert kubernetes_read.config_map(kubeconfig(api), "kube-system", "cluster-autoscaler-priority-expander") is None


@pytest.mark.parametrize(
    "answer",
    [
        (404, {"kind": "Status", "code": 404}),
        (404, {"reason": "NotFound", "details": {"kind": "namespaces"}}),
        (403, {"reason": "Forbidden"}),
    ],
    ids=["a 404 without the API's Status", "another resource's NotFound", "a refusal"],
)
def test_an_answer_that_is_not_the_apis_not_found_is_a_failed_read_never_an_absence(api, answer):
    FakeApiServer.routes[CONFIG_MAP] = answer
    with pytest.raises(ClusterAccessError, match=f"HTTP {answer[0]} .* to GET {CONFIG_MAP}"):
        kubernetes_read.config_map(kubeconfig(api), "kube-system", "cluster-autoscaler-priority-expander")
