"""The names of the Kubernetes objects the proof declares, made here and only here (each pool's
or group's Job, and the ConfigMap its watch keeps the proof's last line in), and the limits
Kubernetes holds those names to (components/gpu_stack/settings.py checks every name a config makes)."""

from __future__ import annotations

#: The Job of the guide's image keeps the guide's name (samples-tf-mnist-demo.yaml); the
#: shipped script's is the proof's own.
GUIDE_JOB = "samples-tf-mnist-demo"
SCRIPT_JOB = "mnist-proof"
#: A Job `pulumi up` does not wait for carries this many hex digits of its spec's hash
#: (components/proof/mnist_job.py says why, where it calls `proof_names.job_name`).
SPEC_HASH_DIGITS = 8
#: A Job's name is a DNS subdomain (kubernetes pkg/apis/batch/validation ValidateJob:
#: ValidateReplicationControllerName, which is NameIsDNSSubdomain), but the API server copies it
#: into its pods' labels `job-name` and `batch.kubernetes.io/job-name` (pkg/registry/batch/job/
#: strategy.go generateSelector), and a label value is at most 63 characters (apimachinery
#: pkg/api/validate/content LabelValueMaxLength): "There's a 63-character limit on job names"
#: (kubernetes/kubernetes#50850).
JOB_NAME_MOST = 63
JOB_NAME_WHY = "Kubernetes copies a Job's name into its pods' job-name label, whose value is at most 63 characters"
#: A ConfigMap's name is a DNS subdomain (pkg/apis/core/validation ValidateConfigMapName,
#: NameIsDNSSubdomain): at most 253 characters (apimachinery IsDNS1123Subdomain).
SUBDOMAIN_MOST = 253
SUBDOMAIN_WHY = "a ConfigMap's name is a DNS subdomain, at most 253 characters"
RESULT_SUFFIX = "-result"
# A DNS-1123 label's characters (apimachinery dns1123LabelFmt, `[a-z0-9]([-a-z0-9]*[a-z0-9])?`).
_LABEL_CHARACTERS = frozenset("abcdefghijklmnopqrstuvwxyz0123456789-")


def job_base(runs_script: bool) -> str:
    return SCRIPT_JOB if runs_script else GUIDE_JOB


def job_name(base: str, owner: str | None = None, spec_hash: str | None = None) -> str:
    """`<base>`, the guide's one pool's Job; `<base>-<owner>`, a pool's or a capacity group's;
    then `-<8 hex digits>` of the spec, for a Job `pulumi up` does not wait for."""
    name = base if owner is None else f"{base}-{owner}"
    return name if spec_hash is None else f"{name}-{spec_hash[:SPEC_HASH_DIGITS]}"


def result_name(job: str) -> str:
    """The ConfigMap the watch keeps the last proof's outcome in, beside its Job: it outlives the
    Job, which the next `up` deletes with its pods (replaceUnready)."""
    return f"{job}{RESULT_SUFFIX}"


def subdomain_problem(name: str, most: int) -> str | None:
    """Why `name` is not a DNS subdomain of at most `most` characters (apimachinery
    IsDNS1123Subdomain: dot-separated labels of lowercase letters, digits and '-', each starting
    and ending with a letter or digit), or None."""
    if len(name) > most:
        return f"{len(name)} characters, over {most}"
    for label in name.split("."):
        if not label or not set(label) <= _LABEL_CHARACTERS or label[0] == "-" or label[-1] == "-":
            return "not lowercase letters, digits, '-' and '.', each part starting and ending with a letter or digit"
    return None
