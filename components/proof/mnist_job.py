"""Guide steps 8-9: the MNIST Job that proves a GPU is schedulable and works: the guide's
`samples-tf-mnist-demo.yaml` plus the GPU pool's toleration and restartPolicy Never, running the
shipped proof/train_mnist.py in PyTorch's image (or the guide's), hardened (deciding/workloads/hardening.py).
Why each field, and what the images need: docs/design/guide-and-azure.md, "The proof Job" and the
Job's bullets; docs/proof.md; docs/design/security.md."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pulumi
import pulumi_kubernetes as k8s

from components.catalog import proof_names
from components.cluster.cluster import InCluster
from components.gpu_stack import pod_hardening as hardening
from components.gpu_stack.network_policy import network_policy
from components.pools.gpu_pool import AGENT_POOL_LABEL
from components.pools.placement import on_pools
from components.proof import proof_watch as watch_resource
from components.proof.job_deadline import BACKOFF_LIMIT, duration_seconds
from components.proof.watch_live import ClusterRef
from components.proof.watch_verdict import SPEC_ANNOTATION, WatchFacts

JOB_NAME = proof_names.GUIDE_JOB
# The component's type token: the first link of its children's URNs (the watch's status URN).
MNIST_JOB_TYPE = "aks-gpu:kubernetes:MnistJob"
# The shipped proof's Job, and where its script is mounted.
PROOF_JOB_NAME = proof_names.SCRIPT_JOB
SCRIPT = Path(__file__).resolve().parents[2] / "proof" / "train_mnist.py"
SCRIPT_DIR = "/opt/aks-gpu"
# pulumi-kubernetes skips its await logic for a resource with this annotation set to "true".
SKIP_AWAIT_ANNOTATION = "pulumi.com/skipAwait"
# A Job that Failed stays Failed, and every later `up` would fail at once awaiting it again; with
# this annotation the next `up` replaces a Job that is not ready. Only on the awaited Job: an
# un-awaited one may still be running (docs/design/lifecycle.md, "The MNIST Job", has the sources).
REPLACE_UNREADY_ANNOTATION = "pulumi.com/replaceUnready"

# A UID of 10000 or more cannot collide with a user of the node (Checkov CKV_K8S_40).
RUN_AS_USER = 10001
SCRATCH = "/tmp"
# TensorFlow 1.4 on one GPU; the host side of the CUDA context dominates memory. Each limit
# adds one of the GPU resource its pool offers (MnistRun.gpu_resource).
RESOURCES = ({"cpu": "500m", "memory": "2Gi"}, {"cpu": "2", "memory": "4Gi"})
# PyTorch loads cuBLAS and cuDNN (about 2 GiB of libraries) and holds MNIST (0.2 GiB) on the
# host before it moves to the GPU; the CPU limit lets the first steps' host work run.
SCRIPT_RESOURCES = ({"cpu": "1", "memory": "2Gi"}, {"cpu": "4", "memory": "6Gi"})
# The user has no home directory in the image; CUDA keeps its JIT cache under $HOME/.nv.
ENV = {"HOME": SCRATCH, "CUDA_CACHE_PATH": f"{SCRATCH}/.nv"}
SCRIPT_ENV = {**ENV, "PYTHONUNBUFFERED": "1", "PYTHONDONTWRITEBYTECODE": "1"}


def job_egress(proxy: tuple[str, int] | None) -> tuple[k8s.networking.v1.NetworkPolicyEgressRuleArgs, ...]:
    """Where a proof Job may connect: the cluster's DNS (AKS runs CoreDNS in kube-system, label
    k8s-app=kube-dns), HTTPS to the internet (the MNIST mirror; the private ranges of RFC 1918
    stay closed), and the cluster's HTTP proxy, which may sit in a private range
    (components/cluster/cluster_egress.py)."""
    net = k8s.networking.v1

    def rule(peer: k8s.networking.v1.NetworkPolicyPeerArgs, *ports: tuple[str, int]) -> k8s.networking.v1.NetworkPolicyEgressRuleArgs:
        return net.NetworkPolicyEgressRuleArgs(to=[peer], ports=[net.NetworkPolicyPortArgs(protocol=p, port=n) for p, n in ports])

    dns = net.NetworkPolicyPeerArgs(
        namespace_selector=k8s.meta.v1.LabelSelectorArgs(match_labels={"kubernetes.io/metadata.name": "kube-system"}),
        pod_selector=k8s.meta.v1.LabelSelectorArgs(match_labels={"k8s-app": "kube-dns"}),
    )
    internet = net.NetworkPolicyPeerArgs(
        ip_block=net.IPBlockArgs(cidr="0.0.0.0/0", except_=["10.0.0.0/8", "172.16.0.0/12", "192.168.0.0/16"])
    )
    proxied = [rule(net.NetworkPolicyPeerArgs(ip_block=net.IPBlockArgs(cidr=proxy[0])), ("TCP", proxy[1]))] if proxy else []
    return (rule(dns, ("UDP", 53), ("TCP", 53)), rule(internet, ("TCP", 443)), *proxied)


def spec_hash(spec: k8s.batch.v1.JobSpecArgs) -> str:
    """sha256 of the Job's spec as plain JSON: the un-awaited Job's name carries its first 8
    characters, the awaited Job's SPEC_ANNOTATION all of it, by which its watch knows the Job
    this `up` declared from one an earlier `up` left."""
    return hashlib.sha256(json.dumps(_plain(spec), sort_keys=True).encode()).hexdigest()


def _plain(value: Any) -> Any:
    """A typed pulumi-kubernetes input as plain data (every value here is a plain value)."""
    if isinstance(value, dict):
        return {k: _plain(v) for k, v in value.items() if v is not None}
    if isinstance(value, (list, tuple)):
        return [_plain(v) for v in value]
    if hasattr(type(value), "_pulumi_input_type"):
        return _plain(vars(value))
    return value


@dataclass(frozen=True)
class MnistRun:
    """One Job, proving one GPU pool, or one capacity group's pools."""

    #: The pool's name (a group's: the group's), which the Job's name carries.
    pool_name: str
    #: What the pod tolerates: the pool's taints (a group's: each of its pools').
    gpu_tolerations: Sequence[k8s.core.v1.TolerationArgs] = field(default_factory=tuple)
    #: How long `pulumi up` waits for the Job to complete (job_deadline.job_timeout).
    create_timeout: str = "30m"
    #: What must exist before the Job can run, by name among MnistJob's `after`: its GPU pool(s)
    #: by pool name, what installs their GPU stack by its management mode, the capacity expander.
    after: Sequence[str] = field(default_factory=tuple)
    #: Pin the Job to its pool (nodeSelector on AKS's agentpool label). The guide's one pool
    #: in a cluster of its own is the only GPU pool there, and its Job stays the guide's.
    pin: bool = False
    #: The guide's names (`<component>-job`, samples-tf-mnist-demo); otherwise both carry the pool's name.
    guide_names: bool = True
    #: The Job's `activeDeadlineSeconds` (job_deadline.job_deadline), strictly under create_timeout; None: none.
    deadline_seconds: int | None = None
    #: What the pool offers: nvidia.com/gpu, or a used pool's nvidia.com/mig-<slice> (components/gpu_stack/used_pool_gpus.py).
    gpu_resource: str = "nvidia.com/gpu"
    #: The pool's node count is the cluster autoscaler's: its watch waits for a node to be added
    #: and reads the autoscaler's events (components/proof/watch_verdict.py).
    autoscaled: bool = False
    #: the pools this Job may land on, in the team's order; empty: `(pool_name,)`
    accepted_pools: Sequence[str] = field(default_factory=tuple)
    #: A capacity group's Job (gpuGroups): `pool_name` is the group's name, and the pod requires
    #: AKS's agentpool label In accepted_pools (node affinity), not one pool's nodeSelector.
    group: bool = False

    def __post_init__(self) -> None:
        if self.deadline_seconds is not None and not 0 < self.deadline_seconds < duration_seconds(self.create_timeout):
            raise ValueError(
                f"the Job's deadline ({self.deadline_seconds} s) must be under `pulumi up`'s wait for it "
                f"({self.create_timeout}), or the Job's own reason never reaches the user"
            )


