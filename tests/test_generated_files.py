"""Bad saved files and stack files generated (Hypothesis), as #44 found them by hand: Azure's
description of a cluster with members of other types, nested deep, with huge or odd strings
and NaN, answered live or saved as `clusterFile` (bytes that are not UTF-8 too); the stack's
state saved as `stateFile` with members of other types, another stack's URNs, secrets; stack files
with aliases, aliases of themselves, expansions and depth; paths that name no regular file.
Each run of the program, as a preview or a deployment, ends in one of two ways:

  - accepted;
  - refused with a `pulumi.RunError` of one line that names the key or the file, not too
    long to read, before anything is registered.

Never a traceback, never a hang. `make test` runs a few examples with a fixed seed
(FEW, below); `make fuzz` runs these too, with fresh seeds.
"""

from __future__ import annotations

import copy
import functools
import json
import math
import tempfile
from pathlib import Path
from typing import Any

import pulumi
from azure.mgmt.containerservice import models
from hypothesis import event, given, settings
from hypothesis import strategies as st
from support import existing_pools
from support.existing_pools import GPUNP
from support.generated import LONG_RUN, SETTINGS
from support.saved_files import SPECIAL, special
from support.stack_export import exported

from components.cluster import rest_shapes
from tools.azure_mocks import AzureMocks
from tools.mock_engine import RecordingMonitor, run_program
from tools.stack_files import SavedFileError, stack_config, stack_file

# Each example is a run of the program (0.2-0.5 s): `make test` runs ten of each kind with a
# fixed seed, `make fuzz` thousands with fresh ones.
FEW = settings(SETTINGS, max_examples=LONG_RUN or 10)
LONGEST_LINE = 1000  # a value is quoted at most 200 characters long (components/errors.py)
TEAM = {"resourceGroupName": "team-rg", "name": "team-aks"}


def deep(depth: int) -> Any:
    inner: Any = {}
    for _ in range(depth):
        inner = {"a": inner}
    return inner


ODD = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(min_value=-(2**70), max_value=2**70),
    st.floats(allow_nan=True, allow_infinity=True),
    st.text(max_size=8),
    st.text(alphabet=st.characters(categories=["Cc", "Cf", "Zl", "No", "Nd", "So"]), min_size=1, max_size=6),
    st.sampled_from(["x" * 10_000, "²", "9" * 5000, "Managed", "Spot", "Linux", "10%"]),
    st.sampled_from(["\ud800", "a\udfffb", "\x00\u202e\n"]),  # a lone surrogate (a saved file's JSON escape), a NUL, a bidi override
    st.lists(st.integers(), max_size=3),
    st.dictionaries(st.text(max_size=5), st.integers() | st.text(max_size=3), max_size=2),
    st.integers(min_value=20, max_value=900).map(deep),
)
# Every member the typed model reads of a pool, and a few it does not.
POOL_MEMBERS = sorted({*rest_shapes.fields(models.ManagedClusterAgentPoolProfile), "unknownMember", "properties"})
NESTED = ["upgradeSettings", "gpuProfile", "kubeletConfig", "linuxOSConfig", "securityProfile", "networkProfile", "powerState"]
CLUSTER_MEMBERS = sorted({*rest_shapes.fields(models.ManagedCluster), *rest_shapes.fields(models.ManagedClusterProperties)})
# Proxy URLs urllib refuses or a NetworkPolicy cannot hold as they are, with a password or without.
PROXY_URLS = (
    st.sampled_from(
        [
            "http://[fd00::5:3128",
            "http://]proxy:3128",
            "http://alice:s3cret@[zz]:1",
            "http://alice:s3cret@10.0.0.5:3128",
            "http://[fe80::1%eth0]:3128",
            "http://[::ffff:10.0.0.1]:3128",
            "http://10.0.0.5:99999",
            "http://:3128",
            "10.0.0.5:3128",
        ]
    )
    | ODD
)


