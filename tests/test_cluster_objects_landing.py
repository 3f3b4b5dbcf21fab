"""Where a DaemonSet's pods land on the cluster's pools (components/gpu_stack/cluster_objects.py
`lands`), and a saved `kubectl get namespaces,daemonsets` list with any member changed: read,
or refused in one line."""

from __future__ import annotations

import os
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from support.kubernetes_objects import SKU_TOLERATION, guide_daemon_set, listed, namespace

from components.gpu_stack import cluster_objects
from components.gpu_stack.cluster_objects import DaemonSet, PoolNodes, lands

# --------------------------------------------------------------------------- where a DaemonSet's pods land


GPU_POOL = PoolNodes("gpu", cluster_objects.pool_labels("gpu"), ("sku=gpu:NoSchedule",), True, "device-plugin")


@pytest.mark.parametrize(
    ("daemon_set", "answer"),
    [
        (DaemonSet("a", "b", tolerations=({"operator": "Exists"},)), "yes"),
        (DaemonSet("a", "b", tolerations=({"key": "nvidia.com/gpu", "operator": "Exists", "effect": "NoSchedule"},)), "no"),
        (DaemonSet("a", "b", tolerations=(SKU_TOLERATION,), node_selector={"kubernetes.azure.com/agentpool": "other"}), "no"),
        (DaemonSet("a", "b", tolerations=(SKU_TOLERATION,), node_selector={"accelerator": "nvidia"}), "maybe"),
        (
            DaemonSet(
                "a",
                "b",
                tolerations=(SKU_TOLERATION,),
                terms=(({"key": "kubernetes.azure.com/agentpool", "operator": "In", "values": ["gpu"]},),),
            ),
            "yes",
        ),
        (
            DaemonSet(
                "a", "b", tolerations=(SKU_TOLERATION,), terms=(({"key": "kubernetes.io/os", "operator": "NotIn", "values": ["linux"]},),)
            ),
            "no",
        ),
    ],
    ids=[
        "tolerates everything",
        "not the sku taint",
        "another pool",
        "a label Azure does not tell",
        "affinity to the pool",
        "affinity elsewhere",
    ],
)
def test_a_daemon_set_lands_on_a_pool_by_its_taints_labels_and_required_affinity(daemon_set, answer):
    assert lands(daemon_set, GPU_POOL).answer == answer


# Gt and Lt compare as Kubernetes compares them: one value, and both it and the node's label
# read as strconv.ParseInt(s, 10, 64), or the requirement does not match
# (kubernetes/apimachinery@2a9a9331 pkg/labels/selector.go `Requirement.Matches`).
NUMBERED = PoolNodes("gpu", {**cluster_objects.pool_labels("gpu"), "gen": "5"}, (), True, "device-plugin")


def by(operator: str, *values: str, label: str = "gen") -> DaemonSet:
    return DaemonSet("a", "b", terms=(({"key": label, "operator": operator, "values": list(values)},),))


@pytest.mark.parametrize(
    ("daemon_set", "answer"),
    [
        (by("Gt", "3"), "yes"),
        (by("Lt", "3"), "no"),
        (by("Lt", "+6"), "yes"),
        (by("Gt", "-0004"), "yes"),
        (by("Gt", "²"), "no"),
        (by("Lt", "9" * 5000), "no"),
        (by("Lt", "9223372036854775808"), "no"),
        (by("Gt", "3", "4"), "no"),
        (by("Gt", "3", label="kubernetes.azure.com/agentpool"), "no"),
    ],
    ids=[
        "greater",
        "not less",
        "a sign",
        "leading zeros",
        "a superscript two",
        "5,000 digits",
        "past 64 bits",
        "two values",
        "a label that is no number",
    ],
)
def test_gt_and_lt_compare_as_kubernetes_does_and_a_value_it_cannot_read_matches_no_node(daemon_set, answer):
    assert lands(daemon_set, NUMBERED).answer == answer


@pytest.mark.parametrize("preview", [True, False], ids=["preview", "deployment"])
def test_a_daemon_set_whose_gt_is_no_number_is_read_without_a_traceback(preview):
    from support.existing_pools import GPUNP, SYSTEM
    from support.kubernetes_objects import guide_daemon_set as daemon_set

    from tools.azure_mocks import AzureMocks, OfflineReader, existing_cluster
    from tools.mock_engine import RecordingMonitor, run_program

    odd = daemon_set("kube-system", tolerations=[{"operator": "Exists"}])
    odd["spec"]["template"]["spec"]["affinity"] = {
        "nodeAffinity": {
            "requiredDuringSchedulingIgnoredDuringExecution": {
                "nodeSelectorTerms": [{"matchExpressions": [{"key": "gen", "operator": "Gt", "values": ["²"]}]}]
            }
        }
    }
    cluster = existing_cluster(agentPoolProfiles=[SYSTEM, {**GPUNP, "nodeLabels": {"gen": "5"}}])
    reader = OfflineReader(cluster=cluster, kubernetes=listed(namespace("kube-system"), odd))
    run = run_program(
        "team", overrides={"gpuPools": {"gpunp": {"existing": "use"}}}, monitor=RecordingMonitor(AzureMocks(reader=reader)), preview=preview
    )
    assert run.of_type("kubernetes:apps/v1:DaemonSet"), "its pods land nowhere, so the pool gets the stack's device plugin"


# --------------------------------------------------------------------------- the saved list, generated

LONG_RUN = int(os.environ.get("AKS_GPU_EXAMPLES", "0"))
SAVED_SETTINGS = settings(max_examples=LONG_RUN or 60, derandomize=not LONG_RUN, database=None, deadline=None)
JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(max_size=8),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=8), inner, max_size=3),
    max_leaves=12,
)


def _mutated(draw: st.DrawFn) -> Any:
    """The guide's listing with one member replaced by any JSON value."""
    doc = listed(namespace("gpu-resources"), guide_daemon_set())
    paths = [
        ("items",),
        ("items", 0, "metadata"),
        ("items", 1, "metadata", "annotations"),
        ("items", 1, "spec", "selector", "matchLabels"),
        ("items", 1, "spec", "template", "spec", "containers"),
        ("items", 1, "spec", "template", "spec", "tolerations"),
        ("items", 1, "spec", "template", "spec", "nodeSelector"),
        ("items", 1, "spec", "template", "spec", "affinity"),
    ]
    *parent, last = draw(st.sampled_from(paths))
    target = doc
    for key in parent:
        target = target[key]
    target[last] = draw(JSON)
    return doc


@SAVED_SETTINGS
@given(doc=st.composite(_mutated)())
def test_a_saved_list_with_any_member_changed_is_read_or_refused_in_one_line(doc):
    try:
        seen = cluster_objects.parse(doc)
    except cluster_objects.Malformed as why:
        assert "\n" not in str(why) and str(why).startswith(("item ", "expected "))
        return
    for found in seen.daemon_sets:  # what the checks then read of it does not fail
        lands(found, GPU_POOL)
        assert isinstance(found.device_plugin, bool) and isinstance(found.gpu_operator, bool)
