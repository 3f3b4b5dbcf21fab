"""Each component on its own, built inside the test under the mock engine."""

from __future__ import annotations

import base64

import pulumi
import pulumi_kubernetes as k8s

from components.cluster import cluster_facts
from components.cluster.cluster import GpuCluster, GpuClusterArgs, InCluster
from components.cluster.existing_cluster import ExistingCluster, ExistingClusterArgs
from components.cluster.settings import SystemPoolConfig
from components.gpu_stack.device_plugin import NvidiaDevicePlugin, NvidiaDevicePluginArgs
from components.pools.gpu_pool import GpuPool, GpuPoolArgs
from components.pools.settings import GpuPoolConfig
from components.proof.mnist_job import MnistJob, MnistJobArgs, MnistRun
from tools.azure_mocks import MOCK_USER_TOKEN, existing_cluster
from tools.mock_engine import Secret, run_under_mocks

TOLERATION = k8s.core.v1.TolerationArgs(key="team", operator="Equal", value="ml", effect="NoSchedule")


def children_of(run, component_type: str) -> list:
    parent = run.one(component_type).urn
    return [r for r in run.resources if r.parent == parent]


def a_cluster() -> GpuCluster:
    return GpuCluster(
        "c",
        GpuClusterArgs(location="westeurope", resource_group_name="rg1", cluster_name="aks1", system_pool=SystemPoolConfig()),
    )


def a_pool(cluster, **pool) -> GpuPool:
    config = GpuPoolConfig(**{"vm_size": "Standard_NC4as_T4_v3", **pool})
    return GpuPool(
        f"p-{config.name}",
        GpuPoolArgs(pool=config, resource_group_name="rg1", cluster_name="aks1", subscription_id="sub"),
        cluster=cluster,
    )


def test_gpu_cluster_alone_parents_its_children_and_names_them_after_itself():
    run = run_under_mocks(a_cluster)
    kids = children_of(run, "aks-gpu:azure:GpuCluster")
    assert sorted(r.name for r in kids) == ["c-aks", "c-k8s", "c-rg"]
    assert run.of_type("azure-native:containerservice:AgentPool") == []


def test_a_gpu_pool_goes_into_the_cluster_it_is_given_and_waits_for_it():
    run = run_under_mocks(lambda: a_pool(a_cluster(), name="t4"))
    pool = run.one("azure-native:containerservice:AgentPool")
    assert pool.parent == run.one("aks-gpu:azure:GpuPool").urn
    assert (pool.inputs["resourceGroupName"], pool.inputs["resourceName"], pool.inputs["agentPoolName"]) == ("rg1", "aks1", "t4")
    assert run.one("azure-native:containerservice:ManagedCluster").urn in pool.dependencies


def test_an_existing_cluster_is_read_not_registered_and_its_pools_depend_on_nothing_of_it():
    facts = cluster_facts.parse(existing_cluster(name="aks1", resource_group="rg1"), "rg1")
    kubeconfig = base64.b64encode(b"apiVersion: v1\nkind: Config\nusers: []\n").decode()
    run = run_under_mocks(lambda: a_pool(ExistingCluster("e", ExistingClusterArgs(facts, kubeconfig)), name="t4"))
    assert run.of_type("azure-native:containerservice:ManagedCluster") == []
    assert run.of_type("azure-native:resources:ResourceGroup") == []
    pool = run.one("azure-native:containerservice:AgentPool")
    assert pool.dependencies == [] and pool.inputs["resourceName"] == "aks1"
    assert [r.type for r in children_of(run, "aks-gpu:azure:ExistingCluster")] == ["pulumi:providers:kubernetes"]


def an_existing_cluster(**signed_in) -> ExistingCluster:
    facts = cluster_facts.parse(existing_cluster(name="aks1", resource_group="rg1"), "rg1")
    kubeconfig = base64.b64encode(b"apiVersion: v1\nkind: Config\nusers: []\n").decode()
    return ExistingCluster("e", ExistingClusterArgs(facts, kubeconfig, **signed_in))


def a_proof_on(cluster: ExistingCluster) -> MnistJob:
    return MnistJob("m", MnistJobArgs(image="mnist:gpu", max_steps=7, runs=[MnistRun("gpu")]), cluster=cluster.objects)


def test_an_existing_cluster_given_a_consumers_provider_declares_none_and_its_objects_use_the_consumers():
    run = run_under_mocks(lambda: a_proof_on(an_existing_cluster(provider=k8s.Provider("consumers", kubeconfig="apiVersion: v1"))))
    [consumers] = run.of_type("pulumi:providers:kubernetes")  # the consumer's alone
    assert consumers.name == "consumers"
    assert children_of(run, "aks-gpu:azure:ExistingCluster") == []
    kubernetes_objects = [r for r in run.resources if r.type.startswith("kubernetes:")]
    assert len(kubernetes_objects) == 3 and {r.provider for r in kubernetes_objects} == {consumers.urn}