@st.composite
def described(draw: st.DrawFn) -> dict[str, Any]:
    """Azure's description of the guide's cluster, one to three members changed."""
    cluster = existing_pools.cluster(copy.deepcopy(GPUNP))
    for _ in range(draw(st.integers(1, 3))):
        where = draw(st.sampled_from(["pool", "pool", "nested", "cluster", "proxy"]))
        pool = cluster["agentPoolProfiles"][1] if isinstance(cluster.get("agentPoolProfiles"), list) else {}
        if where == "pool" and isinstance(pool, dict):
            pool[draw(st.sampled_from(POOL_MEMBERS))] = draw(ODD)
        elif where == "nested" and isinstance(pool, dict):
            member = draw(st.sampled_from(NESTED))
            inner = pool[member] if isinstance(pool.get(member), dict) else {}
            inner[draw(st.sampled_from(["maxSurge", "driver", "nvidia", "podMaxPids", "sysctls", "code", "x"]))] = draw(ODD)
            pool[member] = inner
        elif where == "proxy":
            cluster["httpProxyConfig"] = {draw(st.sampled_from(["httpProxy", "httpsProxy"])): draw(PROXY_URLS)}
        else:
            cluster[draw(st.sampled_from(CLUSTER_MEMBERS))] = draw(ODD)
    return cluster


def one_line(error: BaseException, names: tuple[str, ...], monitor: RecordingMonitor) -> None:
    said = str(error)
    event(f"refused: {type(error).__name__}")
    said.encode("utf-8")  # no lone surrogate: the CLI's gRPC call would fail on it
    assert "s3cret" not in said and "\x00" not in said and "\u202e" not in said, said[:300]
    assert monitor.registrations == [], f"refused after registering {len(monitor.registrations)} resource(s): {said}"
    if said.startswith(("preflight:", "cost")):  # preflight's list: one problem a line, each naming its key
        assert all(("aks-gpu:" in line or "preflight" in line) and len(line) <= LONGEST_LINE for line in said.splitlines()), said
        return
    assert "\n" not in said and len(said) <= LONGEST_LINE, f"not one readable line: {said[:300]!r}"
    assert any(name in said for name in names), f"names neither {names}: {said[:300]!r}"


@FEW
@given(answer=described(), how=st.sampled_from(["use", "adopt"]), preview=st.booleans())
def test_a_generated_answer_of_azure_is_accepted_or_one_line(answer, how, preview):
    monitor = RecordingMonitor(AzureMocks(cluster=answer))
    try:
        done = run_program("team", overrides={"gpuPools": {"gpunp": {"existing": how}}}, monitor=monitor, preview=preview)
    except pulumi.RunError as error:
        one_line(error, ("aks-gpu:existingCluster", "aks-gpu:gpuPools.gpunp"), monitor)
        return
    said = "\n".join(done.warnings + done.infos)
    said.encode("utf-8")
    assert "s3cret" not in said and "\x00" not in said and "\u202e" not in said
    event("accepted")


def _bytes(cluster: Any, how: str, draw: st.DrawFn) -> bytes:
    if how == "not UTF-8":
        return json.dumps(cluster).encode()[:-1] + draw(st.sampled_from([b"\xff", b"\xc3(", b"\xed\xa0\x80"])) + b"}"
    if how == "NaN":
        return json.dumps({**cluster, "spotMaxPrice": math.nan}, allow_nan=True).encode()
    if how == "truncated":
        text = json.dumps(cluster).encode()
        return text[: draw(st.integers(0, len(text) - 1))]
    return json.dumps(cluster, allow_nan=True).encode()


@FEW
@given(data=st.data(), how=st.sampled_from(["changed", "not UTF-8", "NaN", "truncated"]), preview=st.booleans())
def test_a_generated_saved_cluster_file_is_accepted_or_one_line_naming_the_file(data, how, preview):
    content = _bytes(data.draw(described()), how, data.draw)
    overrides = {"existingCluster": TEAM, "gpuPools": {"gpunp": {"existing": "use"}}}
    _saved_and_run(content, "clusterFile", overrides, AzureMocks(), preview)


