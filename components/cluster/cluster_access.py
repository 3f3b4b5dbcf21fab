"""Whether the identity that runs `pulumi up` may create the program's Kubernetes objects yet:
a SelfSubjectAccessReview with the kubeconfig's own credential, asked until yes within one
deadline (WAIT_SECONDS). Why, with the sources: docs/design/lifecycle.md, "The deployer's role
assignment" and "How the cluster is asked"."""

from __future__ import annotations

import base64
import binascii
import json
import logging
import logging.handlers
import sys
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from components.errors import ClusterAccessError, one_line
from components.seam.deadline import gather

# Twice what the docs give propagation, each question's kubelogin run and request included.
WAIT_SECONDS = 600.0
FIRST_DELAY, LONGEST_DELAY = 5.0, 30.0
REQUEST_SECONDS = 30.0


class Unreachable(ClusterAccessError):
    """The API server could not be reached: nothing is known of the identity's access."""


class OutOfTime(TimeoutError):
    """A question that did not end within the wait's deadline."""


@dataclass(frozen=True)
class Answer:
    allowed: bool
    #: What the cluster said, for the message when time runs out.
    said: str
    who: str = "the kubeconfig's user"


@dataclass(frozen=True)
class Connection:
    """The API server of the kubeconfig's current context: a kubernetes.client.ApiClient."""

    api: Any
    server: str
    who: str = "the kubeconfig's user"


def connect(kubeconfig: str) -> Connection:
    """A client for the current context's API server, as the kubernetes package loads a
    kubeconfig (config/kube_config.py KubeConfigLoader). The exec plugin has no time limit of its
    own: the caller's deadline bounds it. No retries: each request is one try."""
    from kubernetes import client
    from kubernetes.config.config_exception import ConfigException
    from kubernetes.config.kube_config import KubeConfigLoader

    try:
        config = yaml.safe_load(kubeconfig) or {}
    except yaml.YAMLError as error:  # AKS's answer (listClusterUserCredential), not YAML
        raise ClusterAccessError(f"the kubeconfig is not YAML: {one_line(error)}") from None
    if not isinstance(config, dict):
        raise ClusterAccessError("the kubeconfig is not a mapping")
    configuration = client.Configuration()
    # A failed credential plugin is logged, not raised (kubernetes 37.0.2 config/kube_config.py
    # `_load_from_exec_plugin`): kept to be said.
    logged = logging.handlers.BufferingHandler(sys.maxsize)
    logged.setLevel(logging.ERROR)
    logging.getLogger().addHandler(logged)
    try:
        loader = KubeConfigLoader(config_dict=config)
        loader.load_and_set(configuration)
    except binascii.Error as error:  # FileOrData decodes each *-data key (config/kube_config.py)
        raise ClusterAccessError(f"the kubeconfig's certificate-authority-data or client-certificate-data is not base64: {error}") from None
    except (ConfigException, ValueError, KeyError, TypeError, OSError) as error:
        raise ClusterAccessError(f"the kubeconfig cannot be used: {one_line(error)}") from None
    finally:
        logging.getLogger().removeHandler(logged)
    # urllib3 would fail on a CA file without a certificate only at the first request, as
    # Unreachable: the kubeconfig is AKS's answer, and wrong.
    if configuration.ssl_ca_cert and b"-----BEGIN CERTIFICATE-----" not in Path(configuration.ssl_ca_cert).read_bytes():
        raise ClusterAccessError("the kubeconfig's certificate-authority-data holds no PEM certificate")
    configuration.retries = False
    user_name = str(loader.current_context["context"].get("user") or "")
    bearer = str(configuration.api_key.get("BearerToken") or "").removeprefix("Bearer ")
    if not bearer:
        user = next((u.get("user") or {} for u in config.get("users") or [] if u.get("name") == user_name), {})
        if not user.get("exec"):
            raise ClusterAccessError("the kubeconfig's user has neither a token nor an exec plugin")
        said = one_line("; ".join(record.getMessage() for record in logged.buffer)) or "it printed no token"
        raise ClusterAccessError(f"the kubeconfig's credential plugin {user['exec'].get('command')} failed: {said}")
    return Connection(client.ApiClient(configuration), configuration.host, identity(bearer, user_name))


