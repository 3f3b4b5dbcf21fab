"""The live read of what an existing cluster runs (components/deciding/existing/cluster_objects.py): its
namespaces and its DaemonSets in every namespace, as `kubectl get namespaces,daemonsets
--all-namespaces --show-managed-fields --output json` prints them (the API's lists keep
managedFields), asked of the API server with the kubeconfig's own credential
(cluster_access.py: its token, or its exec plugin's).

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
from components.live.cluster_access import connect
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


def _read(kubeconfig: str, limit: float, environ: Mapping[str, str], run: Callable[..., Any], clock: Callable[[], float]) -> dict[str, Any]:
    deadline = clock() + limit
    connection = connect(kubeconfig, environ, run, timeout=limit)
    items: list[Any] = []
    for path, version, kind in LISTS:
        left = deadline - clock()
        if left <= 0:
            raise TimeoutError(f"the cluster's API server did not answer within {limit:g} s")
        request = urllib.request.Request(f"{connection.server}{path}", headers=dict(connection.headers))
        try:
            with urllib.request.urlopen(request, timeout=left, context=connection.tls) as response:
                listed = json.loads(response.read())
        except urllib.error.HTTPError as error:
            raise ClusterAccessError(f"the cluster answered HTTP {error.code} {error.reason} to GET {path}") from None
        except (urllib.error.URLError, OSError, ValueError) as error:
            raise ClusterAccessError(f"could not read {path} from the cluster's API server {connection.server}: {error}") from None
        found = listed.get("items") if isinstance(listed, dict) else None
        if not isinstance(found, list):
            raise ClusterAccessError(f"the cluster's answer to GET {path} has no items list")
        items += [{"apiVersion": version, "kind": kind, **item} if isinstance(item, dict) else item for item in found]
    return {"apiVersion": "v1", "kind": "List", "items": items}
