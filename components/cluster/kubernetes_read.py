"""The live read of what an existing cluster runs: its namespaces and DaemonSets, as `kubectl get
namespaces,daemonsets --all-namespaces --show-managed-fields --output json` prints them, and the
priority expander's ConfigMap, with the kubeconfig's own credential (cluster_access.connect).
One deadline bounds each read, on a daemon thread (deadline.gather), so a server that never
answers costs READ_SECONDS, not a socket timeout per read."""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from typing import Any

from components.cluster.cluster_access import Connection, connect
from components.errors import ClusterAccessError, one_line
from components.seam.deadline import gather

# Long enough for kubelogin's sign-in and two lists, short enough not to hold up a preview.
READ_SECONDS = 30.0


def read(kubeconfig: str, limit: float = READ_SECONDS, clock: Callable[[], float] = time.monotonic) -> dict[str, Any]:
    """The cluster's namespaces and DaemonSets, a v1 List; TimeoutError after `limit` seconds."""
    return _within(lambda: _read(kubeconfig, limit, clock), limit)


def _within(call: Callable[[], Any], limit: float) -> Any:
    try:
        return gather([call], limit)[0]
    except TimeoutError:
        raise TimeoutError(f"the cluster's API server did not answer within {limit:g} s") from None


def config_map(kubeconfig: str, namespace: str, name: str, limit: float = READ_SECONDS) -> dict[str, Any] | None:
    """The ConfigMap as `kubectl get configmap -o json` prints it, or None where it is NotFound."""
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
    """The JSON `call` answers within `timeout`; None where the server answers NotFound about the
    resource `absent` names (k8s.io/apimachinery@eed236ce pkg/api/errors/errors.go NewNotFound:
    `details.kind`), never a 404 from something else in the way (a proxy)."""
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
    # A list's items carry no kind, which kubectl adds, and so does this read.
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