def test_an_existing_cluster_given_a_consumers_kubeconfig_signs_its_own_provider_in_with_it_as_a_secret():
    run = run_under_mocks(lambda: a_proof_on(an_existing_cluster(kubeconfig="apiVersion: v1\nkind: Config\n# the consumer's\n")))
    [provider] = run.of_type("pulumi:providers:kubernetes")
    assert provider.name == "e-k8s" and provider.parent == run.one("aks-gpu:azure:ExistingCluster").urn
    sent = provider.inputs["kubeconfig"]
    assert isinstance(sent, Secret) and sent.value == "apiVersion: v1\nkind: Config\n# the consumer's\n"
    assert {r.provider for r in run.resources if r.type.startswith("kubernetes:")} == {provider.urn}


def test_gpu_cluster_kubeconfig_is_secret_and_decoded():
    seen = {}

    def body():
        cluster = a_cluster()
        seen["secret"] = cluster.kubeconfig.is_secret()
        cluster.kubeconfig.apply(lambda text: seen.setdefault("text", text))

    run_under_mocks(body)
    assert pulumi.runtime.sync_await._sync_await(seen["secret"]) is True
    assert MOCK_USER_TOKEN in seen["text"]


def test_device_plugin_alone_uses_the_given_provider_namespace_and_tolerations():
    def body():
        provider = k8s.Provider("p", kubeconfig="apiVersion: v1")
        NvidiaDevicePlugin(
            "dp",
            NvidiaDevicePluginArgs(namespace="nvidia", image="nvidia/k8s-device-plugin:1.11", gpu_tolerations=[TOLERATION]),
            cluster=InCluster(provider, None, ()),
        )

    run = run_under_mocks(body)
    kids = children_of(run, "aks-gpu:kubernetes:NvidiaDevicePlugin")
    assert sorted(r.name for r in kids) == ["dp-ds", "dp-netpol", "dp-ns"]
    assert {r.provider for r in kids} == {run.one("pulumi:providers:kubernetes").urn}
    ds = run.one("kubernetes:apps/v1:DaemonSet").inputs
    assert ds["metadata"]["namespace"] == "nvidia"
    assert ds["spec"]["template"]["spec"]["tolerations"][-1] == {"key": "team", "operator": "Equal", "value": "ml", "effect": "NoSchedule"}
    assert ds["spec"]["template"]["spec"]["containers"][0]["image"] == "nvidia/k8s-device-plugin:1.11"


def test_mnist_job_alone_waits_for_what_it_is_given():
    def body():
        provider = k8s.Provider("p", kubeconfig="apiVersion: v1")
        gate = k8s.core.v1.ConfigMap("gate", metadata={"name": "gate"}, opts=pulumi.ResourceOptions(provider=provider))
        MnistJob(
            "m",
            MnistJobArgs(image="mnist:gpu", max_steps=7, runs=[MnistRun("gpu", create_timeout="45m", after=("gpu",))]),
            cluster=InCluster(provider, None, ()),
            after={"gpu": gate},
        )

    run = run_under_mocks(body)
    job = run.one("kubernetes:batch/v1:Job")
    assert run.one("kubernetes:core/v1:ConfigMap").urn in job.dependencies
    assert job.options["customTimeouts"] == {"create": "45m", "update": "45m"}
    assert job.inputs["spec"]["template"]["spec"]["containers"][0]["args"] == ["--max_steps", "7"]
    assert "tolerations" not in job.inputs["spec"]["template"]["spec"]


def test_mnist_job_alone_runs_one_pinned_job_per_pool_in_one_namespace():
    def body():
        provider = k8s.Provider("p", kubeconfig="apiVersion: v1")
        runs = [MnistRun(pool, pin=True, guide_names=False) for pool in ("t4", "a100")]
        MnistJob("m", MnistJobArgs(image="mnist:gpu", max_steps=7, runs=runs), cluster=InCluster(provider, None, ()))

    run = run_under_mocks(body)
    jobs = {r.name: r.inputs for r in run.of_type("kubernetes:batch/v1:Job")}
    assert sorted(jobs) == ["m-job-a100", "m-job-t4"]
    assert jobs["m-job-t4"]["metadata"]["name"] == "samples-tf-mnist-demo-t4"
    assert jobs["m-job-t4"]["spec"]["template"]["spec"]["nodeSelector"] == {"kubernetes.azure.com/agentpool": "t4"}
    assert len(run.of_type("kubernetes:core/v1:Namespace")) == 1