@dataclass(frozen=True)
class ProofScript:
    """The shipped script the Jobs run in the image's python (proof/train_mnist.py)."""

    max_seconds: int
    min_accuracy: float
    source: str = field(default_factory=lambda: SCRIPT.read_text())

    @property
    def config_map_name(self) -> str:
        """`mnist-proof-<hash>`: a new script is a new, immutable ConfigMap, and so a change of
        the Jobs' pod template, which replaces them (they train again with it)."""
        return f"{PROOF_JOB_NAME}-{hashlib.sha256(self.source.encode()).hexdigest()[:8]}"


@dataclass(frozen=True)
class MnistJobArgs:
    """The proof (mnistJob): its namespace, egress policy and script, and one Job per run; the
    cluster and what the Jobs wait for are MnistJob's `cluster` and `after` arguments."""

    #: The Jobs' image (mnistJob.image).
    image: str
    #: Training steps (mnistJob.maxSteps).
    max_steps: int
    #: One Job per GPU pool in no capacity group, and one per group.
    runs: Sequence[MnistRun]
    #: The namespace this component creates for the Jobs (the guide's lands in `default`).
    namespace: str = "gpu-workloads"
    #: False: `pulumi up` returns as soon as the Jobs are created.
    wait_for_completion: bool = True
    #: False: no watch beside an awaited Job, pulumi-kubernetes' await alone decides (a run that
    #: cannot declare Pulumi dynamic resources: the package, components/environment/dynamic_host.py).
    watch: bool = True
    #: Set: the Jobs run this script; None: the image's own entrypoint, the guide's way.
    script: ProofScript | None = None
    #: False: the pods may reach nothing, and the script trains on digits it draws.
    egress: bool = True
    #: The cluster's HTTP proxy, (CIDR, port), which AKS tells the pods to use for HTTPS
    #: (components/cluster/cluster_egress.py proxy_rule); None: none, or not an address.
    proxy: tuple[str, int] | None = None
    #: Annotations that mark the stack's namespace in a cluster it shares
    #: (components/gpu_stack/cluster_objects.py STACK_ANNOTATION); none in a cluster it creates.
    marks: Mapping[str, str] = field(default_factory=dict)
    #: Each GPU pool's vmSize, by pool name: the watch of a Job of several pools says which served.
    vm_sizes: Mapping[str, str] = field(default_factory=dict)

    @property
    def job_name(self) -> str:
        return proof_names.job_base(self.script is not None)

    @property
    def labels(self) -> dict[str, str]:
        return {"app": self.job_name}


