"""The live read of what an existing cluster runs (components/deciding/existing/cluster_objects.py): its
namespaces and its DaemonSets in every namespace, as `kubectl get namespaces,daemonsets
--all-namespaces --show-managed-fields --output json` prints them (the API's lists keep
managedFields), asked of the API server with the kubeconfig's own credential
(cluster_access.py: its token, or its exec plugin's). And one ConfigMap by name, the priority
expander's on a cluster the stack created (components/deciding/existing/priority_config_map.py).

One deadline bounds the whole read, the credential plugin and both requests: each request
waits at most what is left, and the read itself runs on a daemon thread the program stops
waiting for at the deadline (deadline.gather), so a server that accepts and never answers
costs READ_SECONDS, not a socket timeout per read.
"""

from __future__ import annotations

import json
import os
import subprocess
import time
import urllib.error
import urllib.request
from collections.abc import Callable, Mapping
from typing import Any

from components.errors import ClusterAccessError
from components.live.cluster_access import Connection, connect
from components.live.deadline import gather

# The whole read: long enough for kubelogin's sign-in and two lists, short enough that a
# preview that cannot reach the API server is not held up.
READ_SECONDS = 30.0
# The lists kubectl asks for `get namespaces,daemonsets --all-namespaces` (the API's own
# paths; a list's items carry no kind, which kubectl adds, and so does this read).
LISTS = (("/api/v1/namespaces", "v1", "Namespace"), ("/apis/apps/v1/daemonsets", "apps/v1", "DaemonSet"))


def read(
    kubeconfig: str,
    limit: float = READ_SECONDS,
    environ: Mapping[str, str] = os.environ,
    run: Callable[..., Any] = subprocess.run,
    clock: Callable[[], float] = time.monotonic,
) -> dict[str, Any]:
    """The cluster's namespaces and DaemonSets, a v1 List; TimeoutError after `limit` seconds."""
    try:
        return gather([lambda: _read(kubeconfig, limit, environ, run, clock)], limit)[0]
    except TimeoutError:
        raise TimeoutError(f"the cluster's API server did not answer within {limit:g} s") from None


def config_map(
    kubeconfig: str,
    namespace: str,
    name: str,
    limit: float = READ_SECONDS,
    environ: Mapping[str, str] = os.environ,
    run: Callable[..., Any] = subprocess.run,
) -> dict[str, Any] | None:
    """The ConfigMap `namespace`/`name`, as `kubectl get configmap -o json` prints it, or None
    where the API server answers NotFound; TimeoutError after `limit` seconds."""
    path = f"/api/v1/namespaces/{namespace}/configmaps/{name}"

    def get() -> Any:
        found = _get(connect(kubeconfig, environ, run, timeout=limit), path, limit, absent="configmaps")
        if found is not None and not isinstance(found, dict):
            raise ClusterAccessError(f"the cluster's answer to GET {path} is not an object")
        return found

    try:
        return gather([get], limit)[0]
    except TimeoutError:
        raise TimeoutError(f"the cluster's API server did not answer within {limit:g} s") from None


def _get(connection: Connection, path: str, timeout: float, absent: str | None = None) -> Any:
    """GET `path`'s JSON; None where `absent` names the resource and the server answers its
    NotFound: a Status with reason NotFound about that resource (k8s.io/apimachinery@eed236ce
    pkg/api/errors/errors.go NewNotFound: `details.kind` is the resource), never a 404 that
    something else in the way (a proxy) answers, which is a failed read."""
    request = urllib.request.Request(f"{connection.server}{path}", headers=dict(connection.headers))
    try:
        with urllib.request.urlopen(request, timeout=timeout, context=connection.tls) as response:
            return json.loads(response.read())
    except urllib.error.HTTPError as error:
        if absent is not None and error.code == 404 and _not_found(error, absent):
            return None
        raise ClusterAccessError(f"the cluster answered HTTP {error.code} {error.reason} to GET {path}") from None
    except (urllib.error.URLError, OSError, ValueError) as error:
        raise ClusterAccessError(f"could not read {path} from the cluster's API server {connection.server}: {error}") from None


def _not_found(error: urllib.error.HTTPError, resource: str) -> bool:
    try:
        status = json.loads(error.read())
    except (OSError, ValueError):
        return False
    if not isinstance(status, dict) or not isinstance(status.get("details"), dict):
        return False
    return status.get("reason") == "NotFound" and status["details"].get("kind") == resource


def _read(kubeconfig: str, limit: float, environ: Mapping[str, str], run: Callable[..., Any], clock: Callable[[], float]) -> dict[str, Any]:
    deadline = clock() + limit
    connection = connect(kubeconfig, environ, run, timeout=limit)
    items: list[Any] = []
    for path, version, kind in LISTS:
        left = deadline - clock()
        if left <= 0:
            raise TimeoutError(f"the cluster's API server did not answer within {limit:g} s")
        listed = _get(connection, path, left)
        found = listed.get("items") if isinstance(listed, dict) else None
        if not isinstance(found, list):
            raise ClusterAccessError(f"the cluster's answer to GET {path} has no items list")
        items += [{"apiVersion": version, "kind": kind, **item} if isinstance(item, dict) else item for item in found]
    return {"apiVersion": "v1", "kind": "List", "items": items}