def _saved_and_run(content: bytes, key: str, overrides: dict[str, Any], mocks: AzureMocks, preview: bool) -> None:
    """`content` saved as the file preflight.<key> names, and the team stack run on it by the
    offline render's reader (which reads the file): accepted, or one line naming the key."""
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / f"{key}.json"
        path.write_bytes(content)
        monitor = RecordingMonitor(mocks)
        try:
            run_program("team", overrides={**overrides, "preflight": {key: str(path)}}, monitor=monitor, preview=preview)
        except pulumi.RunError as error:
            one_line(error, (f"aks-gpu:preflight.{key} = ", "aks-gpu:existingCluster", "aks-gpu:gpuPools.gpunp"), monitor)
            return
    event("accepted")


# --------------------------------------------------------------------------- the stack's saved state

ADOPTED = {"existingCluster": TEAM, "gpuPools": {"gpunp": {"existing": "adopt"}}, "devicePlugin": {"adopt": False}}
STATE_MEMBERS = ["urn", "type", "outputs", "delete", "parent", "id"]
OUTPUT_MEMBERS = ["tags", "metadata", "resourceGroupName", "clusterName", "properties", "agentPoolName", "adopted"]
SECRET = {"4dabf18193072939515e22adb298388d": "1b47061264138c4ac30d75fd1eb44270"}


@functools.cache
def _adopted_state() -> str:
    """The export the team stack's adopting `up` of gpunp left (JSON text: each example a fresh copy)."""
    run = run_program("team", overrides=ADOPTED, monitor=RecordingMonitor(AzureMocks(cluster=_team_cluster())), preview=False)
    return json.dumps(exported(run))


def _team_cluster() -> dict[str, Any]:
    return existing_pools.cluster(copy.deepcopy(GPUNP))


@st.composite
def export_changed(draw: st.DrawFn) -> dict[str, Any]:
    """That export, one to three members changed: a resource's, its outputs', a secret's, or the envelope's."""
    export = json.loads(_adopted_state())
    resources = export["deployment"]["resources"]
    for _ in range(draw(st.integers(1, 3))):
        where = draw(st.sampled_from(["resource", "resource", "outputs", "secret", "envelope"]))
        item = resources[draw(st.integers(0, len(resources) - 1))] if isinstance(resources, list) and resources else {}
        if where == "resource" and isinstance(item, dict):
            item[draw(st.sampled_from(STATE_MEMBERS))] = draw(ODD | st.sampled_from(["urn:pulumi:prod::aks-gpu::x::y", "urn:pulumi:team"]))
        elif where == "outputs" and isinstance(item, dict) and isinstance(item.get("outputs"), dict):
            item["outputs"][draw(st.sampled_from(OUTPUT_MEMBERS))] = draw(ODD)
        elif where == "secret" and isinstance(item, dict) and isinstance(item.get("outputs"), dict):
            sealed = draw(st.sampled_from([{"ciphertext": "v1:x"}, {"plaintext": draw(st.text(max_size=8))}, {"plaintext": draw(ODD)}]))
            item["outputs"][draw(st.sampled_from(OUTPUT_MEMBERS))] = {**SECRET, **sealed}
        else:
            export[draw(st.sampled_from(["version", "deployment"]))] = draw(ODD)
    return export


@FEW
@given(data=st.data(), how=st.sampled_from(["changed", "not UTF-8", "NaN", "truncated"]), preview=st.booleans())
def test_a_generated_saved_state_file_is_accepted_or_one_line_naming_the_file(data, how, preview):
    _saved_and_run(_bytes(data.draw(export_changed()), how, data.draw), "stateFile", ADOPTED, AzureMocks(cluster=_team_cluster()), preview)


# --------------------------------------------------------------------------- stack files


