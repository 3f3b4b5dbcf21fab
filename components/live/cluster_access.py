"""Whether the identity that runs `pulumi up` may create the program's Kubernetes objects yet,
proven by asking the cluster (a SelfSubjectAccessReview with the kubeconfig's own credential)
before the first of them is created: asked in every deployment until yes, within one deadline
(WAIT_SECONDS) that bounds each question too. Why, and the sources (entra-id-authorization.md,
pulumi-kubernetes await.go, pulumi/pulumi source_eval.go@1b594989): docs/design/lifecycle.md, "The
deployer's role assignment" and "How the cluster is asked"."""

from __future__ import annotations

import base64
import json
import os
import ssl
import subprocess
import time
import urllib.error
import urllib.request
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

import yaml

from components.errors import ClusterAccessError, one_line
from components.live.deadline import gather

# Twice what the docs give propagation, so a slow day still passes: the whole wait, each
# question's kubelogin run and request included.
WAIT_SECONDS = 600.0
FIRST_DELAY, LONGEST_DELAY = 5.0, 30.0
# At most this for one request, and for one run of the credential plugin, within what is left.
REQUEST_SECONDS = 30.0
PLUGIN_SECONDS = 120.0
REVIEW = {
    "apiVersion": "authorization.k8s.io/v1",
    "kind": "SelfSubjectAccessReview",
    "spec": {"resourceAttributes": {"verb": "create", "resource": "namespaces"}},
}
# What client-go hands an exec plugin (KUBERNETES_EXEC_INFO): not interactive.
EXEC_INFO = {"apiVersion": "client.authentication.k8s.io/v1beta1", "kind": "ExecCredential", "spec": {"interactive": False}}


class Unreachable(ClusterAccessError):
    """The API server could not be reached (a network, an authorized IP range that leaves this
    runner out): nothing is known of the identity's access."""


class OutOfTime(TimeoutError):
    """A question that did not end within what was left of the wait's deadline."""


@dataclass(frozen=True)
class Answer:
    allowed: bool
    #: What the cluster said, for the message when time runs out.
    said: str
    #: The identity whose token was sent (`identity`).
    who: str = "the kubeconfig's user"


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
        said = one_line(done.stderr or done.stdout or "")
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
    #: The identity whose token the headers carry (`identity`).
    who: str = "the kubeconfig's user"


def claims(token: str) -> Mapping[str, Any]:
    """The claims of a JSON Web Token, read without verifying it (only to name whom it is for:
    the API server is what verifies it); empty for a token that is not a JWT."""
    parts = token.split(".")
    if len(parts) != 3:
        return {}
    try:
        payload = json.loads(base64.urlsafe_b64decode(parts[1] + "=" * (-len(parts[1]) % 4)))
    except ValueError:  # binascii.Error and UnicodeDecodeError are ValueErrors
        return {}
    return payload if isinstance(payload, dict) else {}


def identity(token: str, user: str) -> str:
    """Whom a bearer token speaks for, as a person can find them in Entra ID: a user's sign-in
    name, or an application's ID (a service principal, a managed identity, GitHub's workload
    identity), each with its object ID, the principal a role assignment names (Microsoft
    identity platform access token claims: `upn`, `preferred_username`, `unique_name`, `appid`,
    `azp`, `oid`). A token that is not a JWT: the kubeconfig's user, by name."""
    said = claims(token)
    oid = said.get("oid")
    name = said.get("upn") or said.get("preferred_username") or said.get("unique_name")
    app = said.get("appid") or said.get("azp")
    who = str(name) if name else f"the application {app}" if app else None
    if who and oid:
        return f"{who} (object ID {oid})"
    if who or oid:
        return who or f"object ID {oid}"
    return f"the kubeconfig's user {user!r}"


def _trust(authority_data: Any) -> ssl.SSLContext:
    """What the connection trusts, as client-go does (transport/transport.go `rootCertPool`):
    the cluster's CA alone when the kubeconfig has one, the system's CAs when it has none."""
    if not authority_data:
        return ssl.create_default_context()
    try:
        authority = base64.b64decode(authority_data)
    except ValueError:  # binascii.Error: not base64
        raise ClusterAccessError("the kubeconfig's certificate-authority-data is not base64") from None
    try:
        return ssl.create_default_context(cadata=authority.decode("ascii"))
    except (UnicodeDecodeError, ssl.SSLError) as error:
        raise ClusterAccessError(f"the kubeconfig's certificate-authority-data holds no PEM certificate: {one_line(error)}") from None


def connect(
    kubeconfig: str, environ: Mapping[str, str] = os.environ, run: Callable[..., Any] = subprocess.run, timeout: float = 120
) -> Connection:
    """The current context's server, its CA, and the user's bearer token (`timeout`: for the exec plugin)."""
    try:
        config = yaml.safe_load(kubeconfig) or {}
    except yaml.YAMLError as error:  # AKS's answer (listClusterUserCredential), not YAML
        raise ClusterAccessError(f"the kubeconfig is not YAML: {one_line(error)}") from None
    if not isinstance(config, dict):
        raise ClusterAccessError("the kubeconfig is not a mapping")
    context = _current(config, "context", config.get("current-context") or "")
    cluster = _current(config, "cluster", context.get("cluster") or "")
    user = _current(config, "user", context.get("user") or "")
    tls = _trust(cluster.get("certificate-authority-data"))
    bearer = token(user, environ, run, timeout)
    headers = {"Authorization": f"Bearer {bearer}", "Content-Type": "application/json"}
    who = identity(bearer, context.get("user") or "")
    return Connection(str(cluster.get("server", "")).rstrip("/"), tls, headers, who)


