"""Clusters where the proof cannot pass as it is, said at preview (issue #46, items 2 and 3):
an existing cluster's HTTP proxy (the Job's NetworkPolicy lets it reach the proxy), an
outbound type with no way out (the image from the team's registry, the digits drawn), and a
pool used as it is whose device plugin runs MIG "mixed" (the Job asks for the slice it offers).
Each reads the guide's cluster (examples/guide-cluster/), its saved description and `kubectl
get` changed as a test says. What is said is the plan's, by a plain call in a preview and in a
deployment (`lines`), or the preview's run's own; what is declared (the Job's NetworkPolicy and
limits) is the whole program's run (`run`): in both for the first test, in a preview for the
others, since the rule and the slice come from the cluster's description and `kubectl get`
alone (cluster_egress, used_pool_gpus), read alike in both runs. What the proxy and the outbound
type make a run say is said in a preview alone: it comes from the plan's `egress` step
(cluster_egress.lines), which the run's mode never reaches; what a used pool's plugin makes it
say goes through preflight, where a deployment stops on what a preview warns of, so both."""

from __future__ import annotations

import copy
import dataclasses
import json
from pathlib import Path
from typing import Any

import pytest
from conftest import ROOT
from hypothesis import given, settings
from hypothesis import strategies as st
from support.plan import Lines, plan_infos, plan_warnings, planned_by

from components.catalog import gpu_sizes
from components.cluster import cluster_egress
from components.errors import AzureReadError, ConfigError, PreflightError
from components.gpu_stack.cluster_objects import parse
from components.gpu_stack.used_pool_gpus import UsedPoolGpus, _decide, strategy_of
from tools.azure_mocks import AzureMocks, OfflineReader
from tools.mock_engine import RecordingMonitor, run_program

EXAMPLE = ROOT / "examples" / "guide-cluster"
CLUSTER = json.loads((EXAMPLE / "cluster.json").read_text())
OBJECTS = json.loads((EXAMPLE / "kubernetes.json").read_text())
POLICY, JOB = "kubernetes:networking.k8s.io/v1:NetworkPolicy", "kubernetes:batch/v1:Job"
BOTH = [True, False]
ACR_IMAGE = "team.azurecr.io/pytorch/pytorch@sha256:7b324d212a4450795b49edba9949b7cdc72429148a64e974334bfe5774d51385"


def saved(tmp_path: Path, cluster: dict[str, Any] | None, objects: dict[str, Any] | None) -> dict[str, str]:
    """The cluster's description and `kubectl get` saved, as the stack's preflight names them."""
    (tmp_path / "cluster.json").write_text(json.dumps(cluster or CLUSTER))
    (tmp_path / "kubernetes.json").write_text(json.dumps(objects or OBJECTS))
    return {"clusterFile": str(tmp_path / "cluster.json"), "kubernetesFile": str(tmp_path / "kubernetes.json")}


def run(tmp_path: Path, preview: bool, cluster: dict[str, Any] | None = None, objects: dict[str, Any] | None = None, **overrides):
    files = saved(tmp_path, cluster, objects)
    monitor = RecordingMonitor(AzureMocks())
    return run_program(
        "ml-prod", overrides={"preflight": files, **overrides}, monitor=monitor, preview=preview, stack_file=EXAMPLE / "Pulumi.ml-prod.yaml"
    )


def lines(
    tmp_path: Path, preview: bool, cluster: dict[str, Any] | None = None, objects: dict[str, Any] | None = None, **overrides
) -> Lines:
    """What `run` with the same arguments says before it declares anything, by a plain call on
    its plan (support/plan.py): every line the run says (only an AKS-managed pool, which the
    guide's cluster has none of, warns from a component)."""
    files = saved(tmp_path, cluster, objects)
    plan = planned_by(OfflineReader(), "ml-prod", preview, stack_file=EXAMPLE / "Pulumi.ml-prod.yaml", preflight=files, **overrides)
    return Lines(plan_warnings(plan), plan_infos(plan))


def with_cluster(**members: Any) -> dict[str, Any]:
    cluster = copy.deepcopy(CLUSTER)
    for path, value in members.items():
        at = cluster
        *parents, last = path.split("__")
        for parent in parents:
            at = at[parent]
        at[last] = value
    return cluster


