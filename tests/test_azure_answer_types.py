"""Azure's description of a cluster is read through a typed model of its REST shape, once, at
the edge (components/cluster/rest_shapes.py): a member of another type than Azure's API gives it,
whether Azure answered it or a saved `az aks show` holds it, is one line naming the member (a
pool by its name) and the answer or the file, before anything is registered. Never an
AttributeError, a pydantic traceback, an SDK assertion or a RecursionError later; and no line
quotes a long value whole (components/errors.py `cut`).

Azure's answer is read and checked by the plan (components/plan.py), which __main__.py builds
before it declares anything: the refusals are the plan's, of a preview and of a deployment
(support/plan.py `refusals`); the program's run under the mock engine is checked to stop with
the same line and register nothing (the cluster's own members), and to take what it accepts."""

from __future__ import annotations

import functools
import json
import re

import pytest
from support import existing_pools
from support.existing_pools import GPUNP
from support.plan import planned_by, refusals

from components.errors import AzureReadError, ConfigError, PreflightError
from tools.azure_mocks import AzureMocks, OfflineReader
from tools.mock_engine import RecordingMonitor, run_program

BOTH = pytest.mark.parametrize("preview", [True, False], ids=["preview", "deployment"])
HOW = ["use", "adopt"]


def nested(depth: int) -> dict:
    inner: dict = {}
    for _ in range(depth):
        inner = {"a": inner}
    return inner


# The pool's member, as Azure's answer (or a saved file) has it, and the line's words for it.
WRONG = [
    ({"osType": 5}, r"agentPoolProfiles\[gpunp\]\.osType is 5, not a string"),
    ({"scaleSetPriority": 1}, r"agentPoolProfiles\[gpunp\]\.scaleSetPriority is 1, not a string"),
    ({"gpuProfile": {"driver": 5}}, r"agentPoolProfiles\[gpunp\]\.gpuProfile\.driver is 5, not a string"),
    (
        {"gpuProfile": {"nvidia": {"managementMode": ["Managed"]}}},
        r"agentPoolProfiles\[gpunp\]\.gpuProfile\.nvidia\.managementMode is \[\"Managed\"\], not a string",
    ),
    ({"upgradeSettings": {"maxSurge": 5}}, r"agentPoolProfiles\[gpunp\]\.upgradeSettings\.maxSurge is 5, not a string"),
    (
        {"upgradeSettings": {"maxSurge": "lots"}},
        r"agentPoolProfiles\[gpunp\]\.upgradeSettings\.maxSurge is \"lots\", not a node count from 0 to 1000, or a percentage",
    ),
    (
        {"upgradeSettings": {"drainTimeoutInMinutes": "x"}},
        r"agentPoolProfiles\[gpunp\]\.upgradeSettings\.drainTimeoutInMinutes is \"x\", not a whole number",
    ),
    ({"count": True}, r"agentPoolProfiles\[gpunp\]\.count is true, not a whole number"),
    ({"spotMaxPrice": "cheap"}, r"agentPoolProfiles\[gpunp\]\.spotMaxPrice is \"cheap\", not a number"),
    # Members an adopted pool passes through to its declaration (pool_fields.passed_through).
    ({"kubeletConfig": [1, 2]}, r"agentPoolProfiles\[gpunp\]\.kubeletConfig is \[1, 2\], not an object"),
    ({"kubeletConfig": {"podMaxPids": "many"}}, r"agentPoolProfiles\[gpunp\]\.kubeletConfig\.podMaxPids is \"many\", not a whole number"),
    ({"nodeLabels": {"a": {"b": 1}}}, r"agentPoolProfiles\[gpunp\]\.nodeLabels\.a is \{\"b\": 1\}, not a string"),
    ({"kubeletConfig": nested(900)}, r"it is nested more than 32 levels deep"),
    ({"linuxOSConfig": {"sysctls": {"vmSwappiness": "0"}}}, r"linuxOSConfig\.sysctls\.vmSwappiness is \"0\", not a whole number"),
    ({"availabilityZones": [1, 2]}, r"agentPoolProfiles\[gpunp\]\.availabilityZones\[0\] is 1, not a string"),
    # A member the program neither reads nor passes on, typed as the SDK's model types it.
    (
        {"artifactStreamingProfile": {"enabled": "yes"}},
        r"agentPoolProfiles\[gpunp\]\.artifactStreamingProfile\.enabled is \"yes\", not true or false",
    ),
]
IDS = [re.sub(r"\W+", " ", json.dumps(change))[:40].strip() for change, _ in WRONG]


