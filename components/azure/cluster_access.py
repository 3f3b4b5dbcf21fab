"""Whether the identity that runs `pulumi up` may create the program's Kubernetes objects yet,
proven by asking the cluster, before the first of them is created.

On an Entra ID cluster with Azure RBAC the program grants that identity "Azure Kubernetes
Service RBAC Cluster Admin" (components/resources/cluster.py) and creates the namespaces right
after. "New role assignments can take up to five minutes to propagate and be updated by the
authorization server" (azure-aks-docs articles/aks/entra-id-authorization.md, ms.date
08/18/2026), and pulumi-kubernetes retries a create only while the answer is NotFound or
NoMatch (provider/pkg/await/await.go: `retrier.Do(apierrors.IsNotFound,
meta.IsNoMatchError)`), not on 403 Forbidden: the first `up` would fail and only a rerun work.

So the Kubernetes provider's kubeconfig resolves only once the cluster says the identity may
create namespaces: a SelfSubjectAccessReview (`POST /apis/authorization.k8s.io/v1/selfsubjectaccessreviews`,
verb create, resource namespaces), which every signed-in identity may send (the system:basic-user
ClusterRole) and whose `status.allowed` is the authorizers' current answer, Azure RBAC's
webhook included. It is asked with the kubeconfig's own credential: the exec plugin
(kubelogin) is run as client-go runs it (client.authentication.k8s.io ExecCredential: the
token is `status.token`). While the answer is "not allowed" (or 401/403) it is asked again,
5 s at first, doubling to 30 s, for at most WAIT_SECONDS; any other failure (a cluster that
cannot be reached, kubelogin missing) stops at once, with what happened.
"""

from __future__ import annotations

import base64
import json
import os
import ssl
import subprocess
import tempfile
import time
import urllib.error
import urllib.request
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

import yaml

from components.errors import ClusterAccessError

# Twice what the docs give propagation, so a slow day still passes.
WAIT_SECONDS = 600.0
FIRST_DELAY, LONGEST_DELAY = 5.0, 30.0
REQUEST_SECONDS = 30.0
REVIEW = {
    "apiVersion": "authorization.k8s.io/v1",
    "kind": "SelfSubjectAccessReview",
    "spec": {"resourceAttributes": {"verb": "create", "resource": "namespaces"}},
}
# What client-go hands an exec plugin (KUBERNETES_EXEC_INFO): not interactive.
EXEC_INFO = {"apiVersion": "client.authentication.k8s.io/v1beta1", "kind": "ExecCredential", "spec": {"interactive": False}}


@dataclass(frozen=True)
class Answer:
    allowed: bool
    #: What the cluster said, for the message when time runs out.
    said: str


def _current(config: Mapping[str, Any], kind: str, name: str) -> Mapping[str, Any]:
    entry = next((e for e in config.get(f"{kind}s") or [] if e.get("name") == name), None)
    if entry is None:
        raise ClusterAccessError(f"the kubeconfig has no {kind} named {name!r}")
    return entry.get(kind) or {}


def token(user: Mapping[str, Any], environ: Mapping[str, str], run: Callable[..., Any] = subprocess.run, timeout: float = 120) -> str:
    """The bearer token of the kubeconfig's user: its `token`, or what its exec plugin prints."""
    if user.get("token"):
        return str(user["token"])
    plugin = user.get("exec")
    if not plugin:
        raise ClusterAccessError("the kubeconfig's user has neither a token nor an exec plugin")
    env = {**environ, **{e["name"]: e["value"] for e in plugin.get("env") or []}, "KUBERNETES_EXEC_INFO": json.dumps(EXEC_INFO)}
    command = [plugin["command"], *(plugin.get("args") or [])]
    try:
        done = run(command, env=env, capture_output=True, text=True, timeout=timeout, check=False)
    except (OSError, subprocess.TimeoutExpired) as error:
        raise ClusterAccessError(f"could not run the kubeconfig's credential plugin {plugin['command']}: {error}") from None
    if done.returncode != 0:
        said = " ".join((done.stderr or done.stdout or "").split())[:300]
        raise ClusterAccessError(f"the kubeconfig's credential plugin {plugin['command']} failed (exit {done.returncode}): {said}")
    try:
        return str(json.loads(done.stdout)["status"]["token"])
    except (ValueError, KeyError, TypeError):
        raise ClusterAccessError(f"the kubeconfig's credential plugin {plugin['command']} printed no ExecCredential token") from None