def egress_rules(done) -> list[dict[str, Any]]:
    return done.one(POLICY, "mnist-proof-egress").inputs["spec"]["egress"]


def said(done: Any) -> str:
    return "\n".join(done.infos + done.warnings)


# The one run a test of what is declared makes (the module's docstring says why one).
PREVIEW = True


def declared_and_said(tmp_path: Path, cluster: dict[str, Any] | None = None, objects: dict[str, Any] | None = None, **overrides):
    """The preview's run, and what each run says: the preview's own lines, the deployment's
    from its plan (`lines`)."""
    done = run(tmp_path, PREVIEW, cluster, objects, **overrides)
    return done, (done, lines(tmp_path, not PREVIEW, cluster, objects, **overrides))


# --------------------------------------------------------------------------- a proxy


@pytest.mark.parametrize("preview", BOTH)
def test_a_proxy_at_a_private_address_is_let_through_the_jobs_network_policy(tmp_path, preview):
    cluster = with_cluster(httpProxyConfig={"httpProxy": "http://10.224.0.5:3128", "noProxy": ["localhost", "10.0.0.0/8"]})
    done = run(tmp_path, preview, cluster)
    assert egress_rules(done)[-1] == {"to": [{"ipBlock": {"cidr": "10.224.0.5/32"}}], "ports": [{"protocol": "TCP", "port": 3128}]}
    assert "the Job's NetworkPolicy allows TCP 3128 to 10.224.0.5/32" in "\n".join(done.infos)
    assert "proxy" not in "\n".join(done.warnings)


def test_the_https_proxy_wins_and_a_proxy_without_a_port_is_reached_on_443(tmp_path):
    cluster = with_cluster(httpProxyConfig={"httpProxy": "http://10.224.0.5:3128", "httpsProxy": "http://10.224.0.6"})
    rule = egress_rules(run(tmp_path, PREVIEW, cluster))[-1]
    assert rule["to"][0]["ipBlock"] == {"cidr": "10.224.0.6/32"}
    assert rule["ports"] == [{"protocol": "TCP", "port": 443}]


def test_a_proxy_named_by_host_name_is_a_warning_naming_what_to_allow_or_to_set(tmp_path):
    cluster = with_cluster(httpProxyConfig={"httpProxy": "http://proxy.corp.example:8080"})
    done = run(tmp_path, PREVIEW, cluster)
    assert len(egress_rules(done)) == 2, "DNS and HTTPS to the internet, as without a proxy"
    warning = next(w for w in done.warnings if "proxy.corp.example" in w)
    assert "a NetworkPolicy cannot name" in warning and "aks-gpu:mnistJob.egress to false" in warning


def test_a_proxy_whose_no_proxy_leaves_the_mirror_out_needs_no_rule(tmp_path):
    cluster = with_cluster(httpProxyConfig={"httpProxy": "http://10.224.0.5:3128", "noProxy": [".googleapis.com"]})
    done = run(tmp_path, PREVIEW, cluster)
    assert len(egress_rules(done)) == 2
    assert "its noProxy leaves storage.googleapis.com out" in said(done)


# What AKS puts in NO_PROXY beside the owner's entries (effectiveNoProxy, "a superset of noProxy
# and values injected by AKS"), as an `az aks show` of a proxied cluster lists them.
AKS_ADDED = [
    "konnectivity",
    "ml-prod-dns-1a2b3c4d.hcp.westeurope.azmk8s.io",
    "10.224.0.0/12",
    "localhost",
    "127.0.0.1",
    "169.254.169.254",
    "10.244.0.0/16",
    "10.0.0.0/16",
    "168.63.129.16",
]


def test_a_star_among_aks_entries_still_sends_the_download_through_the_proxy(tmp_path):
    """urllib bypasses everything only when NO_PROXY is `*` and nothing else; AKS adds its own
    entries to every pod's, so the Job's download still goes to the proxy, and its
    NetworkPolicy must let it reach it."""
    config = {"httpProxy": "http://10.224.0.5:3128", "noProxy": ["*"], "effectiveNoProxy": ["*", *AKS_ADDED]}
    cluster = with_cluster(httpProxyConfig=config)
    done = run(tmp_path, PREVIEW, cluster)
    assert egress_rules(done)[-1] == {"to": [{"ipBlock": {"cidr": "10.224.0.5/32"}}], "ports": [{"protocol": "TCP", "port": 3128}]}
    assert "leaves storage.googleapis.com out" not in said(done)