def ask(
    kubeconfig: str,
    seconds: float = WAIT_SECONDS,
    environ: Mapping[str, str] = os.environ,
    run: Callable[..., Any] = subprocess.run,
    clock: Callable[[], float] = time.monotonic,
) -> Answer:
    """One SelfSubjectAccessReview with the kubeconfig's current context and credential, all
    of it within `seconds`: the credential plugin and the request each get what is left (at
    most PLUGIN_SECONDS and REQUEST_SECONDS), and the question runs on a daemon thread the
    wait stops waiting for then (deadline.gather: a socket timeout bounds each read, not a
    server that trickles). OutOfTime past `seconds`."""
    try:
        return gather([lambda: _ask(kubeconfig, seconds, environ, run, clock)], seconds)[0]
    except OutOfTime:
        raise
    except TimeoutError:  # gather's: the question itself never came back
        raise OutOfTime(f"a question got no answer within the {seconds:g} s left") from None


def _ask(kubeconfig: str, seconds: float, environ: Mapping[str, str], run: Callable[..., Any], clock: Callable[[], float]) -> Answer:
    deadline = clock() + seconds
    connection = connect(kubeconfig, environ, run, timeout=min(PLUGIN_SECONDS, seconds))
    left = deadline - clock()
    if left <= 0:
        raise OutOfTime(f"the credential plugin took the {seconds:g} s left")
    request = urllib.request.Request(
        f"{connection.server}/apis/authorization.k8s.io/v1/selfsubjectaccessreviews",
        data=json.dumps(REVIEW).encode(),
        method="POST",
        headers=dict(connection.headers),
    )
    try:
        with urllib.request.urlopen(request, timeout=min(REQUEST_SECONDS, left), context=connection.tls) as response:
            status = json.loads(response.read()).get("status") or {}
    except urllib.error.HTTPError as error:
        if error.code == 401:
            # Unauthorized: the API server accepted no identity from the token at all (another
            # tenant's, an expired sign-in, a wrong audience). A role assignment that has not yet
            # propagated is a 403 or "not allowed", never this: no wait mends it.
            raise ClusterAccessError(
                f"the cluster refused the token of {connection.who} (HTTP 401 Unauthorized): kubelogin signed in as an "
                "identity, or for a tenant, this cluster does not accept; sign in again (`az login`, or the AAD_LOGIN_METHOD "
                "the workflow sets) and rerun `pulumi up`"
            ) from None
        if error.code == 403:
            return Answer(False, f"HTTP {error.code} {error.reason}", connection.who)
        raise ClusterAccessError(
            f"the cluster answered HTTP {error.code} {error.reason} to a SelfSubjectAccessReview sent with the token of {connection.who}"
        ) from None
    except (urllib.error.URLError, OSError) as error:
        timed_out = isinstance(error, TimeoutError) or isinstance(getattr(error, "reason", None), TimeoutError)
        if timed_out and left < REQUEST_SECONDS:  # the wait's deadline, not the server's silence
            raise OutOfTime(f"the request got no answer within the {left:g} s left") from None
        raise Unreachable(f"could not reach the cluster's API server {connection.server}: {error}") from None
    except ValueError as error:
        raise ClusterAccessError(
            f"the cluster's API server {connection.server} answered a SelfSubjectAccessReview with no JSON: {error}"
        ) from None
    allowed = status.get("allowed") is True
    return Answer(allowed, "allowed" if allowed else f"not allowed ({status.get('reason') or 'no reason given'})", connection.who)


def wait_for_access(
    kubeconfig: str,
    granted: str,
    probe: Callable[[str, float], Answer] = ask,
    clock: Callable[[], float] = time.monotonic,
    sleep: Callable[[float], None] = time.sleep,
    limit: float = WAIT_SECONDS,
) -> str:
    """Asks until the cluster says yes; returns the kubeconfig. Raises ClusterAccessError when
    time runs out or the cluster cannot be asked (Unreachable when it cannot be reached).
    `granted`: the object ID the program granted cluster-admin to, which every message names.
    One deadline: each question gets what is left of it (`probe(kubeconfig, seconds)`)."""
    deadline, delay = clock() + limit, FIRST_DELAY
    answer: Answer | None = None
    while True:
        try:
            answer = probe(kubeconfig, max(deadline - clock(), 0.0))
        except TimeoutError as error:
            who = answer.who if answer else "the kubeconfig's identity"
            raise ClusterAccessError(
                f"{who} was not shown to be allowed to create namespaces in the cluster within {limit / 60:g} minutes "
                f"({error}); {_why(who, granted)}"
            ) from None
        if answer.allowed:
            return kubeconfig
        if clock() + delay > deadline:
            raise ClusterAccessError(
                f"{answer.who} may still not create namespaces in the cluster after {limit / 60:g} minutes "
                f"(last answer: {answer.said}); {_why(answer.who, granted)}"
            )
        sleep(delay)
        delay = min(delay * 2, LONGEST_DELAY)


def _why(who: str, granted: str) -> str:
    if granted and granted.lower() in who.lower():  # `who` names its object ID, a GUID
        return (
            f"cluster-admin was granted to object ID {granted}: Azure RBAC may not have taken the role assignment yet, "
            "`pulumi up` again in a few minutes; if it was deleted outside Pulumi, `pulumi refresh` and `pulumi up` create it again"
        )
    return (
        f"cluster-admin was granted to object ID {granted}: if that is another identity, run `pulumi up` as that one "
        "or set aks-gpu:access.deployerObjectId to this one's object ID; otherwise `pulumi up` again in a few minutes"
    )
