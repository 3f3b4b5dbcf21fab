"""The security baseline the Kubernetes components share, as plain `...Args` values: what makes a
pod pass the "restricted" Pod Security Standard where it can and Checkov's Kubernetes checks. What
a pod cannot pass is skipped in Checkov's own settings, security/checkov-kubernetes.yaml, with why:
no linter's annotation is written onto a cluster object, least of all onto an owner's it adopts."""

from __future__ import annotations

from collections.abc import Mapping

import pulumi_kubernetes as k8s


def pinned_by_digest(image: str) -> bool:
    return "@sha256:" in image


def pod_security_context(run_as_user: int | None = None) -> k8s.core.v1.PodSecurityContextArgs:
    """Seccomp RuntimeDefault for every container of the pod, and a non-root user if given."""
    return k8s.core.v1.PodSecurityContextArgs(
        seccomp_profile=k8s.core.v1.SeccompProfileArgs(type="RuntimeDefault"),
        run_as_non_root=True if run_as_user is not None else None,
        run_as_user=run_as_user,
        run_as_group=run_as_user,
    )


def container_security_context(add: list[str] | None = None) -> k8s.core.v1.SecurityContextArgs:
    """No privilege escalation, no Linux capabilities but those in `add`, a read-only root filesystem."""
    return k8s.core.v1.SecurityContextArgs(
        allow_privilege_escalation=False,
        capabilities=k8s.core.v1.CapabilitiesArgs(drop=["ALL"], add=add),
        read_only_root_filesystem=True,
    )


def resources(requests: Mapping[str, str], limits: Mapping[str, str]) -> k8s.core.v1.ResourceRequirementsArgs:
    return k8s.core.v1.ResourceRequirementsArgs(requests=dict(requests), limits=dict(limits))