@pytest.mark.parametrize(
    "no_proxy, bypassed",
    [
        (["*"], True),
        (["*", "localhost"], False),
        (["*", *AKS_ADDED], False),
        (AKS_ADDED, False),
        ([".googleapis.com"], True),
        (["googleapis.com"], True),
        (["Storage.GoogleAPIs.com"], True),
        (["oogleapis.com"], False),
        (["*.googleapis.com"], False),
        (["172.217.0.0/16", "142.250.0.0/15"], False),
        ([" googleapis.com ", ""], True),
    ],
    ids=[
        "* alone",
        "* among others",
        "* among AKS's",
        "AKS's own",
        ".suffix",
        "suffix",
        "any case",
        "a suffix that is not after a dot",
        "*.suffix (AKS refuses it; urllib matches nothing)",
        "CIDRs (urllib reads them as names)",
        "spaces and empty entries",
    ],
)
def test_the_scripts_download_bypasses_the_proxy_as_urllib_decides(no_proxy, bypassed):
    proxy = cluster_egress.Proxy("http://10.224.0.5:3128", tuple(no_proxy))
    assert proxy.script_bypasses(cluster_egress.MIRROR_HOST) is bypassed


@pytest.mark.parametrize(
    "no_proxy, registry, bypassed",
    [
        (["*", *AKS_ADDED], "registry-1.docker.io", True),
        (AKS_ADDED, "registry-1.docker.io", False),
        (["10.0.0.0/8"], "10.1.2.3:5000", True),
        (["10.0.0.0/8"], "team.azurecr.io", False),
        (["10.1.2.3"], "10.1.2.3", True),
        ([".azurecr.io"], "team.azurecr.io", True),
        ([".azurecr.io"], "azurecr.io", False),
        (["azurecr.io"], "azurecr.io", True),
        (["*.azurecr.io"], "team.azurecr.io", True),
        (["team.azurecr.io:443"], "team.azurecr.io", True),
        (["team.azurecr.io:5000"], "team.azurecr.io", False),
        ([], "localhost:5000", True),
    ],
    ids=[
        "* among others",
        "AKS's own",
        "a CIDR holding the address",
        "a CIDR and a name",
        "an address",
        ".suffix: a subdomain",
        ".suffix: not the domain itself",
        "a domain: itself",
        "*.suffix",
        "the HTTPS port named",
        "another port",
        "localhost, never proxied",
    ],
)
def test_the_nodes_pull_bypasses_the_proxy_as_go_decides(no_proxy, registry, bypassed):
    """containerd pulls with Go's http.ProxyFromEnvironment, whose NO_PROXY rule differs from
    urllib's: `*` anywhere, CIDRs, ports, and `.suffix` for subdomains only."""
    proxy = cluster_egress.Proxy("http://10.224.0.5:3128", tuple(no_proxy))
    assert proxy.node_bypasses(registry) is bypassed


def test_a_proxy_with_its_own_ca_warns_that_the_jobs_image_does_not_trust_it(tmp_path):
    cluster = with_cluster(httpProxyConfig={"httpProxy": "http://10.224.0.5:3128", "trustedCa": "LS0tLS1CRUdJTi0tLS0t"})
    warning = next(w for w in lines(tmp_path, PREVIEW, cluster).warnings if "trustedCa" in w)
    assert "CERTIFICATE_VERIFY_FAILED" in warning and "mnistJob.egress to false" in warning


def test_a_disabled_proxy_or_a_job_without_egress_adds_no_rule(tmp_path):
    disabled = with_cluster(httpProxyConfig={"enabled": False, "httpProxy": "http://10.224.0.5:3128"})
    assert len(egress_rules(run(tmp_path, PREVIEW, disabled))) == 2
    enabled = with_cluster(httpProxyConfig={"httpProxy": "http://10.224.0.5:3128"})
    assert egress_rules(run(tmp_path, PREVIEW, enabled, mnistJob={"egress": False})) == []