def claims(token: str) -> Mapping[str, Any]:
    """The claims of a JSON Web Token, unverified (only to name whom it is for); empty for a non-JWT."""
    parts = token.split(".")
    if len(parts) != 3:
        return {}
    try:
        payload = json.loads(base64.urlsafe_b64decode(parts[1] + "=" * (-len(parts[1]) % 4)))
    except ValueError:  # binascii.Error and UnicodeDecodeError are ValueErrors
        return {}
    return payload if isinstance(payload, dict) else {}


def identity(token: str, user: str) -> str:
    """Whom a bearer token speaks for, as Entra ID names them: a user's sign-in name or an
    application's ID, with the object ID a role assignment names (Microsoft identity platform
    access token claims). A token that is not a JWT: the kubeconfig's user, by name."""
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


def ask(kubeconfig: str, seconds: float = WAIT_SECONDS, clock: Callable[[], float] = time.monotonic) -> Answer:
    """One SelfSubjectAccessReview, all of it within `seconds` (on a daemon thread, deadline.gather:
    a socket timeout bounds each read, not a server that trickles); OutOfTime past them."""
    try:
        return gather([lambda: _ask(kubeconfig, seconds, clock)], seconds)[0]
    except OutOfTime:
        raise
    except TimeoutError:  # gather's: the question itself never came back
        raise OutOfTime(f"a question got no answer within the {seconds:g} s left") from None


def _ask(kubeconfig: str, seconds: float, clock: Callable[[], float]) -> Answer:
    from kubernetes.client import (
        ApiException,
        AuthorizationV1Api,
        V1ResourceAttributes,
        V1SelfSubjectAccessReview,
        V1SelfSubjectAccessReviewSpec,
    )
    from urllib3.exceptions import HTTPError, NewConnectionError
    from urllib3.exceptions import TimeoutError as SocketTimeout

    deadline = clock() + seconds
    connection = connect(kubeconfig)
    left = deadline - clock()
    if left <= 0:
        raise OutOfTime(f"the credential plugin took the {seconds:g} s left")
    review = V1SelfSubjectAccessReview(
        spec=V1SelfSubjectAccessReviewSpec(resource_attributes=V1ResourceAttributes(verb="create", resource="namespaces"))
    )
    try:
        # Not preloaded: the urllib3 answer itself (api_client.py _call_with_legacy_options), not the declared model.
        answer: Any = AuthorizationV1Api(connection.api).create_self_subject_access_review(
            review, _request_timeout=min(REQUEST_SECONDS, left), _preload_content=False
        )
        status = json.loads(answer.data).get("status") or {}
    except ApiException as error:
        if error.status == 401:
            # No identity accepted from the token at all: a grant not yet propagated is a 403 or
            # "not allowed", never this, so no wait mends it.
            raise ClusterAccessError(
                f"the cluster refused the token of {connection.who} (HTTP 401 Unauthorized): kubelogin signed in as an "
                "identity, or for a tenant, this cluster does not accept; sign in again (`az login`, or the AAD_LOGIN_METHOD "
                "the workflow sets) and rerun `pulumi up`"
            ) from None
        if error.status == 403:
            return Answer(False, f"HTTP {error.status} {error.reason}", connection.who)
        if not error.status:  # the package's own: TLS failed (rest.py wraps urllib3's SSLError)
            raise Unreachable(f"could not reach the cluster's API server {connection.server}: {one_line(error.reason)}") from None
        raise ClusterAccessError(
            f"the cluster answered HTTP {error.status} {error.reason} to a SelfSubjectAccessReview sent with the token of {connection.who}"
        ) from None
    except HTTPError as error:  # urllib3's: no answer
        timed_out = isinstance(error, SocketTimeout) and not isinstance(error, NewConnectionError)
        if timed_out and left < REQUEST_SECONDS:  # the wait's deadline, not the server's silence
            raise OutOfTime(f"the request got no answer within the {left:g} s left") from None
        raise Unreachable(f"could not reach the cluster's API server {connection.server}: {one_line(error)}") from None
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
    """Asks until the cluster says yes; returns the kubeconfig. ClusterAccessError when time runs
    out or the cluster cannot be asked. `granted`: the object ID granted cluster-admin. One
    deadline: each question gets what is left of it."""
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