def job_spec(args: MnistJobArgs, run: MnistRun) -> k8s.batch.v1.JobSpecArgs:
    """The guide's Job spec, with the GPU pool's tolerations, the security baseline, a smoke
    test's backoffLimit and a deadline; pinned to the pool where the cluster has others."""
    return k8s.batch.v1.JobSpecArgs(
        backoff_limit=BACKOFF_LIMIT,
        active_deadline_seconds=run.deadline_seconds,
        template=k8s.core.v1.PodTemplateSpecArgs(
            metadata=k8s.meta.v1.ObjectMetaArgs(labels=args.labels),
            spec=k8s.core.v1.PodSpecArgs(
                automount_service_account_token=False,
                security_context=hardening.pod_security_context(RUN_AS_USER),
                containers=[container(args, run.gpu_resource)],
                volumes=volumes(args),
                # Never: each try is a pod of its own, and a failed one stays with its log; with
                # OnFailure the Job controller deletes the pod at the backoffLimit (job_deadline.py).
                restart_policy="Never",
                # Pinned to its pool where the cluster has others; a capacity group's pod on any of
                # its pools, by AKS's agentpool label In the list, which the cluster autoscaler's
                # template node carries (kubernetes/autoscaler@55c37cd5 cloudprovider/azure/
                # azure_template.go processVMSSTemplate; docs/gpu.md, "Capacity groups").
                node_selector={AGENT_POOL_LABEL: run.pool_name} if run.pin and not run.group else None,
                affinity=on_pools(run.accepted_pools) if run.group else None,
                tolerations=list(run.gpu_tolerations) or None,
            ),
        ),
    )


