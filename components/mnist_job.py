"""Guide steps 8-9: the TensorFlow MNIST Job that proves a GPU is schedulable and works.

The Job is the guide's `samples-tf-mnist-demo.yaml`, field for field, plus the toleration
for the GPU pool's taint (as today's guide adds). pulumi-kubernetes waits for a Job to
reach `Complete` (batch/v1 Job resource docs: it fails at once on `Failed`), so a finished
`pulumi up` is itself the guide's step 8 check: a pod that asked for `nvidia.com/gpu: 1`
was scheduled and trained to the end.

No `ttlSecondsAfterFinished`: Kubernetes would delete the finished Job, and the next
`pulumi up` would see it missing and train again. Changing the pod template (image,
maxSteps) replaces the Job, which trains again: that is the point of changing them.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Optional, Sequence

import pulumi
import pulumi_kubernetes as k8s

if TYPE_CHECKING:
    from components.config import GpuPoolConfig

JOB_NAME = "samples-tf-mnist-demo"
LABELS = {"app": JOB_NAME}
# pulumi-kubernetes skips its await logic for a resource with this annotation set to "true".
SKIP_AWAIT_ANNOTATION = "pulumi.com/skipAwait"


def job_timeout(pool: "GpuPoolConfig") -> str:
    """How long `pulumi up` waits for the Job.

    30 minutes covers a running node: the multi-GB image pull and about 3 minutes of
    training (the guide). A pool that may have no node adds the autoscaler's scale-up, a
    GPU VM's provisioning and the driver install: 30 minutes more.
    """
    return "60m" if pool.can_scale_to_zero else "30m"


@dataclass(frozen=True)
class MnistJobArgs:
    provider: k8s.Provider
    image: str
    max_steps: int
    #: The guide's Job has no namespace, so it lands in `default`.
    namespace: str = "default"
    #: False: `pulumi up` returns as soon as the Job is created.
    wait_for_completion: bool = True
    #: How long `pulumi up` waits for the Job to complete: a cold GPU node, a multi-GB image
    #: pull and about 3 minutes of training (the guide's figure).
    create_timeout: str = "30m"
    gpu_tolerations: Sequence[k8s.core.v1.TolerationArgs] = field(default_factory=tuple)
    #: What must exist before the Job can run: the GPU pool and the device plugin.
    depends_on: Sequence[pulumi.Resource] = field(default_factory=tuple)


class MnistJob(pulumi.ComponentResource):
    job: k8s.batch.v1.Job
    job_name: pulumi.Output[str]
    job_namespace: pulumi.Output[str]
    #: The command that shows the training log (the guide's `kubectl logs`).
    logs_command: pulumi.Output[str]

    def __init__(self, name: str, args: MnistJobArgs, opts: Optional[pulumi.ResourceOptions] = None) -> None:
        super().__init__("aks-gpu:kubernetes:MnistJob", name, None, opts)

        annotations = None if args.wait_for_completion else {SKIP_AWAIT_ANNOTATION: "true"}
        self.job = k8s.batch.v1.Job(
            f"{name}-job",
            metadata=k8s.meta.v1.ObjectMetaArgs(
                name=JOB_NAME, namespace=args.namespace, labels=LABELS, annotations=annotations
            ),
            spec=k8s.batch.v1.JobSpecArgs(
                template=k8s.core.v1.PodTemplateSpecArgs(
                    metadata=k8s.meta.v1.ObjectMetaArgs(labels=LABELS),
                    spec=k8s.core.v1.PodSpecArgs(
                        containers=[
                            k8s.core.v1.ContainerArgs(
                                name=JOB_NAME,
                                image=args.image,
                                args=["--max_steps", str(args.max_steps)],
                                image_pull_policy="IfNotPresent",
                                resources=k8s.core.v1.ResourceRequirementsArgs(limits={"nvidia.com/gpu": "1"}),
                            )
                        ],
                        restart_policy="OnFailure",
                        tolerations=list(args.gpu_tolerations) or None,
                    ),
                ),
            ),
            opts=pulumi.ResourceOptions(
                parent=self,
                provider=args.provider,
                depends_on=list(args.depends_on),
                custom_timeouts=pulumi.CustomTimeouts(create=args.create_timeout, update=args.create_timeout),
            ),
        )

        self.job_name = self.job.metadata.name
        self.job_namespace = self.job.metadata.namespace
        self.logs_command = pulumi.Output.concat(
            "kubectl logs --namespace ", self.job_namespace, " job/", self.job_name
        )
        self.register_outputs({"jobName": self.job_name, "jobNamespace": self.job_namespace})
