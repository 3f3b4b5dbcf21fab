"""What an existing cluster runs in Kubernetes, read before anything is declared: its namespaces
and DaemonSets (what SAVE_COMMAND prints), checked member by member (a saved file is untrusted),
which DaemonSets are NVIDIA device plugins or the GPU Operator's, and on which pools their pods
can land, from what Azure says of each pool, never from the nodes. A selector on a label Azure
does not tell is "may land there": never two device plugins on one node beats a false all-clear.
What it means for this stack: components/gpu_stack/cluster_object_checks.py."""

from __future__ import annotations

import json
import operator
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from components.cluster.cluster_facts import OWNER_TAG
from components.seam import saved_files
from components.seam.saved_files import OBJECT, OBJECTS, STRING, STRINGS, typed

# What marks the objects this stack made in a cluster it shares, `<project>/<stack>`, as the tag
# on its Azure pools. An annotation, not a label: a label's value is at most 63 characters of
# [A-Za-z0-9_.-] (Kubernetes "Labels and Selectors"), and a project or stack name may be 100.
STACK_ANNOTATION = OWNER_TAG
# NVIDIA's device plugin images, wherever mirrored: nvcr.io/nvidia/k8s-device-plugin
# (NVIDIA/k8s-device-plugin), mcr.microsoft.com/oss/nvidia/k8s-device-plugin (the guide's).
DEVICE_PLUGIN_IMAGE = "k8s-device-plugin"
# The GPU Operator's operands run on the nodes it labels `nvidia.com/gpu.deploy.<operand>=true`
# (NVIDIA/gpu-operator@4ef16ed7 assets/state-device-plugin/0500_daemonset.yaml: nodeSelector
# nvidia.com/gpu.deploy.device-plugin), and each is owned by its ClusterPolicy (nvidia.com/v1).
OPERATOR_DEPLOY_LABEL = "nvidia.com/gpu.deploy."
OPERATOR_OWNER = "ClusterPolicy"
# The guide's DaemonSet (nvidia-device-plugin-ds.yaml: metadata.name and spec.selector).
GUIDE_DAEMONSET = "nvidia-device-plugin-daemonset"
GUIDE_SELECTOR = {"name": "nvidia-device-plugin-ds"}
# AKS labels every node with its pool's name (azure-aks-docs articles/aks/use-labels.md), and GPU
# pools are Linux (kubernetes.io/os, a well-known label the kubelet sets).
AGENT_POOL_LABEL = "kubernetes.azure.com/agentpool"
OS_LABEL = "kubernetes.io/os"
# Taints a pod must tolerate to be scheduled or to stay (Kubernetes "Taints and Tolerations").
REPELLING = ("NoSchedule", "NoExecute")
# The one command that saves the list (preflight.kubernetesFile), with the managedFields kubectl
# leaves out since 1.21 unless asked (kubernetes/kubernetes#96878), as a live read gets them.
SAVE_COMMAND = "kubectl get namespaces,daemonsets --all-namespaces --show-managed-fields --output json"
SAVED = f"what `{SAVE_COMMAND}` prints: a List of Namespaces and DaemonSets"
# With every namespace's ConfigMaps: whether a cluster the stack created has the priority
# expander's ConfigMap already (priority_config_map.py).
SAVE_WITH_CONFIG_MAPS = "kubectl get namespaces,daemonsets,configmaps --all-namespaces --show-managed-fields --output json"
# AKS always runs DaemonSets in kube-system: a saved list with none there was saved without
# --all-namespaces (docs/existing-cluster.md, "What the cluster runs in Kubernetes", sources).
SYSTEM_NAMESPACE = "kube-system"
_TERMS = ("affinity", "nodeAffinity", "requiredDuringSchedulingIgnoredDuringExecution", "nodeSelectorTerms")


class Malformed(ValueError):
    """The list is not what the command prints; the text names the item and the member."""


@dataclass(frozen=True)
class Namespace:
    name: str
    annotations: Mapping[str, str] = field(default_factory=dict)
    #: The object as read, for what adopting it changes (components/ownership/adoption.py).
    item: Mapping[str, Any] = field(default_factory=dict, compare=False, repr=False)