@st.composite
def aliased(draw: st.DrawFn) -> str:
    """Lines under `config:`: anchors and aliases nested `levels` deep and `width` wide (a
    billion laughs at 9 and 9), an anchor aliased inside itself, plain nesting, or a number
    past Python's 4,300 digits."""
    how = draw(st.sampled_from(["expansion", "recursion", "nesting", "merge", "long number"]))
    if how == "long number":
        digits = draw(st.integers(4000, 6000))
        number = draw(st.sampled_from(["9" * digits, "-1" + "0" * digits, "0x" + "f" * digits, "1_" * (digits // 2)]))
        key = draw(st.sampled_from(["gpuPool:\n    maxCount", "cost:\n    maxHourly", "clusterName"]))
        return f"  aks-gpu:{key}: {number}\n"
    if how == "expansion":
        levels, width = draw(st.integers(1, 9)), draw(st.integers(1, 12))
        lines = [f"  aks-gpu:a0: &a0 [{', '.join(['lol'] * width)}]"]
        lines += [f"  aks-gpu:a{i}: &a{i} [{', '.join([f'*a{i - 1}'] * width)}]" for i in range(1, levels)]
        return "\n".join(lines) + "\n"
    if how == "recursion":
        inner = draw(st.sampled_from(["[*x]", "{k: *x}", "[1, [2, *x]]", "{a: {b: [*x]}}"]))
        return f"  aks-gpu:gpuPool: &x {inner}\n"
    if how == "nesting":
        depth = draw(st.integers(1, 3000))
        return f"  aks-gpu:gpuPool: {'[' * depth}{']' * depth}\n"
    return "  aks-gpu:base: &base {vmSize: Standard_NC4as_T4_v3}\n  aks-gpu:gpuPool: {<<: *base, nodeCount: 1}\n"


@FEW
@given(lines=aliased(), preview=st.booleans())
def test_a_generated_stack_file_is_read_as_the_cli_reads_it_or_refused_in_one_line(lines, preview):
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "Pulumi.gen.yaml"
        path.write_text(stack_file("dev").read_text() + lines)
        try:
            config = stack_config("gen", path)
        except SavedFileError as error:
            said = str(error)
            event("refused: the stack file")
            assert "\n" not in said and said.startswith("Pulumi.gen.yaml: ") and len(said) <= LONGEST_LINE, said
            return
    monitor = RecordingMonitor(AzureMocks())
    try:
        run_program("dev", config=config, monitor=monitor, preview=preview)
    except pulumi.RunError as error:
        one_line(error, ("aks-gpu:", "preflight"), monitor)
        return
    event("accepted")


# --------------------------------------------------------------------------- paths


@st.composite
def special_path(draw: st.DrawFn, folder: Path) -> str:
    what = draw(st.sampled_from(["a FIFO", "a symlink loop", "a directory", "/dev/zero", "/dev/urandom", "a NUL", "missing", "long"]))
    if what in SPECIAL:
        return special(folder, what)
    return {"missing": str(folder / "none.json"), "long": "d/" * 3000 + "f"}[what]


@FEW
@given(
    data=st.data(),
    member=st.sampled_from(["clusterFile", "kubernetesFile", "pricesFile", "skusFile", "usageFile", "stateFile"]),
    preview=st.booleans(),
)
def test_a_saved_file_path_that_names_no_regular_file_is_one_line_and_never_opened(data, member, preview):
    with tempfile.TemporaryDirectory() as folder:
        path = data.draw(special_path(Path(folder)))
        other = {
            "skusFile": {"usageFile": "tests/fixtures/preflight/eastus-usage.json"},
            "usageFile": {"skusFile": "tests/fixtures/preflight/eastus-skus.json"},
        }
        files = {member: path, **other.get(member, {})}
        monitor = RecordingMonitor(AzureMocks())
        try:
            run_program("dev", overrides={"existingCluster": TEAM, "preflight": files}, monitor=monitor, preview=preview)
        except pulumi.RunError as error:
            one_line(error, (f"aks-gpu:preflight.{member} = ", "aks-gpu:preflight:"), monitor)
            return
    raise AssertionError(f"accepted {path[:100]!r} as {member}")
