"""Where an existing cluster's traffic leaves it, as far as the proof Job needs the internet
(the image's pull, MNIST's download): its HTTP proxy (`httpProxyConfig`) and its outbound type
(`networkProfile.outboundType`), read from the cluster's description, and what a preview says
of them. A created cluster has neither. What AKS and urllib do with each, with their sources:
docs/existing-cluster.md, "Its way out: a proxy, a firewall"."""

from __future__ import annotations

import ipaddress
import urllib.parse
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from components.config import NAMESPACE, StackConfig

# The script's MNIST mirror (proof/train_mnist.py MIRROR), and the port of its HTTPS.
MIRROR_HOST = "storage.googleapis.com"
HTTPS_PORT = 443
# Outbound types with no path to the internet that AKS makes: the owner's routes, or none.
CLOSED = {"userdefinedrouting": "userDefinedRouting", "none": "none"}
# Docker Hub's names (docker/docs: an image without a registry host is docker.io's).
DOCKER_HUB = ("docker.io", "index.docker.io", "registry-1.docker.io")
REGISTRY = 'copy it to your own registry (`az acr import`, docs/proof.md, "Your own registry") and set mnistJob.image to the copy'
DRAWN = f"set {NAMESPACE}:mnistJob.egress to false, and the Job trains on digits it draws"


def _get(doc: Any, key: str) -> Any:
    return next((v for k, v in doc.items() if str(k).lower() == key.lower()), None) if isinstance(doc, Mapping) else None


@dataclass(frozen=True)
class Proxy:
    """The proxy AKS tells every pod to use for HTTPS (httpsProxy, else httpProxy)."""

    url: str
    no_proxy: tuple[str, ...] = ()
    trusted_ca: bool = False

    @property
    def host(self) -> str:
        return urllib.parse.urlsplit(self.url if "//" in self.url else f"//{self.url}").hostname or ""

    @property
    def port(self) -> int | None:
        """The port the URL names, or 443 where it names none: urllib opens an HTTPS request
        through a proxy with http.client.HTTPSConnection to the proxy's host, whose default
        port is 443 (CPython Lib/urllib/request.py ProxyHandler.proxy_open, `set_proxy`).
        None: a port that is not a number."""
        try:
            return urllib.parse.urlsplit(self.url if "//" in self.url else f"//{self.url}").port or HTTPS_PORT
        except ValueError:
            return None

    @property
    def cidr(self) -> str | None:
        """The proxy's address as a NetworkPolicy's ipBlock names it, or None for a host name,
        which a NetworkPolicy cannot name (it selects pods, namespaces and ipBlocks only:
        kubernetes.io "Network Policies")."""
        try:
            address = ipaddress.ip_address(self.host)
        except ValueError:
            return None
        return f"{address}/{address.max_prefixlen}"

    def bypasses(self, host: str) -> bool:
        """Whether no_proxy sends `host` around the proxy, as urllib reads it
        (proxy_bypass_environment: `*`, the name, or a suffix, with or without its dot)."""
        for entry in (e.strip().lstrip(".").lower() for e in self.no_proxy):
            if entry == "*" or (entry and (host == entry or host.endswith(f".{entry}"))):
                return True
        return False


@dataclass(frozen=True)
class Egress:
    """How the cluster's traffic leaves it: its outboundType (None: not said, AKS's default
    loadBalancer) and the proxy its pods are told to use (None: none)."""

    outbound_type: str | None = None
    proxy: Proxy | None = None


def parse_egress(outbound_type: Any, config: Any) -> Egress:
    """networkProfile.outboundType and httpProxyConfig, as the description has them (types
    checked at the edge: components/azure/rest_shapes.py)."""
    url = _get(config, "httpsProxy") or _get(config, "httpProxy")
    proxy = None
    if isinstance(url, str) and url and _get(config, "enabled") is not False:
        no_proxy = [*(_get(config, "noProxy") or ()), *(_get(config, "effectiveNoProxy") or ())]
        proxy = Proxy(url, tuple(str(e) for e in no_proxy), bool(_get(config, "trustedCa")))
    return Egress(outbound_type if isinstance(outbound_type, str) else None, proxy)