@dataclass(frozen=True)
class DaemonSet:
    namespace: str
    name: str
    annotations: Mapping[str, str] = field(default_factory=dict)
    images: tuple[str, ...] = ()
    selector: Mapping[str, str] = field(default_factory=dict)
    node_selector: Mapping[str, str] = field(default_factory=dict)
    tolerations: tuple[Mapping[str, Any], ...] = ()
    #: Required node affinity's nodeSelectorTerms (ORed), each its matchExpressions (ANDed); None: none.
    terms: tuple[tuple[Mapping[str, Any], ...], ...] | None = None
    owners: tuple[str, ...] = ()
    #: spec.selector.matchExpressions (a selector the guide's does not have).
    selector_expressions: tuple[Mapping[str, Any], ...] = ()
    item: Mapping[str, Any] = field(default_factory=dict, compare=False, repr=False)

    @property
    def where(self) -> str:
        return f"DaemonSet {self.namespace}/{self.name}"

    @property
    def device_plugin(self) -> bool:
        return any(DEVICE_PLUGIN_IMAGE in image for image in self.images)

    @property
    def gpu_operator(self) -> bool:
        keys = [*self.node_selector, *(e.get("key", "") for term in self.terms or () for e in term)]
        return OPERATOR_OWNER in self.owners or any(str(k).startswith(OPERATOR_DEPLOY_LABEL) for k in keys)


@dataclass(frozen=True)
class Seen:
    namespaces: Mapping[str, Namespace]
    daemon_sets: tuple[DaemonSet, ...]


@dataclass(frozen=True)
class PoolNodes:
    """One pool of the cluster as a DaemonSet's scheduling sees its nodes, from Azure."""

    name: str
    #: AKS's agentpool label, and the pool's nodeLabels.
    labels: Mapping[str, str]
    #: nodeTaints as Azure writes them, "key=value:Effect".
    taints: tuple[str, ...] = ()
    gpu: bool = True
    #: What this stack puts on the pool that serves nvidia.com/gpu: "device-plugin" (its
    #: DaemonSet), "gpu-operator", "aks-managed" (AKS, asked by this stack), or None.
    stack_plugin: str | None = None
    #: AKS runs the device plugin there itself (gpuProfile.nvidia.managementMode Managed).
    aks_plugin: bool = False
    #: The owner's pool, used as it is (`existing: use`): a plugin that serves it already is left to.
    used: bool = False


def pool_labels(name: str, node_labels: Mapping[str, str] | None = None) -> dict[str, str]:
    return {AGENT_POOL_LABEL: name, OS_LABEL: "linux", **(node_labels or {})}


def _item_problem(item: dict[str, Any]) -> str | None:
    meta = item.get("metadata")
    if not isinstance(meta, dict) or not isinstance(meta.get("name"), str):
        return "metadata.name is not a string"
    if problem := typed(meta, {"namespace": STRING, "annotations": OBJECT, "managedFields": OBJECTS, "ownerReferences": OBJECTS}):
        return f"metadata.{problem}"
    kind = item.get("kind")
    if kind not in ("ConfigMap", "DaemonSet"):  # adopting reads a Namespace's spec too (components/ownership/adoption.py)
        return typed(item, {"spec": OBJECT})
    if not isinstance(meta.get("namespace"), str):
        return "metadata.namespace is not a string"
    if kind == "ConfigMap":  # `data` maps keys to strings (k8s.io/api core/v1 ConfigMap, `Data map[string]string`)
        data = item.get("data")
        if data is not None and not (isinstance(data, dict) and all(isinstance(v, str) for v in data.values())):
            return "data is not an object of strings"
        return None
    spec = _at(item, "spec")
    pod = _at(spec, "template", "spec")
    checks = (
        ("spec", spec, {"selector": OBJECT, "template": OBJECT}),
        ("spec.selector", _at(spec, "selector") or {}, {"matchLabels": OBJECT, "matchExpressions": OBJECTS}),
        ("spec.template.spec", pod, {"containers": OBJECTS, "initContainers": OBJECTS, "nodeSelector": OBJECT}),
        ("spec.template.spec", pod, {"tolerations": OBJECTS, "affinity": OBJECT}),
    )
    for where, value, kinds in checks:
        if not isinstance(value, dict):
            return f"{where} is not an object"
        if problem := typed(value, kinds):
            return f"{where}.{problem}"
    for container in [*(pod.get("containers") or []), *(pod.get("initContainers") or [])]:
        if not isinstance(container.get("image"), str):
            return f"a container's image is {json.dumps(container.get('image'))[:40]}, not a string"
        # What the device plugin is told (components/gpu_stack/used_pool_gpus.py strategy_of).
        if problem := typed(container, {"command": STRINGS, "args": STRINGS, "env": OBJECTS}):
            return f"a container's {problem}"
    if any(not isinstance(v, str) for v in (pod.get("nodeSelector") or {}).values()):
        return "spec.template.spec.nodeSelector has a value that is not a string"
    return _terms_problem(_at(pod, *_TERMS))