def test_a_proxy_config_of_the_wrong_type_is_one_line_naming_the_member(tmp_path):
    cluster = with_cluster(httpProxyConfig={"httpProxy": "http://10.224.0.5:3128", "noProxy": "localhost"})
    with pytest.raises(ConfigError) as raised:
        lines(tmp_path, True, cluster)
    assert "aks-gpu:preflight.clusterFile" in str(raised.value) and "\n" not in str(raised.value)
    assert 'httpProxyConfig.noProxy is "localhost", not a list' in str(raised.value)


MALFORMED = ["http://[fd00::5:3128", "http://]proxy:3128", "http://10.224.0.5:99999", "http://:3128", "http://[not-an-address]:3128"]


@pytest.mark.parametrize("url", MALFORMED)
def test_a_malformed_proxy_url_is_one_line_naming_the_member_and_the_file(tmp_path, url):
    # A preview alone: the saved file is refused as it is read (cluster_facts.read_saved, by the
    # offline reader and by the plan's first step), before the run's mode decides anything.
    cluster = with_cluster(httpProxyConfig={"httpProxy": url})
    with pytest.raises(ConfigError) as raised:
        lines(tmp_path, True, cluster)
    said = str(raised.value)
    assert "aks-gpu:preflight.clusterFile" in said and "\n" not in said
    assert "httpProxyConfig.httpProxy is" in said and "not a proxy URL such as http://10.224.0.5:3128" in said


def test_a_malformed_proxy_url_in_azures_answer_stops_before_anything_is_registered():
    """The deployment's plan raises it; the preview's run, that nothing was registered before."""
    cluster = with_cluster(httpProxyConfig={"httpsProxy": "http://alice:s3cret@[fd00::5:3128"})
    with pytest.raises(AzureReadError) as raised:
        planned_by(OfflineReader(cluster=cluster), "ml-prod", not PREVIEW, stack_file=EXAMPLE / "Pulumi.ml-prod.yaml")
    said = str(raised.value)
    assert 'httpProxyConfig.httpsProxy is "http://***@[fd00::5:3128"' in said and "s3cret" not in said and "alice" not in said
    monitor = RecordingMonitor(AzureMocks(cluster=cluster))
    with pytest.raises(AzureReadError, match=r"httpProxyConfig.httpsProxy is \"http://\*\*\*@\[fd00::5:3128\""):
        run_program("ml-prod", monitor=monitor, preview=PREVIEW, stack_file=EXAMPLE / "Pulumi.ml-prod.yaml")
    assert monitor.registrations == []


def test_a_proxys_password_is_never_printed(tmp_path):
    for url in ("http://alice:s3cret@10.224.0.5:3128", "http://alice:s3cret@proxy.corp.example:8080"):
        done = lines(tmp_path, PREVIEW, with_cluster(httpProxyConfig={"httpProxy": url, "trustedCa": "LS0t"}))
        assert "s3cret" not in said(done) and "alice" not in said(done)
        assert "the proxy http://***@" in said(done)
    with pytest.raises(ConfigError) as raised:
        lines(tmp_path, PREVIEW, with_cluster(httpProxyConfig={"httpProxy": "http://alice:s3cret@[fd00::5:3128"}))
    assert "s3cret" not in str(raised.value) and "http://***@[fd00::5:3128" in str(raised.value)


def test_a_proxy_at_a_link_local_address_with_a_zone_gets_no_rule_kubernetes_would_refuse_and_is_said(tmp_path):
    cluster = with_cluster(httpProxyConfig={"httpProxy": "http://[fe80::5%eth0]:3128"})
    done = run(tmp_path, PREVIEW, cluster)
    assert len(egress_rules(done)) == 2, "no ipBlock with a zone: the API server refuses it (ValidateIPBlock)"
    warning = next(w for w in done.warnings if "fe80::5%eth0" in w)
    assert "an IPv6 address with a zone (%eth0)" in warning and "none is declared" in warning
    assert "aks-gpu:mnistJob.egress to false" in warning


def test_an_ipv4_mapped_proxy_address_gets_the_rule_of_the_ipv4_address_its_packets_carry(tmp_path):
    cluster = with_cluster(httpProxyConfig={"httpProxy": "http://[::ffff:10.224.0.5]:3128"})
    done = run(tmp_path, PREVIEW, cluster)
    assert egress_rules(done)[-1] == {"to": [{"ipBlock": {"cidr": "10.224.0.5/32"}}], "ports": [{"protocol": "TCP", "port": 3128}]}
    assert "allows TCP 3128 to 10.224.0.5/32" in said(done)