def proxy_rule(egress: Egress, job_egress: bool) -> tuple[str, int] | None:
    """The address and port the Job's NetworkPolicy must allow for its download to reach the
    proxy: only for an address (a host name cannot be said in a policy), only when the Job
    downloads and the proxy does not leave the mirror out."""
    proxy = egress.proxy
    if not job_egress or proxy is None or proxy.bypasses(MIRROR_HOST) or proxy.cidr is None or proxy.port is None:
        return None
    return proxy.cidr, proxy.port


def from_docker_hub(image: str) -> bool:
    """Whether a reference names Docker Hub: no registry host before its first `/` (a host has
    a `.` or a `:`, or is localhost), or one of Docker Hub's own."""
    first, _, rest = image.partition("/")
    if not rest or not ("." in first or ":" in first or first == "localhost"):
        return True
    return first.lower() in DOCKER_HUB


def lines(cfg: StackConfig, cluster: str, egress: Egress, policy_enforced: bool) -> tuple[list[str], list[str]]:
    """(what a preview says of the proof's way out of the cluster, what it warns of)."""
    job = cfg.mnist_job
    if not job.enabled:
        return [], []
    if egress.proxy is not None:
        return _proxy_lines(cfg, cluster, egress.proxy, policy_enforced)
    closed = CLOSED.get((egress.outbound_type or "").lower())
    if closed is None:
        return [], []
    needs = [f"mnistJob.image {job.image} is pulled from Docker Hub: {REGISTRY}"] if from_docker_hub(job.image) else []
    if job.egress:
        needs.append(DRAWN if job.runs_script else f"the guide's image downloads MNIST itself from {MIRROR_HOST}: let it through")
    said = f"proof: cluster {cluster} has outboundType {closed}"
    if not needs:
        return [f"{said}; the Job pulls {job.image} and downloads nothing, which needs no way out"], []
    way = (
        "no way out to the internet"
        if closed != "userDefinedRouting"
        else "a way out only where the owner's routes send it (a firewall, usually), which may not let the Job's traffic through"
    )
    return [], [
        f"{said}: {way}; {'; '.join(needs)}; otherwise the pod waits in ImagePullBackOff, or its download fails, until the Job's "
        'deadline (docs/proof.md, "The deadline")'
    ]


def _proxy_lines(cfg: StackConfig, cluster: str, proxy: Proxy, policy_enforced: bool) -> tuple[list[str], list[str]]:
    said = f"proof: cluster {cluster} tells its pods to use the proxy {proxy.url} (httpProxyConfig; AKS sets HTTPS_PROXY in every pod)"
    if not cfg.mnist_job.egress:
        return [f"{said}; the Job downloads nothing (mnistJob.egress false), and its node pulls the image through the proxy"], []
    if proxy.bypasses(MIRROR_HOST):
        return [f"{said}; its noProxy leaves {MIRROR_HOST} out, so the Job downloads MNIST directly (TCP 443)"], []
    infos, warnings = [], []
    if proxy.cidr is not None and proxy.port is not None:
        infos.append(
            f"{said}; the Job's NetworkPolicy allows TCP {proxy.port} to {proxy.cidr}, and the proxy must let {MIRROR_HOST} through"
        )
    elif not policy_enforced:
        infos.append(f"{said}; the cluster enforces no NetworkPolicy, and the proxy must let {MIRROR_HOST} through")
    else:
        warnings.append(
            f"{said}: {proxy.host or proxy.url} is a host name, which a NetworkPolicy cannot name, so the Job's policy (DNS, and "
            f"TCP 443 outside the private ranges) may not let the download reach it; add a NetworkPolicy in namespace "
            f"{cfg.mnist_job.namespace} that allows the proxy's address and port to the pods labelled app=mnist-proof, or {DRAWN}"
        )
    if proxy.trusted_ca:
        warnings.append(
            f"{said}: its trustedCa is installed on the nodes, not in the Job's image, so a proxy that inspects TLS fails the "
            f"download's certificate check (PROOF FAILED: cannot download ... CERTIFICATE_VERIFY_FAILED); then {DRAWN}"
        )
    return infos, warnings