def _terms_problem(terms: Any) -> str | None:
    where = "spec.template.spec.affinity's nodeSelectorTerms"
    if terms is None:
        return None
    if not (isinstance(terms, list) and all(isinstance(t, dict) for t in terms)):
        return f"{where} is not a list of objects"
    for term in terms:
        expressions = term.get("matchExpressions") or []
        if not (isinstance(expressions, list) and all(isinstance(e, dict) for e in expressions)):
            return f"{where} has matchExpressions that are not a list of objects"
        if any(typed(e, {"key": STRING, "operator": STRING, "values": STRINGS}) for e in expressions):
            return f"{where} has an expression whose key, operator or values are not strings"
    return None


def _at(value: Any, *path: str) -> Any:
    for key in path:
        value = value.get(key) if isinstance(value, dict) else None
    return value


def parse(doc: Any) -> Seen:
    """The cluster's namespaces and DaemonSets; raises Malformed naming what is wrong."""
    if not isinstance(doc, dict) or not isinstance(doc.get("items"), list):
        raise Malformed(f"expected {SAVED}, found {type(doc).__name__ if not isinstance(doc, dict) else 'no items list'}")
    namespaces: dict[str, Namespace] = {}
    daemon_sets = []
    for index, item in enumerate(doc["items"]):
        if problem := "not an object" if not isinstance(item, dict) else _item_problem(item):
            raise Malformed(f"item {index}: {problem}; expected {SAVED}")
        meta = item["metadata"]
        annotations = {str(k): str(v) for k, v in (meta.get("annotations") or {}).items()}
        if item.get("kind") == "Namespace":
            namespaces[meta["name"]] = Namespace(meta["name"], annotations, item=item)
        elif item.get("kind") == "DaemonSet":
            pod, terms = _at(item, "spec", "template", "spec"), _at(item, "spec", "template", "spec", *_TERMS)
            daemon_sets.append(
                DaemonSet(
                    namespace=meta["namespace"],
                    name=meta["name"],
                    annotations=annotations,
                    images=tuple(c["image"] for c in [*(pod.get("containers") or []), *(pod.get("initContainers") or [])]),
                    selector=dict(_at(item, "spec", "selector", "matchLabels") or {}),
                    node_selector=dict(pod.get("nodeSelector") or {}),
                    tolerations=tuple(pod.get("tolerations") or ()),
                    terms=None if terms is None else tuple(tuple(t.get("matchExpressions") or ()) for t in terms),
                    owners=tuple(str(o.get("kind")) for o in meta.get("ownerReferences") or []),
                    selector_expressions=tuple(_at(item, "spec", "selector", "matchExpressions") or ()),
                    item=item,
                )
            )
    return Seen(namespaces, tuple(sorted(daemon_sets, key=lambda d: (d.namespace, d.name))))


def read_saved(key: str, path: Path) -> dict[str, Any]:
    """The saved list (`aks-gpu:preflight.kubernetesFile`), or one line naming the key and the file."""
    doc = saved_files.read_json(key, path, SAVED)
    try:
        seen = parse(doc)
    except Malformed as why:
        raise saved_files.refused(key, path, str(why)) from None
    if not any(d.namespace == SYSTEM_NAMESPACE for d in seen.daemon_sets):
        found = f"{len(seen.daemon_sets)} DaemonSet(s), none in {SYSTEM_NAMESPACE}" if seen.daemon_sets else "no DaemonSet"
        target = saved_files.shown(path) if len(saved_files.shown(path)) <= 120 else "<file>"
        message = (
            f"an incomplete list: {found}, though AKS runs its own DaemonSets in {SYSTEM_NAMESPACE} on every node (kube-proxy or "
            "Cilium, the CSI node drivers): saved without --all-namespaces, it cannot tell which DaemonSets the cluster runs; "
            f"save it again with `{SAVE_COMMAND} > {target}`"
        )
        raise saved_files.refused(key, path, message)
    return doc


class NotListed(LookupError):
    """The list was saved without that namespace's ConfigMaps."""