def cluster(**pool) -> dict:
    """The team's cluster with the guide's pool `gpunp` (support/existing_pools.py), `pool`'s members changed."""
    return existing_pools.cluster({**GPUNP, **pool})


def planned_refusals(error: type, says: str, answer: dict, how: str, **overrides) -> list[str]:
    """The line the team stack's plan of a preview and of a deployment stops with, Azure
    answering `answer` for its cluster and `gpunp` named by `existing: how`."""
    reader = functools.partial(OfflineReader, cluster=answer)
    return refusals(error, says, reader, "team", gpuPools={"gpunp": {"existing": how}}, **overrides)


def refused(error: type, says: str, answer: dict, how: str, preview: bool, **overrides) -> str:
    """The same, from the program's run under the mock engine: nothing registered."""
    monitor = RecordingMonitor(AzureMocks(cluster=answer))
    with pytest.raises(error, match=says) as raised:
        run_program("team", overrides={"gpuPools": {"gpunp": {"existing": how}}, **overrides}, monitor=monitor, preview=preview)
    assert "\n" not in str(raised.value) and monitor.registrations == []
    return str(raised.value)


@pytest.mark.parametrize("change, says", WRONG, ids=IDS)
def test_a_member_of_azures_answer_of_another_type_is_one_line_naming_it(change, says):
    for how in HOW:
        for said in planned_refusals(AzureReadError, says, cluster(**change), how):
            assert said.startswith("aks-gpu:existingCluster team-rg/team-aks: reading the cluster (getManagedCluster): in Azure's answer, ")


@BOTH
def test_the_clusters_own_members_are_typed_too(preview):
    refused(
        AzureReadError,
        r"in Azure's answer, currentKubernetesVersion is 1\.34, not a string",
        cluster() | {"currentKubernetesVersion": 1.34},
        "use",
        preview,
    )


def test_the_node_provisioning_mode_is_typed_as_azure_gives_it():
    planned_refusals(
        AzureReadError,
        r"in Azure's answer, nodeProvisioningProfile\.mode is true, not a string",
        cluster() | {"nodeProvisioningProfile": {"mode": True}},
        "adopt",
    )


@pytest.mark.parametrize("change, says", WRONG[:4] + WRONG[9:13], ids=IDS[:4] + IDS[9:13])
def test_a_saved_description_with_a_member_of_another_type_is_one_line_naming_the_file(tmp_path, change, says):
    path = tmp_path / "cluster.json"
    path.write_text(json.dumps(cluster(**change)))
    config = {"existingCluster": {"resourceGroupName": "team-rg", "name": "team-aks"}, "preflight": {"clusterFile": str(path)}}
    planned_refusals(
        ConfigError, rf"^invalid config aks-gpu:preflight\.clusterFile = \S*/cluster\.json: {says}", cluster(), "use", **config
    )


@BOTH
def test_whole_numbers_that_arrive_as_floats_are_read_as_the_invoke_sends_them(preview):
    """An invoke's answer comes through a protobuf Struct, whose numbers are floats."""
    monitor = RecordingMonitor(AzureMocks(cluster=cluster(count=2.0, minCount=0.0, maxCount=3.0)))
    run_program("team", overrides={"gpuPools": {"gpunp": {"existing": "use"}}}, monitor=monitor, preview=preview)


# --------------------------------------------------------------------------- long values


@pytest.mark.parametrize(
    "pool",
    [{"name": "g" * 10_000}, {"vmSize": "V" * 10_000}, {"osType": "W" * 10_000}],
    ids=["a pool's name", "a size", "an OS"],
)
def test_a_long_value_in_azures_answer_is_cut_in_the_line_that_quotes_it(pool):
    for said in planned_refusals(PreflightError, r"\.\.\. \(10000 characters\)", cluster(**pool), "use"):
        assert len(said) < 400


def test_a_long_pool_name_in_the_config_is_cut_in_the_key_and_the_value():
    with pytest.raises(ConfigError) as raised:
        planned_by(OfflineReader(), "team", True, gpuPools={"g" * 10_000: {"vmSize": "Standard_NC4as_T4_v3"}})
    assert len(str(raised.value)) < 600 and len(re.findall(r"\.\.\. \(100\d\d characters\)", str(raised.value))) == 2


# --------------------------------------------------------------------------- one member, two casings


TWICE = [
    ({"VMSize": "Standard_NC24ads_A100_v4"}, r"agentPoolProfiles\[gpunp\]\.vmSize is given twice, as \"vmSize\" and \"VMSize\""),
    (
        {"upgradeSettings": {"maxSurge": "10%", "MaxSurge": 5}},
        r"upgradeSettings\.maxSurge is given twice, as \"maxSurge\" and \"MaxSurge\"",
    ),
]


