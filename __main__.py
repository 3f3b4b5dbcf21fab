"""aks-gpu: Microsoft's "Use GPUs for compute-intensive workloads on AKS", as one Pulumi program.

Read top to bottom, this is the guide's table of contents:
  config -> preflight -> resource group, cluster and GPU pool -> device plugin (or the GPU
  Operator) and GPU metrics -> MNIST Job -> outputs.
"""

import pulumi

from components import config, gpu_sizes, preflight
from components.cluster import GpuCluster, GpuClusterArgs
from components.dcgm_exporter import DcgmExporter, DcgmExporterArgs
from components.device_plugin import NvidiaDevicePlugin, NvidiaDevicePluginArgs
from components.gpu_operator import GpuOperator, GpuOperatorArgs
from components.mnist_job import MnistJob, MnistJobArgs, job_timeout
from components.outputs import gpu_metrics_location

# Parse and validate every setting, then check the subscription, before any resource is
# registered: a preview warns, a deployment stops.
cfg = config.load()
for warning in cfg.warnings:
    pulumi.log.warn(warning)
for warning in preflight.run(cfg, stack=pulumi.get_stack()):
    pulumi.log.warn(warning)

# Steps 1-3: resource group, AKS cluster with a GPU node pool, credentials.
cluster = GpuCluster(
    "gpu-cluster",
    GpuClusterArgs(
        location=cfg.location,
        resource_group_name=cfg.resource_group_name,
        cluster_name=cfg.cluster_name,
        kubernetes_version=cfg.kubernetes_version,
        system_pool=cfg.system_pool,
        gpu_pool=cfg.gpu_pool,
        access=cfg.access,
        network=cfg.network,
        upgrade=cfg.upgrade,
        tier=cfg.cluster_tier,
        protect=cfg.protect,
    ),
)

# Steps 4-5: the gpu-resources namespace and the NVIDIA device plugin DaemonSet, when this
# program manages the GPU stack; AKS (step 6's successor) or NVIDIA's GPU Operator otherwise:
# the guide warns against two device plugins. Then NVIDIA's DCGM exporter for GPU metrics.
gpu = cfg.gpu_pool
device_plugin = exporter = operator = None
if gpu.mode == "device-plugin":
    device_plugin = NvidiaDevicePlugin(
        "nvidia-device-plugin",
        NvidiaDevicePluginArgs(
            provider=cluster.provider,
            namespace=cfg.device_plugin.namespace,
            image=cfg.device_plugin.image,
            gpu_tolerations=cluster.gpu_tolerations,
            mig=gpu.mig_profile is not None,
        ),
    )
    if cfg.monitoring.gpu_metrics:
        exporter = DcgmExporter(
            "dcgm-exporter",
            DcgmExporterArgs(
                provider=cluster.provider,
                namespace=device_plugin.namespace_name,
                image=cfg.monitoring.dcgm_exporter_image,
                gpu_pool_name=gpu.name,
                gpu_tolerations=cluster.gpu_tolerations,
            ),
        )
elif gpu.mode == "gpu-operator":
    operator = GpuOperator(
        "gpu-operator",
        GpuOperatorArgs(
            provider=cluster.provider,
            namespace=cfg.gpu_operator.namespace,
            version=cfg.gpu_operator.version,
            gpu_metrics=cfg.monitoring.gpu_metrics,
            gpu_tolerations=cluster.gpu_tolerations,
            depends_on=[cluster.gpu_node_pool],
        ),
    )

# Steps 8-9: the MNIST training Job; `pulumi up` waits for it to complete.
job = None
if cfg.mnist_job.enabled:
    job = MnistJob(
        "mnist",
        MnistJobArgs(
            provider=cluster.provider,
            image=cfg.mnist_job.image,
            namespace=cfg.mnist_job.namespace,
            max_steps=cfg.mnist_job.max_steps,
            wait_for_completion=cfg.mnist_job.wait_for_completion,
            gpu_tolerations=cluster.gpu_tolerations,
            create_timeout=job_timeout(gpu),
            depends_on=[cluster.gpu_node_pool, *[c for c in (device_plugin, operator) if c is not None]],
        ),
    )

# Outputs: what was built, and the two commands a user types next.
pulumi.export("resourceGroupName", cluster.resource_group_name)
pulumi.export("clusterName", cluster.cluster_name)
pulumi.export("gpuPoolName", cluster.gpu_pool_name)
pulumi.export("gpuPoolVmSize", cluster.gpu_pool_vm_size)
pulumi.export("gpuPoolGeneration", cluster.gpu_pool_generation)
pulumi.export("gpuManagement", cluster.gpu_management)
pulumi.export("gpusPerNode", gpu_sizes.gpus_per_node(gpu.vm_size, gpu.mig_profile))
pulumi.export("gpuMetrics", gpu_metrics_location(gpu.mode, cfg.monitoring.gpu_metrics, exporter, operator))
if device_plugin is not None:
    pulumi.export("devicePluginNamespace", device_plugin.namespace_name)
pulumi.export("kubeconfig", cluster.kubeconfig)
pulumi.export("getCredentialsCommand", cluster.get_credentials_command)
if job is not None:
    pulumi.export("mnistJobName", job.job_name)
    pulumi.export("mnistJobNamespace", job.job_namespace)
    pulumi.export("jobLogsCommand", job.logs_command)
    pulumi.export("mnistJobUrn", job.job_urn)
