"""Where an existing cluster's traffic leaves it, as far as the proof Job needs the internet (the
image's pull, MNIST's download): its `httpProxyConfig` and `networkProfile.outboundType`, and what
a preview says of them. A created cluster has neither. What AKS and urllib do with each, with
their sources: docs/existing-cluster.md, "Its way out: a proxy, a firewall"."""

from __future__ import annotations

import ipaddress
import re
import urllib.parse
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from components.config.values import NAMESPACE
from components.gpu_stack.settings import MnistJobConfig

# The script's MNIST mirror (proof/train_mnist.py MIRROR), and the port of its HTTPS.
MIRROR_HOST = "storage.googleapis.com"
HTTPS_PORT = 443
# Outbound types with no path to the internet that AKS makes: the owner's routes, or none.
CLOSED = {"userdefinedrouting": "userDefinedRouting", "none": "none"}
# Docker Hub's names (docker/docs: an image without a registry host is docker.io's).
DOCKER_HUB = ("docker.io", "index.docker.io", "registry-1.docker.io")
REGISTRY = 'copy it to your own registry (`az acr import`, docs/proof.md, "Pulling the image") and set mnistJob.image to the copy'
DRAWN = f"set {NAMESPACE}:mnistJob.egress to false, and the Job trains on digits it draws"


def _get(doc: Any, key: str) -> Any:
    return next((v for k, v in doc.items() if str(k).lower() == key.lower()), None) if isinstance(doc, Mapping) else None


URL_ALLOWED = "a proxy URL such as http://10.224.0.5:3128 or http://[fd00::5]:3128"


def _split(url: str) -> urllib.parse.SplitResult | None:
    """The URL as urllib reads it (a bare `host:port` as a network location), or None where
    urlsplit refuses it."""
    try:
        return urllib.parse.urlsplit(url if "//" in url else f"//{url}")
    except ValueError:
        return None


def shown_url(url: str) -> str:
    """`url` without its userinfo, read without urlsplit, so that a URL it refuses is redacted
    too: a message never prints a proxy's password."""
    scheme, slashes, rest = url.partition("//") if "//" in url else ("", "", url)
    end = min((i for i in (rest.find(c) for c in "/?#") if i >= 0), default=len(rest))
    user, at, host = rest[:end].rpartition("@")
    return f"{scheme}{slashes}{'***@' if at else ''}{host}{rest[end:]}"


def url_problem(url: str) -> str | None:
    """Why a proxy URL cannot be a proxy's, or None."""
    split = _split(url)
    if split is None or not split.hostname:
        return URL_ALLOWED
    try:
        port = split.port
    except ValueError:
        port = 0
    return None if port != 0 else f"{URL_ALLOWED} (its port a number from 1 to 65535)"


@dataclass(frozen=True)
class Proxy:
    """The proxy AKS tells every pod to use for HTTPS (httpsProxy, else httpProxy)."""

    url: str
    no_proxy: tuple[str, ...] = ()
    trusted_ca: bool = False

    @property
    def shown(self) -> str:
        return shown_url(self.url)

    @property
    def host(self) -> str:
        split = _split(self.url)
        return split.hostname or "" if split is not None else ""

    @property
    def port(self) -> int | None:
        """The port the URL names, or 443: urllib's HTTPSConnection to the proxy's host defaults
        to it (CPython Lib/urllib/request.py ProxyHandler.proxy_open). None: not a number."""
        try:
            split = _split(self.url)
            return split.port or HTTPS_PORT if split is not None else None
        except ValueError:
            return None

    @property
    def address(self) -> ipaddress.IPv4Address | ipaddress.IPv6Address | None:
        """The proxy's IP address (an IPv4-mapped one as IPv4); None for a host name."""
        address = _ip(self.host)
        return address.ipv4_mapped or address if isinstance(address, ipaddress.IPv6Address) else address

    @property
    def cidr(self) -> str | None:
        """The proxy's address as a NetworkPolicy's ipBlock names it, or None for a host name
        (kubernetes.io "Network Policies") or an address with a zone, which the API server refuses
        (kubernetes/kubernetes pkg/apis/networking/validation/validation.go ValidateIPBlock)."""
        address = self.address
        if address is None or (isinstance(address, ipaddress.IPv6Address) and address.scope_id):
            return None
        return f"{address}/{address.max_prefixlen}"

    @property
    def unnamed(self) -> str:
        address = self.address
        if isinstance(address, ipaddress.IPv6Address) and address.scope_id:
            return (
                f"{self.host} is an IPv6 address with a zone (%{address.scope_id}), which a NetworkPolicy's ipBlock cannot hold "
                "(Kubernetes refuses a CIDR with a zone), so none is declared"
            )
        return f"{self.host or self.shown} is a host name, which a NetworkPolicy cannot name"

    def script_bypasses(self, host: str) -> bool:
        """The script downloads with urllib.request.urlopen (proof/train_mnist.py fetch_mnist),
        which on Linux asks proxy_bypass_environment, with the NO_PROXY AKS sets in the pod (the
        entries joined by commas)."""
        return urllib_bypasses(",".join(self.no_proxy), host)

    def node_bypasses(self, host: str) -> bool:
        """containerd pulls with Go's http.ProxyFromEnvironment (containerd internal/cri/server/images/
        image_pull.go registryHosts), which reads NO_PROXY as golang.org/x/net/http/httpproxy does."""
        return go_bypasses(",".join(self.no_proxy), host)