def test_a_proxy_host_with_a_nul_or_a_bidi_override_is_warned_of_escaped(tmp_path):
    done = lines(tmp_path, PREVIEW, with_cluster(httpProxyConfig={"httpProxy": "http://proxy\u202e\x00.corp:3128"}))
    warning = next(w for w in done.warnings if "a host name" in w)
    assert "proxy\\u202e\\x00.corp is a host name" in warning and "\u202e" not in warning and "\x00" not in warning


# --------------------------------------------------------------------------- the outbound type


def test_user_defined_routing_says_the_image_must_come_from_the_teams_registry_and_the_digits_be_drawn(tmp_path):
    done = lines(tmp_path, PREVIEW, with_cluster(networkProfile__outboundType="userDefinedRouting"))
    warning = next(w for w in done.warnings if "outboundType userDefinedRouting" in w)
    assert "az acr import" in warning and "aks-gpu:mnistJob.egress to false" in warning and "ImagePullBackOff" in warning


def test_a_proxy_with_user_defined_routing_says_the_node_pulls_docker_hubs_image_through_it_or_from_the_teams_registry(tmp_path):
    cluster = with_cluster(httpProxyConfig={"httpProxy": "http://10.224.0.5:3128"}, networkProfile__outboundType="userDefinedRouting")
    done = lines(tmp_path, PREVIEW, cluster)
    warning = next(w for w in done.warnings if "pull mnistJob.image" in w)
    assert "from Docker Hub (registry-1.docker.io) through the proxy http://10.224.0.5:3128" in warning
    assert "outboundType userDefinedRouting: the proxy must let it through" in warning and "az acr import" in warning
    assert "set mnistJob.image to the copy" in warning and "ImagePullBackOff" in warning


def test_a_proxy_with_the_image_in_the_teams_registry_says_where_it_is_pulled_without_a_warning(tmp_path):
    cluster = with_cluster(
        httpProxyConfig={"httpProxy": "http://10.224.0.5:3128", "noProxy": ["azurecr.io"]},
        networkProfile__outboundType="userDefinedRouting",
    )
    done = lines(tmp_path, PREVIEW, cluster, mnistJob={"image": ACR_IMAGE})
    assert not [w for w in done.warnings if "pull" in w]
    assert "pull mnistJob.image team.azurecr.io/pytorch/pytorch@sha256:7b32" in said(done)
    assert "from team.azurecr.io directly (its noProxy leaves team.azurecr.io out); the way out must let it through" in said(done)


def test_a_proxy_with_a_load_balancer_says_where_the_image_is_pulled_as_information(tmp_path):
    done = lines(tmp_path, PREVIEW, with_cluster(httpProxyConfig={"httpProxy": "http://10.224.0.5:3128"}))
    assert not [w for w in done.warnings if "pull" in w]
    info = next(i for i in done.infos if "pull mnistJob.image" in i)
    assert "through the proxy http://10.224.0.5:3128; the proxy must let it through, or copy it to your own registry" in info


def test_no_outbound_access_with_the_image_in_the_teams_registry_and_drawn_digits_is_only_said(tmp_path):
    done = lines(tmp_path, PREVIEW, with_cluster(networkProfile__outboundType="none"), mnistJob={"image": ACR_IMAGE, "egress": False})
    assert not [w for w in done.warnings if "outboundType" in w]
    assert "has outboundType none; the Job pulls team.azurecr.io/" in "\n".join(done.infos)


def test_no_outbound_access_with_the_image_in_the_teams_registry_still_asks_for_drawn_digits(tmp_path):
    done = lines(tmp_path, PREVIEW, with_cluster(networkProfile__outboundType="none"), mnistJob={"image": ACR_IMAGE})
    warning = next(w for w in done.warnings if "outboundType none" in w)
    assert "no way out to the internet" in warning and "az acr import" not in warning and "mnistJob.egress to false" in warning


def test_a_load_balancer_or_nat_gateway_says_nothing_of_the_way_out(tmp_path):
    for outbound in ("loadBalancer", "managedNATGateway"):
        assert "outboundType" not in said(lines(tmp_path, PREVIEW, with_cluster(networkProfile__outboundType=outbound)))


