"""The security baseline the Kubernetes components share, as plain `...Args` values: what makes a
pod pass the "restricted" Pod Security Standard where it can and Checkov's Kubernetes checks, and
the `checkov.io/skip<N>` annotations that say on the object why a check cannot pass. Checkov reads
one check per annotation whose key contains `checkov.io/skip`, valued `<CHECK_ID>=<reason>`, split
on "=" (checkov/kubernetes/kubernetes_utils.py, get_skipped_checks)."""

from __future__ import annotations

from collections.abc import Mapping

import pulumi_kubernetes as k8s

SKIP_ANNOTATION_PREFIX = "checkov.io/skip"
# CKV_K8S_43 "Image should use digest".
IMAGE_DIGEST_CHECK = "CKV_K8S_43"


def checkov_skips(reasons: Mapping[str, str]) -> dict[str, str]:
    """`{check: reason}` -> `{"checkov.io/skip1": "CHECK=reason", ...}`, in the given order."""
    annotations = {}
    for number, (check, reason) in enumerate(reasons.items(), start=1):
        if "=" in reason or not reason.strip():
            raise ValueError(f"a Checkov skip needs a reason without '=': {check}={reason!r}")
        annotations[f"{SKIP_ANNOTATION_PREFIX}{number}"] = f"{check}={reason}"
    return annotations


def pinned_by_digest(image: str) -> bool:
    return "@sha256:" in image


def image_digest_skip(image: str, config_key: str) -> dict[str, str]:
    """A tag-pinned image cannot pass CKV_K8S_43; say so, and where to pin it. The defaults carry
    no digest: none can be checked against the registry from here, and a wrong one fails every pull."""
    if pinned_by_digest(image):
        return {}
    return {IMAGE_DIGEST_CHECK: f"the image is pinned by tag; set {config_key} to name@sha256 to pin a digest"}


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
