"""A cluster named by its Azure resource ID (the package's clusterId input), read with azure-mgmt-core's
parser into the stack file's existingCluster and subscription (components/cluster/cluster_id.py)."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st
from support.generated import SETTINGS

from components.cluster.cluster_id import SHAPE, cluster_settings
from components.errors import ConfigError

SUBSCRIPTION = "00000000-0000-0000-0000-000000000000"
AKS = f"/subscriptions/{SUBSCRIPTION}/resourceGroups/team-rg/providers/Microsoft.ContainerService/managedClusters/team-aks"


def test_a_clusters_resource_id_names_its_resource_group_name_and_subscription():
    assert cluster_settings("clusterId", AKS) == ({"resourceGroupName": "team-rg", "name": "team-aks"}, SUBSCRIPTION)


def test_a_resource_id_in_other_case_names_the_same_cluster_as_arm_does():
    lower = AKS.replace("resourceGroups", "resourcegroups").replace(
        "Microsoft.ContainerService/managedClusters", "microsoft.containerservice/managedclusters"
    )
    assert cluster_settings("clusterId", lower) == cluster_settings("clusterId", AKS)


@pytest.mark.parametrize(
    ("value", "why"),
    [
        ("team-aks", ""),
        ("", ""),
        (3, ""),
        (
            AKS.replace("Microsoft.ContainerService/managedClusters", "Microsoft.Compute/virtualMachines"),
            "; this names a Microsoft.Compute/virtualMachines",
        ),
        (f"{AKS}/agentPools/gpu", "; this names a child of Microsoft.ContainerService/managedClusters (/agentPools/gpu)"),
        (f"{AKS}/", ""),
        (f"/subscriptions/{SUBSCRIPTION}/resourceGroups/team-rg", "; this names no resource"),
        (AKS.replace(SUBSCRIPTION, "my-subscription"), ", its subscription ID a GUID"),
        (AKS.replace("team-aks", "team aks"), ", its name 1-63 letters"),
        (AKS + "\n", ", its name 1-63 letters"),
        (AKS.replace("team-rg", "team-rg."), ", its resource group 1-90 letters"),
    ],
)
def test_anything_but_an_aks_clusters_resource_id_is_refused_in_one_line_naming_the_input_and_the_shape(value, why):
    with pytest.raises(ConfigError) as refused:
        cluster_settings("clusterId", value)
    message = str(refused.value)
    assert message.startswith(f"invalid config clusterId = {value!r}: expected ") and SHAPE in message and "\n" not in message
    assert why in message


SEGMENT = st.one_of(
    st.sampled_from(["team-rg", "team-aks", SUBSCRIPTION, "Microsoft.ContainerService", "managedClusters", "agentPools", ""]),
    st.text(max_size=8),
    st.text(alphabet=st.characters(categories=["Cc", "Zs", "Lo"]), min_size=1, max_size=3),
)


@SETTINGS
@given(
    st.one_of(
        st.lists(SEGMENT, max_size=10).map(lambda parts: "/".join(parts)),
        st.lists(SEGMENT, min_size=8, max_size=8).map(
            lambda p: f"/subscriptions/{p[0]}/resourceGroups/{p[1]}/providers/{p[2]}/{p[3]}/{p[4]}" + "".join(f"/{x}" for x in p[5:] if x)
        ),
        st.just(AKS),
    )
)
def test_any_text_is_an_aks_clusters_id_that_round_trips_or_is_refused_in_one_line(value):
    try:
        existing, subscription = cluster_settings("clusterId", value)
    except ConfigError as refused:
        assert str(refused).startswith("invalid config clusterId = ") and SHAPE in str(refused) and "\n" not in str(refused)
        return
    rebuilt = f"/subscriptions/{subscription}/resourceGroups/{existing['resourceGroupName']}/providers/Microsoft.ContainerService/managedClusters/{existing['name']}"
    assert rebuilt.lower() == value.lower()