def test_docker_hub_is_an_image_with_no_registry_host_or_docker_hubs_own():
    assert cluster_egress.from_docker_hub("pytorch/pytorch:2.9.1") and cluster_egress.from_docker_hub("ubuntu")
    assert cluster_egress.from_docker_hub("docker.io/pytorch/pytorch@sha256:00")
    assert not cluster_egress.from_docker_hub(ACR_IMAGE) and not cluster_egress.from_docker_hub("nvcr.io/nvidia/pytorch:25.08-py3")
    assert not cluster_egress.from_docker_hub("localhost:5000/x") and not cluster_egress.from_docker_hub("localhost/x")


# --------------------------------------------------------------------------- MIG "mixed"


def mig_cluster(vm_size: str = "Standard_NC24ads_A100_v4") -> dict[str, Any]:
    cluster = copy.deepcopy(CLUSTER)
    pool = next(p for p in cluster["agentPoolProfiles"] if p["name"] == "gpunp")
    pool.update(vmSize=vm_size, gpuInstanceProfile="MIG1g")
    return cluster


def plugin_with(container: dict[str, Any]) -> dict[str, Any]:
    objects = copy.deepcopy(OBJECTS)
    plugin = next(i for i in objects["items"] if i["metadata"]["name"] == "nvidia-device-plugin-daemonset")
    plugin["spec"]["template"]["spec"]["containers"][0].update(container)
    return objects


def limits(done) -> dict[str, str]:
    return done.one(JOB).inputs["spec"]["template"]["spec"]["containers"][0]["resources"]["limits"]


def test_a_used_pool_whose_plugin_runs_mixed_gets_a_job_that_asks_for_its_mig_slice(tmp_path):
    objects = plugin_with({"env": [{"name": "MIG_STRATEGY", "value": "mixed"}]})
    done, both = declared_and_said(tmp_path, mig_cluster(), objects)
    assert limits(done)["nvidia.com/mig-1g.10gb"] == "1" and "nvidia.com/gpu" not in limits(done)
    for said_by in both:
        assert "runs MIG strategy mixed, which offers MIG1g slices only as nvidia.com/mig-1g.10gb: the Job asks for one" in said(said_by)


def test_the_plugins_flag_says_its_strategy_as_its_variable_does(tmp_path):
    done = run(tmp_path, PREVIEW, mig_cluster(), plugin_with({"args": ["--mig-strategy", "mixed"]}))
    assert "nvidia.com/mig-1g.10gb" in limits(done)


def test_a_used_pool_whose_plugin_runs_single_keeps_nvidia_com_gpu(tmp_path):
    objects = plugin_with({"env": [{"name": "MIG_STRATEGY", "value": "single"}]})
    done, both = declared_and_said(tmp_path, mig_cluster(), objects)
    assert limits(done)["nvidia.com/gpu"] == "1"
    for said_by in both:
        assert "mixed" not in said(said_by)


def test_a_strategy_from_a_config_file_is_a_warning_that_the_job_may_wait_pending(tmp_path):
    objects = plugin_with({"env": [{"name": "CONFIG_FILE", "value": "/config/config.yaml"}]})
    done, both = declared_and_said(tmp_path, mig_cluster(), objects)
    assert limits(done)["nvidia.com/gpu"] == "1"
    for said_by in both:
        assert any("config file or a ConfigMap" in w and "waits Pending" in w for w in said_by.warnings)


def test_the_plugins_strategy_is_its_flag_then_its_variable_then_none():
    def strategy(container: dict[str, Any]) -> str | None:
        seen = parse(plugin_with(container))
        return strategy_of(next(d for d in seen.daemon_sets if d.device_plugin))

    assert strategy({}) == "none"
    assert strategy({"args": ["--mig-strategy=Mixed"], "env": [{"name": "MIG_STRATEGY", "value": "single"}]}) == "mixed"
    assert strategy({"env": [{"name": "MIG_STRATEGY", "valueFrom": {"configMapKeyRef": {"name": "x", "key": "y"}}}]}) is None
    assert strategy({"args": ["--config-file=/c.yaml"]}) is None