def listed_config_map(doc: Any, namespace: str, name: str) -> dict[str, Any] | None:
    """The ConfigMap `namespace`/`name` of a parsed list, or None where the list has the namespace's
    ConfigMaps and not that one. None in the namespace means saved without them: kube-controller-manager
    publishes `kube-root-ca.crt` into every namespace (kubernetes/kubernetes@e0a566e7
    pkg/controller/certificates/rootcacertpublisher/publisher.go, syncNamespace)."""
    items = [i for i in doc.get("items") or [] if isinstance(i, dict) and i.get("kind") == "ConfigMap"]
    there = [i for i in items if isinstance(i.get("metadata"), dict) and i["metadata"].get("namespace") == namespace]
    if not there:
        raise NotListed(f"it lists no ConfigMap in {namespace}: saved without them")
    return next((i for i in there if i["metadata"].get("name") == name), None)


def check_saved(kubernetes_file: str | None) -> None:
    """Refused in a preview and a deployment alike, though only the offline render reads it."""
    if kubernetes_file:
        read_saved("aks-gpu:preflight.kubernetesFile", Path(kubernetes_file))


@dataclass(frozen=True)
class Landing:
    #: "yes", "no" or "maybe".
    answer: str
    why: str = ""


def _tolerates(tolerations: Sequence[Mapping[str, Any]], taint: str) -> bool:
    head, _, effect = taint.rpartition(":")
    key, _, value = head.partition("=")
    for t in tolerations:
        if t.get("effect") not in (None, "", effect):
            continue
        if t.get("operator") == "Exists":
            if not t.get("key") or t.get("key") == key:
                return True
        elif t.get("key") == key and (t.get("value") or "") == value:
            return True
    return False


def _int64(text: str) -> int | None:
    """`text` as Go's strconv.ParseInt(text, 10, 64) reads it: a sign, ASCII digits (not
    str.isdigit's "²"), within 64 bits; None where it fails."""
    found = re.fullmatch(r"([+-]?)0*([0-9]+)", text)
    if found is None or len(found.group(2)) > 19:
        return None
    number = int(found.group(1) + found.group(2))
    return number if -(2**63) <= number < 2**63 else None


def _compared(value: str, values: list[str], compare: Callable[[int, int], bool]) -> bool:
    # Kubernetes compares a Gt or Lt only when it has one value and both it and the node's label
    # read as strconv.ParseInt(s, 10, 64); otherwise the requirement does not match
    # (kubernetes/apimachinery@2a9a9331 pkg/labels/selector.go `Requirement.Matches`).
    given, have = (_int64(values[0]) if len(values) == 1 else None), _int64(value)
    return given is not None and have is not None and compare(have, given)


_OPERATORS: dict[str, Callable[[str, list[str]], bool]] = {
    "In": lambda value, values: value in values,
    "NotIn": lambda value, values: value not in values,
    "Exists": lambda value, values: True,
    "DoesNotExist": lambda value, values: False,
    "Gt": lambda value, values: _compared(value, values, operator.gt),
    "Lt": lambda value, values: _compared(value, values, operator.lt),
}


def _expression(expression: Mapping[str, Any], labels: Mapping[str, str]) -> str:
    key, matches = expression.get("key", ""), _OPERATORS.get(str(expression.get("operator")))
    if key not in labels or matches is None:
        return "maybe"
    return "yes" if matches(labels[key], [str(v) for v in expression.get("values") or []]) else "no"


def lands(daemon_set: DaemonSet, pool: PoolNodes) -> Landing:
    """Whether the DaemonSet's pods can run on the pool's nodes: every NoSchedule or
    NoExecute taint tolerated, its nodeSelector and required node affinity met."""
    untolerated = [t for t in pool.taints if t.rpartition(":")[2] in REPELLING and not _tolerates(daemon_set.tolerations, t)]
    if untolerated:
        return Landing("no", f"it does not tolerate {untolerated[0]}")
    unknown = []
    for key, value in daemon_set.node_selector.items():
        if key not in pool.labels:
            unknown.append(key)
        elif pool.labels[key] != value:
            return Landing("no", f"its nodeSelector asks {key}={value}")
    if daemon_set.terms is not None:
        answers = [[_expression(e, pool.labels) for e in term] for term in daemon_set.terms]
        if not any("no" not in term for term in answers):
            return Landing("no", "its required node affinity excludes the pool")
        if not any(all(a == "yes" for a in term) for term in answers):
            unknown += [str(e.get("key")) for term in daemon_set.terms for e in term if e.get("key") not in pool.labels]
    if unknown:
        return Landing("maybe", f"it selects on {', '.join(sorted(set(unknown)))}, a node label Azure does not tell of the pool")
    return Landing("yes")