@dataclass(frozen=True)
class Connection:
    """The API server of the kubeconfig's current context, and how to talk to it."""

    server: str
    tls: ssl.SSLContext
    headers: Mapping[str, str]


def connect(
    kubeconfig: str, environ: Mapping[str, str] = os.environ, run: Callable[..., Any] = subprocess.run, timeout: float = 120
) -> Connection:
    """The current context's server, its CA, and the user's bearer token (`timeout`: for the exec plugin)."""
    config = yaml.safe_load(kubeconfig) or {}
    context = _current(config, "context", config.get("current-context") or "")
    cluster = _current(config, "cluster", context.get("cluster") or "")
    user = _current(config, "user", context.get("user") or "")
    tls = ssl.create_default_context()
    if cluster.get("certificate-authority-data"):
        with tempfile.NamedTemporaryFile("wb", suffix=".pem", delete=False) as ca:
            ca.write(base64.b64decode(cluster["certificate-authority-data"]))
        try:
            tls.load_verify_locations(ca.name)
        finally:
            os.unlink(ca.name)
    headers = {"Authorization": f"Bearer {token(user, environ, run, timeout)}", "Content-Type": "application/json"}
    return Connection(str(cluster.get("server", "")).rstrip("/"), tls, headers)


def ask(kubeconfig: str, environ: Mapping[str, str] = os.environ, run: Callable[..., Any] = subprocess.run) -> Answer:
    """One SelfSubjectAccessReview with the kubeconfig's current context and credential."""
    connection = connect(kubeconfig, environ, run)
    request = urllib.request.Request(
        f"{connection.server}/apis/authorization.k8s.io/v1/selfsubjectaccessreviews",
        data=json.dumps(REVIEW).encode(),
        method="POST",
        headers=dict(connection.headers),
    )
    try:
        with urllib.request.urlopen(request, timeout=REQUEST_SECONDS, context=connection.tls) as response:
            status = json.loads(response.read()).get("status") or {}
    except urllib.error.HTTPError as error:
        if error.code in (401, 403):
            return Answer(False, f"HTTP {error.code} {error.reason}")
        raise ClusterAccessError(f"the cluster answered HTTP {error.code} {error.reason} to a SelfSubjectAccessReview") from None
    except (urllib.error.URLError, OSError, ValueError) as error:
        raise ClusterAccessError(f"could not reach the cluster's API server {connection.server}: {error}") from None
    allowed = status.get("allowed") is True
    return Answer(allowed, "allowed" if allowed else f"not allowed ({status.get('reason') or 'no reason given'})")


def wait_for_access(
    kubeconfig: str,
    who: str,
    probe: Callable[[str], Answer] = ask,
    clock: Callable[[], float] = time.monotonic,
    sleep: Callable[[float], None] = time.sleep,
    limit: float = WAIT_SECONDS,
) -> str:
    """Asks until the cluster says yes; returns the kubeconfig. Raises ClusterAccessError when
    time runs out or the cluster cannot be asked. `who` names the identity in the message."""
    deadline, delay = clock() + limit, FIRST_DELAY
    while True:
        answer = probe(kubeconfig)
        if answer.allowed:
            return kubeconfig
        if clock() + delay > deadline:
            raise ClusterAccessError(
                f"{who} may still not create namespaces in the cluster after {limit / 60:g} minutes (last answer: {answer.said}); "
                "Azure RBAC may not have taken the role assignment yet: `pulumi up` again in a few minutes"
            )
        sleep(delay)
        delay = min(delay * 2, LONGEST_DELAY)