def urllib_bypasses(no_proxy: str, host: str) -> bool:
    """CPython 3.11's urllib.request.proxy_bypass_environment(host, {"no": no_proxy}), line for
    line (the Python pytorch/pytorch's Dockerfile builds its images with, at 01343dcd; a test holds
    the two equal). Not imported: no module of the program imports urllib.request. Only the whole
    value `*` bypasses everything; CIDRs match only as text (azure-aks-docs http-proxy.md)."""
    if no_proxy == "*":
        return True
    host = host.lower()
    # urllib.parse._splitport: a trailing `:digits` (or a bare `:`) comes off, so "a:" is host "a".
    port = re.fullmatch(r"(.*):([0-9]*)", host, re.DOTALL)
    hostonly = port[1] if port else host
    for name in no_proxy.split(","):
        name = name.strip()
        if name:
            name = name.lstrip(".").lower()
            if hostonly == name or host == name:
                return True
            name = "." + name
            if hostonly.endswith(name) or host.endswith(name):
                return True
    return False


def _ip(text: str) -> ipaddress.IPv4Address | ipaddress.IPv6Address | None:
    try:
        return ipaddress.ip_address(text)
    except ValueError:
        return None


def _go_split_host_port(entry: str) -> tuple[str, str] | None:
    """Go's net.SplitHostPort for `host:port` and `[v6]:port`; None where Go refuses it."""
    if entry.startswith("["):
        end = entry.find("]")
        return (entry[1:end], entry[end + 2 :]) if end > 0 and entry[end + 1 : end + 2] == ":" else None
    host, colon, port = entry.rpartition(":")
    return (host, port) if colon and ":" not in host else None


def go_bypasses(no_proxy: str, host: str) -> bool:
    """golang.org/x/net/http/httpproxy (config.init and useProxy, at 094d4385), for an HTTPS
    request to `host` (443 by default): loopback never proxied; `*` anywhere bypasses all; a CIDR
    matches its addresses, an address itself (and its port); `foo.com` matches it and its
    subdomains, `.foo.com` and `*.foo.com` only the subdomains."""
    split = _go_split_host_port(host.lower())
    name, port = split if split is not None and split[1] else (host.lower().strip("[]"), str(HTTPS_PORT))
    ip = _ip(name)
    if name == "localhost" or (ip is not None and ip.is_loopback):
        return True
    for entry in (e.strip().lower() for e in no_proxy.split(",")):
        if not entry:
            continue
        if entry == "*":
            return True
        try:
            network = ipaddress.ip_network(entry, strict=False) if "/" in entry else None
        except ValueError:
            network = None
        if network is not None:
            if ip is not None and ip in network:
                return True
            continue
        parts = _go_split_host_port(entry)
        phost, pport = parts if parts is not None else (entry, "")
        if _ip(phost) is not None:
            if _ip(phost) == ip and pport in ("", port):
                return True
            continue
        if not phost:
            continue
        phost = phost[1:] if phost.startswith("*.") else phost
        whole = not phost.startswith(".")
        suffix = f".{phost}" if whole else phost
        if (name.endswith(suffix) or (whole and name == suffix[1:])) and pport in ("", port):
            return True
    return False


@dataclass(frozen=True)
class Egress:
    """How the cluster's traffic leaves it: outboundType (None: AKS's default loadBalancer) and
    the proxy its pods are told to use."""

    outbound_type: str | None = None
    proxy: Proxy | None = None