def container(args: MnistJobArgs, gpu_resource: str = "nvidia.com/gpu") -> k8s.core.v1.ContainerArgs:
    """The guide's container: its image with `--max_steps`; or the shipped script in the
    image's python, with what it is told to prove. Either asks for one `gpu_resource`."""
    scratch = k8s.core.v1.VolumeMountArgs(name="scratch", mount_path=SCRATCH)
    if args.script is None:
        command, arguments, env, (requests, limits), mounts = None, ["--max_steps", str(args.max_steps)], ENV, RESOURCES, [scratch]
    else:
        command = ["python", f"{SCRIPT_DIR}/{SCRIPT.name}"]
        arguments = script_arguments(args.script, args.max_steps, args.egress)
        env, (requests, limits) = SCRIPT_ENV, SCRIPT_RESOURCES
        mounts = [scratch, k8s.core.v1.VolumeMountArgs(name="proof", mount_path=SCRIPT_DIR, read_only=True)]
    resources = hardening.resources(requests, {**limits, gpu_resource: "1"})
    return k8s.core.v1.ContainerArgs(
        name=args.job_name,
        image=args.image,
        command=command,
        args=arguments,
        image_pull_policy=pull_policy(args.image),
        env=[k8s.core.v1.EnvVarArgs(name=k, value=v) for k, v in env.items()],
        resources=resources,
        security_context=hardening.container_security_context(),
        volume_mounts=mounts,
        # The status message pulumi-kubernetes prints for a failed container: the script's last
        # line (it writes /dev/termination-log), else the log's last 80 lines (docs/proof.md).
        termination_message_policy="FallbackToLogsOnError",
    )


def pull_policy(image: str) -> str:
    """IfNotPresent for an image pinned by digest, which cannot change (the registry is then never
    asked again), Always for one named by tag, which can (Checkov CKV_K8S_15); docs/design/proof.md,
    "Pull policy"."""
    return "IfNotPresent" if hardening.pinned_by_digest(image) else "Always"


def script_arguments(script: ProofScript, max_steps: int, egress: bool) -> list[str]:
    """The command line of proof/train_mnist.py (its argparse flags; a test holds them together)."""
    flags = {
        "--max-steps": str(max_steps),
        "--max-seconds": str(script.max_seconds),
        "--min-accuracy": f"{script.min_accuracy:g}",
        "--data": "mnist" if egress else "synthetic",
        "--data-dir": f"{SCRATCH}/mnist",
    }
    return [part for flag in flags.items() for part in flag]


def volumes(args: MnistJobArgs) -> list[k8s.core.v1.VolumeArgs]:
    scratch = k8s.core.v1.VolumeArgs(name="scratch", empty_dir=k8s.core.v1.EmptyDirVolumeSourceArgs(size_limit="1Gi"))
    if args.script is None:
        return [scratch]
    # 0444: the script is read, never run as a file (the command is `python <script>`).
    source = k8s.core.v1.ConfigMapVolumeSourceArgs(name=args.script.config_map_name, default_mode=0o444)
    return [scratch, k8s.core.v1.VolumeArgs(name="proof", config_map=source)]


@dataclass(frozen=True)
class JobOutputs:
    job: k8s.batch.v1.Job
    name: pulumi.Output[str]
    namespace: pulumi.Output[str]
    #: The command that shows the training log (the guide's `kubectl logs`).
    logs_command: pulumi.Output[str]
    #: The Job's URN, for `pulumi up --replace` after it has Failed.
    urn: pulumi.Output[str]
    #: The Job's watch, where `pulumi up` waits for the Job and the run declares one (MnistJobArgs.watch); None otherwise.
    watch: watch_resource.ProofWatch | None = None
    #: The command that prints the last proof's line, which the watch keeps in a ConfigMap that
    #: outlives the Job (`kubectl get configmap <job>-result ...`); None without a watch.
    result_command: pulumi.Output[str] | None = None