def test_mixed_on_a_gpu_whose_slice_names_are_unknown_is_refused_naming_the_strategy():
    out = UsedPoolGpus()
    _decide(out, "aks-gpu:gpuPools.mig", "mig", "Standard_Unknown_v9", "MIG1g", "mixed", "DaemonSet gpu-resources/plugin")
    assert out.resources == {} and len(out.problems) == 1
    assert "runs MIG strategy mixed" in out.problems[0].message and "MIG_STRATEGY to single" in out.problems[0].message


def test_a_refused_mixed_pool_stops_a_deployment(tmp_path, monkeypatch):
    size = gpu_sizes.CATALOG["Standard_NC24ads_A100_v4"]
    monkeypatch.setitem(gpu_sizes.CATALOG, size.name, dataclasses.replace(size, gpu=dataclasses.replace(size.gpu, mig_slices=())))
    objects = plugin_with({"env": [{"name": "MIG_STRATEGY", "value": "mixed"}]})
    with pytest.raises(PreflightError, match="runs MIG strategy mixed"):
        lines(tmp_path, False, mig_cluster(), objects)


def test_a_used_aks_managed_pool_with_mig_strategy_mixed_gets_a_job_that_asks_for_its_slice(tmp_path):
    cluster = mig_cluster()
    pool = next(p for p in cluster["agentPoolProfiles"] if p["name"] == "gpunp")
    pool["gpuProfile"] = {"nvidia": {"managementMode": "Managed", "migStrategy": "Mixed"}}
    objects = copy.deepcopy(OBJECTS)
    objects["items"] = [i for i in objects["items"] if i["metadata"]["name"] != "nvidia-device-plugin-daemonset"]
    done, both = declared_and_said(tmp_path, cluster, objects)
    assert "nvidia.com/mig-1g.10gb" in limits(done)
    for said_by in both:
        assert "AKS's device plugin runs MIG strategy mixed" in said(said_by)


def test_a_used_pool_the_gpu_operator_serves_is_read_from_the_operators_plugin(tmp_path):
    cluster = mig_cluster()
    next(p for p in cluster["agentPoolProfiles"] if p["name"] == "gpunp")["gpuProfile"] = {"driver": "None"}
    objects = plugin_with({"env": [{"name": "MIG_STRATEGY", "value": "mixed"}]})
    operator = next(i for i in objects["items"] if i["metadata"]["name"] == "nvidia-device-plugin-daemonset")
    operator["metadata"].update(namespace="gpu-operator", ownerReferences=[{"kind": "ClusterPolicy", "name": "cluster-policy"}])
    operator["spec"]["template"]["spec"]["nodeSelector"] = {"nvidia.com/gpu.deploy.device-plugin": "true"}
    assert "nvidia.com/mig-1g.10gb" in limits(run(tmp_path, PREVIEW, cluster, objects))


@given(
    entries=st.lists(
        st.one_of(
            st.sampled_from(["*", "", " ", ".googleapis.com", "googleapis.com", "*.googleapis.com", "GOOGLEAPIS.COM", *AKS_ADDED]),
            st.text(alphabet="abcgo.*:/0123 ", max_size=12),
        ),
        max_size=5,
    ),
    host=st.sampled_from(["storage.googleapis.com", "storage.googleapis.com:443", "localhost", "10.1.2.3", "a:", "googleapis.com"]),
)
@settings(max_examples=300, derandomize=True, database=None, deadline=None)
def test_the_scripts_rule_is_cpythons_own(entries, host):
    """cluster_egress.urllib_bypasses is CPython's proxy_bypass_environment, read line for line
    (no module of the program imports urllib.request): the two agree on any NO_PROXY."""
    import urllib.request

    value = ",".join(entries)
    assert cluster_egress.urllib_bypasses(value, host) == bool(urllib.request.proxy_bypass_environment(host, {"no": value}))
    assert cluster_egress.urllib_bypasses("*", host), "the whole value `*`"


def test_a_host_with_an_empty_port_is_matched_without_its_colon_as_cpython_does():
    # Found by `make lowest`'s Hypothesis (6.100): urllib.parse._splitport("a:") is ("a", None).
    import urllib.request

    assert bool(urllib.request.proxy_bypass_environment("a:", {"no": "a"})) is True
    assert cluster_egress.urllib_bypasses("a", "a:") is True