def parse_egress(outbound_type: Any, config: Any) -> Egress:
    """networkProfile.outboundType and httpProxyConfig (types checked in rest_shapes.py)."""
    url = _get(config, "httpsProxy") or _get(config, "httpProxy")
    proxy = None
    if isinstance(url, str) and url and _get(config, "enabled") is not False:
        # The pod's NO_PROXY: effectiveNoProxy where Azure reports it, "a superset of noProxy and
        # values injected by AKS" (the ARM spec's ManagedClusterHTTPProxyConfig); else noProxy.
        # So a noProxy of just `*` never reaches a pod as the whole value.
        no_proxy = _get(config, "effectiveNoProxy") or _get(config, "noProxy") or ()
        proxy = Proxy(url, tuple(str(e) for e in no_proxy), bool(_get(config, "trustedCa")))
    return Egress(outbound_type if isinstance(outbound_type, str) else None, proxy)


def proxy_rule(egress: Egress, job_egress: bool) -> tuple[str, int] | None:
    """The address and port the Job's NetworkPolicy must allow for its download to reach the
    proxy, where the Job downloads through it and it has an address."""
    proxy = egress.proxy
    if not job_egress or proxy is None or proxy.script_bypasses(MIRROR_HOST) or proxy.cidr is None or proxy.port is None:
        return None
    return proxy.cidr, proxy.port


def from_docker_hub(image: str) -> bool:
    """Whether a reference names Docker Hub: no registry host before its first `/` (a `.`, a `:`
    or localhost), or one of Docker Hub's own."""
    first, _, rest = image.partition("/")
    if not rest or not ("." in first or ":" in first or first == "localhost"):
        return True
    return first.lower() in DOCKER_HUB


def _pull_line(job: MnistJobConfig, cluster: str, egress: Egress, proxy: Proxy) -> tuple[list[str], list[str]]:
    """Where a node behind the proxy pulls the proof's image: AKS sets the proxy on the nodes too
    (learn.microsoft.com/azure/aks/http-proxy). A warning where the outbound type is closed and
    the image is Docker Hub's."""
    image, hub = job.image, from_docker_hub(job.image)
    host = DOCKER_HUB[2] if hub else image.partition("/")[0].lower()
    where = f"from Docker Hub ({host})" if hub else f"from {host}"
    how = f"directly (its noProxy leaves {host} out)" if proxy.node_bypasses(host) else f"through the proxy {proxy.shown}"
    said = f"proof: the nodes of cluster {cluster} pull mnistJob.image {image} {where} {how}"
    closed = CLOSED.get((egress.outbound_type or "").lower())
    need = "the proxy must let it through" if not proxy.node_bypasses(host) else "the way out must let it through"
    if not hub:
        return [f"{said}; {need}"], []
    if closed is None:
        return [f"{said}; {need}, or {REGISTRY}"], []
    return [], [
        f"{said}, with outboundType {closed}: {need}, or {REGISTRY}; otherwise the pod waits in ImagePullBackOff until the Job's deadline"
    ]


def lines(job: MnistJobConfig, cluster: str, egress: Egress, policy_enforced: bool) -> tuple[list[str], list[str]]:
    """(what a preview says of the proof's way out of the cluster, what it warns of)."""
    if not job.enabled:
        return [], []
    if egress.proxy is not None:
        pulled, pull_warned = _pull_line(job, cluster, egress, egress.proxy)
        infos, warned = _proxy_lines(job, cluster, egress.proxy, policy_enforced)
        return infos + pulled, warned + pull_warned
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
        'deadline (docs/proof.md, "Timings")'
    ]


def _proxy_lines(job: MnistJobConfig, cluster: str, proxy: Proxy, policy_enforced: bool) -> tuple[list[str], list[str]]:
    said = f"proof: cluster {cluster} tells its pods to use the proxy {proxy.shown} (httpProxyConfig; AKS sets HTTPS_PROXY in every pod)"
    if not job.egress:
        return [f"{said}; the Job downloads nothing (mnistJob.egress false)"], []
    if proxy.script_bypasses(MIRROR_HOST):
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
            f"{said}: {proxy.unnamed}, so the Job's policy (DNS, and "
            f"TCP 443 outside the private ranges) may not let the download reach it; add a NetworkPolicy in namespace "
            f"{job.namespace} that allows the proxy's address and port to the pods labelled app=mnist-proof, or {DRAWN}"
        )
    if proxy.trusted_ca:
        warnings.append(
            f"{said}: its trustedCa is installed on the nodes, not in the Job's image, so a proxy that inspects TLS fails the "
            f"download's certificate check (PROOF FAILED: cannot download ... CERTIFICATE_VERIFY_FAILED); then {DRAWN}"
        )
    return infos, warnings
