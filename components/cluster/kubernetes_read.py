"""The live read of what an existing cluster runs (components/gpu_stack/cluster_objects.py): its
namespaces and its DaemonSets in every namespace, as `kubectl get namespaces,daemonsets
--all-namespaces --show-managed-fields --output json` prints them (the API's lists keep
managedFields), asked of the API server with the kubeconfig's own credential
(cluster_access.py: its token, or its exec plugin's, through the kubernetes package). And one
ConfigMap by name, the priority expander's on a cluster the stack created
(components/pools/priority_config_map.py).

One deadline bounds the whole read, the credential plugin and both requests: each request
waits at most what is left, and the read itself runs on a daemon thread the program stops
waiting for at the deadline (deadline.gather), so a server that accepts and never answers
costs READ_SECONDS, not a socket timeout per read.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from typing import Any

from components.cluster.cluster_access import Connection, connect
from components.errors import ClusterAccessError, one_line
from components.seam.deadline import gather

# The whole read: long enough for kubelogin's sign-in and two lists, short enough that a
# preview that cannot reach the API server is not held up.
READ_SECONDS = 30.0


def read(kubeconfig: str, limit: float = READ_SECONDS, clock: Callable[[], float] = time.monotonic) -> dict[str, Any]:
    """The cluster's namespaces and DaemonSets, a v1 List; TimeoutError after `limit` seconds."""
    return _within(lambda: _read(kubeconfig, limit, clock), limit)


def _within(call: Callable[[], Any], limit: float) -> Any:
    """`call`'s answer, on a daemon thread waited for at most `limit` seconds (deadline.gather)."""
    try:
        return gather([call], limit)[0]
    except TimeoutError:
        raise TimeoutError(f"the cluster's API server did not answer within {limit:g} s") from None


def config_map(kubeconfig: str, namespace: str, name: str, limit: float = READ_SECONDS) -> dict[str, Any] | None:
    """The ConfigMap `namespace`/`name`, as `kubectl get configmap -o json` prints it, or None
    where the API server answers NotFound; TimeoutError after `limit` seconds."""
    path = f"/api/v1/namespaces/{namespace}/configmaps/{name}"

    def get() -> Any:
        from kubernetes.client import CoreV1Api

        connection = connect(kubeconfig)
        found = _get(
            connection, path, lambda **o: CoreV1Api(connection.api).read_namespaced_config_map(name, namespace, **o), limit, "configmaps"
        )
        if found is not None and not isinstance(found, dict):
            raise ClusterAccessError(f"the cluster's answer to GET {path} is not an object")
        return found

    return _within(get, limit)


def _get(connection: Connection, path: str, call: Callable[..., Any], timeout: float, absent: str | None = None) -> Any:
    """The JSON `call` answers (`path`: what it asks, for the message), within `timeout`; None
    where `absent` names the resource and the server answers its NotFound: a Status with reason
    NotFound about that resource (k8s.io/apimachinery@eed236ce pkg/api/errors/errors.go
    NewNotFound: `details.kind` is the resource), never a 404 that something else in the way (a
    proxy) answers, which is a failed read."""
    from kubernetes.client import ApiException
    from urllib3.exceptions import HTTPError

    try:
        return json.loads(call(_request_timeout=timeout, _preload_content=False).data)
    except ApiException as error:
        if absent is not None and error.status == 404 and _not_found(error.body, absent):
            return None
        if not error.status:  # the package's own: TLS failed (rest.py wraps urllib3's SSLError)
            raise ClusterAccessError(
                f"could not read {path} from the cluster's API server {connection.server}: {one_line(error.reason)}"
            ) from None
        raise ClusterAccessError(f"the cluster answered HTTP {error.status} {error.reason} to GET {path}") from None
    except (HTTPError, ValueError) as error:  # urllib3's: no answer; or no JSON
        raise ClusterAccessError(f"could not read {path} from the cluster's API server {connection.server}: {one_line(error)}") from None


def _not_found(body: Any, resource: str) -> bool:
    try:
        status = json.loads(body or "")
    except ValueError:
        return False
    details = status.get("details") if isinstance(status, dict) else None
    return isinstance(details, dict) and status.get("reason") == "NotFound" and details.get("kind") == resource


def _read(kubeconfig: str, limit: float, clock: Callable[[], float]) -> dict[str, Any]:
    from kubernetes.client import AppsV1Api, CoreV1Api

    deadline = clock() + limit
    connection = connect(kubeconfig)
    # The lists kubectl asks for `get namespaces,daemonsets --all-namespaces` (a list's items
    # carry no kind, which kubectl adds, and so does this read).
    lists = (
        (CoreV1Api(connection.api).list_namespace, "/api/v1/namespaces", "v1", "Namespace"),
        (AppsV1Api(connection.api).list_daemon_set_for_all_namespaces, "/apis/apps/v1/daemonsets", "apps/v1", "DaemonSet"),
    )
    items: list[Any] = []
    for call, path, version, kind in lists:
        left = deadline - clock()
        if left <= 0:
            raise TimeoutError(f"the cluster's API server did not answer within {limit:g} s")
        listed = _get(connection, path, call, left)
        found = listed.get("items") if isinstance(listed, dict) else None
        if not isinstance(found, list):
            raise ClusterAccessError(f"the cluster's answer to GET {path} has no items list")
        items += [{"apiVersion": version, "kind": kind, **item} if isinstance(item, dict) else item for item in found]
    return {"apiVersion": "v1", "kind": "List", "items": items}