class MnistJob(pulumi.ComponentResource):
    """The Jobs' namespace and egress policy, and one MNIST Job per GPU pool."""

    namespace: k8s.core.v1.Namespace
    network_policy: k8s.networking.v1.NetworkPolicy
    #: The proof script every Job mounts; None when the Jobs run the image's own entrypoint.
    script: k8s.core.v1.ConfigMap | None
    #: Per GPU pool name, and per capacity group's name (a group's pools have no Job of their own).
    jobs: dict[str, JobOutputs]

    def __init__(
        self,
        name: str,
        args: MnistJobArgs,
        *,
        cluster: InCluster,
        after: Mapping[str, pulumi.Resource | None] | None = None,
        opts: pulumi.ResourceOptions | None = None,
    ) -> None:
        """`after`: what a run's Job may wait for, by the names its `after` lists (None: nothing there)."""
        super().__init__(MNIST_JOB_TYPE, name, None, opts)
        self._name, self._cluster, self._after = name, cluster, after or {}
        on_cluster = cluster.options(self)
        self.namespace = k8s.core.v1.Namespace(
            f"{name}-ns", metadata=k8s.meta.v1.ObjectMetaArgs(name=args.namespace, annotations=dict(args.marks) or None), opts=on_cluster
        )
        self.network_policy = network_policy(
            f"{name}-netpol",
            f"{args.job_name}-egress",
            self.namespace.metadata.name,
            args.labels,
            egress=job_egress(args.proxy) if args.egress else (),
            opts=on_cluster,
        )
        self.script = None if args.script is None else self._ship_script(args.script)
        #: The provider hosts the Jobs' watches run in, WATCHES_PER_HOST a host (_watch_host).
        self.watch_hosts: list[pulumi.ProviderResource] = []
        self._watches = 0
        self.jobs = {run.pool_name: self._create_job(args, run) for run in args.runs}
        self.register_outputs({pool: out.name for pool, out in self.jobs.items()})

    def _ship_script(self, script: ProofScript) -> k8s.core.v1.ConfigMap:
        """The proof script, as the ConfigMap every Job mounts."""
        return k8s.core.v1.ConfigMap(
            f"{self._name}-script",
            metadata=k8s.meta.v1.ObjectMetaArgs(name=script.config_map_name, namespace=self.namespace.metadata.name),
            data={SCRIPT.name: script.source},
            # Its name carries the script's hash: a new script is a new object, created before the
            # old one is deleted (docs/design/lifecycle.md, "The MNIST Job").
            immutable=True,
            opts=self._cluster.options(self),
        )

    def _create_job(self, args: MnistJobArgs, run: MnistRun) -> JobOutputs:
        spec = job_spec(args, run)
        annotations: dict[str, str] = {}
        if args.wait_for_completion:
            annotations[REPLACE_UNREADY_ANNOTATION] = "true"
            # An annotation is metadata, which pulumi-kubernetes changes in place: of a Job's
            # metadata only `.metadata.name` and `.metadata.namespace` force a replacement
            # (pulumi-kubernetes@94977969 provider/pkg/provider/diff.go forceNewProperties,
            # metadataForceNewProperties), so a Job that trained before it carried one is not
            # trained again for it.
            annotations[SPEC_ANNOTATION] = spec_hash(spec)
        else:
            annotations[SKIP_AWAIT_ANNOTATION] = "true"
        suffix = "" if run.guide_names else f"-{run.pool_name}"
        # An un-awaited Job's name carries its spec's hash: with skipAwait pulumi-kubernetes does
        # not wait for the old Job's deletion, and a new one of the same name would race it
        # (docs/design/lifecycle.md, "The MNIST Job"); autonaming's random suffix would be unknown
        # to the offline render, this name is known at preview.
        owner, digest = None if run.guide_names else run.pool_name, None if args.wait_for_completion else spec_hash(spec)
        plain_name = proof_names.job_name(args.job_name, owner, digest)
        # What the Job waits for, and its watch too (never the Job: _watch says why).
        waits = [r for r in (self._after.get(n) for n in run.after) if r is not None]
        before = [*self._cluster.depends_on, *waits, self.network_policy, *([self.script] if self.script else [])]
        job = k8s.batch.v1.Job(
            f"{self._name}-job{suffix}",
            metadata=k8s.meta.v1.ObjectMetaArgs(
                name=plain_name,
                namespace=self.namespace.metadata.name,
                labels=args.labels,
                annotations=annotations or None,
            ),
            spec=spec,
            opts=pulumi.ResourceOptions(
                parent=self,
                provider=self._cluster.provider,
                deleted_with=self._cluster.deleted_with,
                depends_on=before,
                custom_timeouts=pulumi.CustomTimeouts(create=run.create_timeout, update=run.create_timeout),
            ),
        )
        watch = None
        if args.wait_for_completion and args.watch and self._cluster.ref is not None:
            watch = self._watch(
                args, self._cluster.ref, run, f"{self._name}-watch{suffix}", plain_name, annotations[SPEC_ANNOTATION], before
            )
        name, namespace = job.metadata.name, job.metadata.namespace
        result = (
            f"kubectl get configmap {proof_names.result_name(plain_name)} --namespace {args.namespace} --output jsonpath='{{.data.line}}'"
        )
        return JobOutputs(
            job=job,
            name=name,
            namespace=namespace,
            logs_command=pulumi.Output.concat("kubectl logs --namespace ", namespace, " job/", name),
            # For `pulumi up --replace <URN>`: an un-awaited Job, or a Complete one, trains
            # again only so (docs/proof.md).
            urn=job.urn,
            watch=watch,
            # The last proof's line from the watch's ConfigMap, after the next `up` has deleted the Job.
            result_command=None if watch is None else pulumi.Output.from_input(result),
        )

    def _watch(
        self, args: MnistJobArgs, cluster: ClusterRef, run: MnistRun, name: str, job: str, digest: str, before: list[Any]
    ) -> watch_resource.ProofWatch:
        """The Job's watch: a sibling with the Job's own dependencies and not the Job, so the engine
        runs its create beside the Job's create-and-await; it watches as long as `pulumi up` waits
        for the Job, and says so on its own row, by its own URN (child_urn)."""
        facts = WatchFacts(
            namespace=args.namespace,
            job_name=job,
            pool_name=run.pool_name,
            spec_hash=digest,
            autoscaled=run.autoscaled,
            image=args.image,
            max_steps=args.max_steps,
            accepted_pools=tuple(run.accepted_pools),
            # Only a Job of several pools is told the sizes: a Job of one keeps today's inputs,
            # and its size is its pool's (outputs.py served_by).
            vm_sizes={p: args.vm_sizes[p] for p in run.accepted_pools if p in args.vm_sizes} if len(run.accepted_pools) > 1 else {},
        )
        return watch_resource.ProofWatch(
            name,
            cluster=cluster,
            facts=facts,
            namespace=self.namespace.metadata.name,
            seconds=duration_seconds(run.create_timeout),
            status_urn=watch_resource.child_urn(MNIST_JOB_TYPE, watch_resource.TYPE, name),
            opts=pulumi.ResourceOptions(
                parent=self, deleted_with=self._cluster.deleted_with, depends_on=before, provider=self._watch_host()
            ),
        )

    def _watch_host(self) -> pulumi.ProviderResource:
        """The provider host the next watch runs in: a new one every WATCHES_PER_HOST watches, so no
        watch holds a host's last thread, and none shares the managed pool's (HOST_WORKERS)."""
        if self._watches % watch_resource.WATCHES_PER_HOST == 0:
            host = pulumi.ProviderResource(
                watch_resource.DYNAMIC_PACKAGE, f"{self._name}-watch-host-{len(self.watch_hosts)}", {}, pulumi.ResourceOptions(parent=self)
            )
            self.watch_hosts.append(host)
        self._watches += 1
        return self.watch_hosts[-1]