@pytest.mark.parametrize("change, says", TWICE, ids=["vmSize", "maxSurge"])
def test_a_member_given_twice_in_two_casings_is_one_line_not_checked_on_one_and_declared_from_the_other(change, says):
    for how in HOW:
        for said in planned_refusals(AzureReadError, says, cluster(**change), how):
            assert "Azure's member names do not depend on case, so this program cannot tell which one Azure means" in said


def test_a_saved_description_with_a_member_in_two_casings_is_one_line_naming_the_file(tmp_path):
    path = tmp_path / "cluster.json"
    path.write_text(json.dumps(cluster(VMSize="Standard_NC24ads_A100_v4")))
    config = {"existingCluster": {"resourceGroupName": "team-rg", "name": "team-aks"}, "preflight": {"clusterFile": str(path)}}
    says = r"^invalid config aks-gpu:preflight\.clusterFile = \S*/cluster\.json: agentPoolProfiles\[gpunp\]\.vmSize is given twice"
    planned_refusals(ConfigError, says, cluster(), "adopt", **config)


@BOTH
def test_labels_whose_keys_differ_only_in_case_are_two_labels_taken(preview):
    # Kubernetes label keys are case-sensitive: `Team` and `team` are two labels, taken.
    monitor = RecordingMonitor(AzureMocks(cluster=cluster(nodeLabels={"team": "ml", "Team": "ML"})))
    run_program("team", overrides={"gpuPools": {"gpunp": {"existing": "use"}}}, monitor=monitor, preview=preview)


# --------------------------------------------------------------------------- characters no line carries raw

RAW = "\x00\u202e\n\ud800"  # a NUL, a right-to-left override, a line break, a lone surrogate


def safe(said: str) -> None:
    """One line a terminal shows as it is, that UTF-8 (the CLI's gRPC log call) can carry."""
    said.encode("utf-8")
    assert not any(c in said for c in RAW), said


@pytest.mark.parametrize(
    "pool, says",
    [
        ({"name": "gpu\u202e\x00np"}, r"its pools: system, gpu\\u202e\\x00np\)"),
        ({"vmSize": "Standard_\u202eNC\x00\nx"}, r"is Standard_\\u202eNC\\x00\\nx, with no GPU"),
    ],
    ids=["a pool's name", "a size"],
)
def test_a_nul_a_bidi_override_or_a_line_break_in_azures_answer_is_quoted_escaped(pool, says):
    for said in planned_refusals(PreflightError, says, cluster(**pool), "use"):
        safe(said)


def test_a_lone_surrogate_in_azures_answer_is_one_line_naming_the_member_not_an_encoding_crash():
    for said in planned_refusals(
        AzureReadError,
        r"agentPoolProfiles\[gpunp\]\.nodeTaints\[0\] is \"sku=gpu\\ud800:NoSchedule\", not text: it holds a lone surrogate",
        cluster(nodeTaints=["sku=gpu\ud800:NoSchedule"]),
        "use",
    ):
        safe(said)


def test_a_lone_surrogate_in_a_saved_description_is_one_line_naming_the_file(tmp_path):
    path = tmp_path / "cluster.json"
    path.write_text(json.dumps(cluster(tags={"team\ud800": "ml"})))
    config = {"existingCluster": {"resourceGroupName": "team-rg", "name": "team-aks"}, "preflight": {"clusterFile": str(path)}}
    for said in planned_refusals(
        ConfigError, r"agentPoolProfiles\[gpunp\]\.tags has a member whose name holds a lone surrogate", cluster(), "use", **config
    ):
        safe(said)


def test_the_quoting_helpers_escape_what_no_line_carries_raw_and_keep_the_rest():
    from components.errors import ConfigError as Refusal
    from components.errors import cut, escaped, one_line

    assert escaped("a\x00b\u202ec\nd\ud800e\u2028f\x1b") == "a\\x00b\\u202ec\\nd\\ud800e\\u2028f\\x1b"
    assert escaped("Standard_NC4as_T4_v3 é 中 ⚡") == "Standard_NC4as_T4_v3 é 中 ⚡", "printable text is left as it is"
    assert cut("x\ud800" * 300).endswith("... (2100 characters)"), "escaped, then cut"
    assert one_line(ValueError("a\nb\x00\u202e")) == "a b\\x00\\u202e"
    assert str(Refusal("one\x00\u202e\ud800\ntwo")) == "one\\x00\\u202e\\ud800\\ntwo"
    assert str(Refusal("preflight:\n- a\n- b\nc")) == "preflight:\n- a\n- b\\nc", "a list of problems keeps its lines, and only those"
