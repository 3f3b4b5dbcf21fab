"""Files a stack names, or is: a stack file that is not YAML, and saved answers of Azure
(SKUs, usage, prices, the existing cluster) that are not what they should hold. Each is one
line naming the file and its key, in the program and in `make render`, before anything is
registered: never a traceback, never silently an empty list.

The files are read and checked by the plan (components/plan.py), which __main__.py builds before
it declares anything: most tests here call the plan of a preview and of a deployment
(support/plan.py `refusals`); the program's own run under the mock engine is checked to stop
with the same line and register nothing (test_the_program_itself_refuses_...), and `make
render` to print it."""

from __future__ import annotations

import json
import signal
from contextlib import contextmanager
from pathlib import Path

import pytest
from support.plan import planned_by, refusals
from support.saved_files import SPECIAL, special

from components.errors import AzureReadError, ConfigError
from tools import render
from tools.azure_mocks import AzureMocks, OfflineReader
from tools.mock_engine import RecordingMonitor, run_program

FIXTURES = Path(__file__).parent / "fixtures" / "preflight"
SKUS, USAGE = FIXTURES / "eastus-skus.json", FIXTURES / "eastus-usage.json"
T4 = "Standard_NC4as_T4_v3"
TEAM = {"resourceGroupName": "team-rg", "name": "team-aks"}


def write(tmp_path: Path, name: str, content) -> str:
    path = tmp_path / name
    if isinstance(content, bytes):
        path.write_bytes(content)
    else:
        path.write_text(content if isinstance(content, str) else json.dumps(content))
    return str(path)


SKU = {"name": "Standard_NC6", "resourceType": "virtualMachines", "locations": ["eastus"]}


BROKEN = {
    "skusFile": [
        (
            "{not json",
            r"skusFile = \S*/skus\.json: not JSON \(line 1, column 2: Expecting property name enclosed in double quotes\); expected the JSON list `az vm list-skus",
        ),
        ({"value": []}, r"skusFile = \S*/skus\.json: expected the JSON list `az vm list-skus .*` prints, found dict$"),
        ([{"name": "Standard_NC6"}], r"skusFile = \S*/skus\.json: item 0: no resourceType, locations; expected the JSON list"),
        (
            [{"name": "Standard_NC6", "resourceType": "virtualMachines", "locations": ["eastus"], "capabilities": [{"name": "vCPUs"}]}],
            r"skusFile = \S*/skus\.json: item 0: capabilities\[0\] is not an object with a string name and value; expected the JSON list",
        ),
        (
            [
                {
                    "name": "Standard_NC6",
                    "resourceType": "virtualMachines",
                    "locations": ["eastus"],
                    "capabilities": [{"name": "vCPUs", "value": "six"}],
                }
            ],
            r"skusFile = \S*/skus\.json: item 0: capability vCPUs is 'six', not a whole number",
        ),
        # Members of other types than the REST shapes' (#31): each one line, never an AttributeError.
        (
            [{**SKU, "restrictions": [{"type": "Zone", "restrictionInfo": "eastus-1"}]}],
            r"skusFile = \S*/skus\.json: item 0: restrictions\[0\]: restrictionInfo is \"eastus-1\", not an object",
        ),
        (
            [{**SKU, "restrictions": [{"type": "Zone", "restrictionInfo": {"zones": [1]}}]}],
            r"skusFile = \S*/skus\.json: item 0: restrictions\[0\]: zones is \[1\], not a list of strings",
        ),
        ([{**SKU, "locations": [1]}], r"skusFile = \S*/skus\.json: item 0: locations is \[1\], not a list of strings"),
        (
            [{**SKU, "locationInfo": [{"location": "eastus", "zones": "1 2"}]}],
            r"skusFile = \S*/skus\.json: item 0: locationInfo\[0\]: zones is \"1 2\", not a list of strings",
        ),
        (b'[{"name": "Standard_NC6\xe9"}]', r"skusFile = \S*/skus\.json: not UTF-8 text \(byte 23\); expected the JSON list"),
    ],
    "usageFile": [
        ("", r"usageFile = \S*/usage\.json: not JSON \(line 1, column 1: Expecting value\)"),
        (
            [{"name": {"localizedValue": "Total Regional vCPUs"}, "currentValue": 4, "limit": 10}],
            r"usageFile = \S*/usage\.json: item 0: name is neither a string nor an object with a string value",
        ),
        (
            [{"name": {"value": "cores"}, "currentValue": 4, "limit": "many"}],
            r"usageFile = \S*/usage\.json: item 0: limit is \"many\", not a number; expected the JSON list `az vm list-usage",
        ),
        ('[{"name": "cores", "currentValue": 4, "limit": NaN}]', r"usageFile = \S*/usage\.json: not JSON \(NaN is not a JSON number\)"),
        (
            '[{"name": "cores", "currentValue": 4, "limit": -Infinity}]',
            r"usageFile = \S*/usage\.json: not JSON \(-Infinity is not a JSON number\)",
        ),
        (
            [{"name": "cores", "currentValue": -4, "limit": 10}],
            r"usageFile = \S*/usage\.json: item 0: currentValue is -4, not a number of at least 0",
        ),
    ],
    "pricesFile": [
        ("[1, 2", r"pricesFile = \S*/prices\.json: not JSON"),
        ([], r"pricesFile = \S*/prices\.json: no Items; expected a saved Retail Prices API answer"),
        ({"value": []}, r"pricesFile = \S*/prices\.json: no Items; expected a saved Retail Prices API answer"),
        ({"Items": []}, r"pricesFile = \S*/prices\.json: Items is empty, so it prices nothing"),
        ({"Items": [{"armSkuName": T4, "retailPrice": None}]}, r"pricesFile = \S*/prices\.json: item 0: retailPrice is null, not a number"),
        # A NaN or negative price would price the stack below any cost.maxHourly (#31).
        (
            '{"Items": [{"armSkuName": "Standard_NC4as_T4_v3", "retailPrice": NaN}]}',
            r"pricesFile = \S*/prices\.json: not JSON \(NaN is not a JSON number\)",
        ),
        (
            {"Items": [{"armSkuName": T4, "retailPrice": -0.5}]},
            r"pricesFile = \S*/prices\.json: item 0: retailPrice is -0\.5, not a number of at least 0",
        ),
        ({"Items": [{"armSkuName": 5, "retailPrice": 0.5}]}, r"pricesFile = \S*/prices\.json: item 0: armSkuName is 5, not a string"),
        (
            {"Items": [{"armSkuName": T4, "skuName": ["x"], "retailPrice": 0.5}]},
            r"pricesFile = \S*/prices\.json: item 0: skuName is \[\"x\"\], not a string",
        ),
        (
            {"Items": [{"armSkuName": T4, "effectiveStartDate": 2024, "retailPrice": 0.5}]},
            r"pricesFile = \S*/prices\.json: item 0: effectiveStartDate is 2024, not a string",
        ),
    ],
}
CASES = [(member, content, says) for member, cases in BROKEN.items() for content, says in cases]


def preflight_config(tmp_path: Path, member: str, content) -> dict[str, str]:
    files = {} if member == "pricesFile" else {"skusFile": str(SKUS), "usageFile": str(USAGE)}
    name = {"skusFile": "skus.json", "usageFile": "usage.json", "pricesFile": "prices.json"}[member]
    files[member] = write(tmp_path, name, content)
    return files


@pytest.mark.parametrize("member, content, says", CASES)
def test_a_saved_file_that_is_not_what_it_should_hold_is_one_line_naming_its_key(tmp_path, member, content, says):
    files = preflight_config(tmp_path, member, content)
    refusals(ConfigError, rf"^invalid config aks-gpu:preflight\.{says}", gpuPool={"vmSize": T4}, preflight=files)


def test_make_render_says_the_same_one_line_and_exits_1(tmp_path, monkeypatch, capsys):
    files = preflight_config(tmp_path, "pricesFile", {"Items": [{"retailPrice": "0.5"}]})
    real = render.run_program
    monkeypatch.setattr(
        render,
        "run_program",
        lambda stack, overrides, **kw: real(stack, overrides={**overrides, "gpuPool": {"vmSize": T4}, "preflight": files}, **kw),
    )
    assert render.main(["--stack", "dev", "--out", str(tmp_path / "out")]) == 1
    err = capsys.readouterr().err
    assert err.count("\n") == 1
    assert err.startswith(
        f'error: invalid config aks-gpu:preflight.pricesFile = {tmp_path}/prices.json: item 0: retailPrice is "0.5", not a number'
    )


@pytest.mark.parametrize(
    "content, says",
    [
        ("[", r"not JSON \(line 1, column 2"),
        ({"name": "team-aks"}, r"no location, agentPoolProfiles; expected the JSON object `az aks show"),
        ({"name": "team-aks", "location": "eastus", "agentPoolProfiles": 5}, r"agentPoolProfiles is int, not a list of pools"),
        (
            {"name": "team-aks", "location": "eastus", "agentPoolProfiles": [{"name": "system", "vnetSubnetId": 5}]},
            r"agentPoolProfiles\[system\]\.vnetSubnetID is 5, not a string",
        ),
        (
            {"name": "team-aks", "location": "eastus", "agentPoolProfiles": [{"name": "system", "maxPods": "30"}]},
            r"agentPoolProfiles\[system\]\.maxPods is \"30\", not a whole number",
        ),
        (
            {"name": "other-aks", "location": "eastus", "agentPoolProfiles": []},
            r"it describes cluster 'other-aks', but aks-gpu:existingCluster.name is 'team-aks'",
        ),
    ],
)
def test_a_saved_cluster_that_is_not_the_clusters_description_is_one_line(tmp_path, content, says):
    path = write(tmp_path, "cluster.json", content)
    with pytest.raises(ConfigError, match=rf"^invalid config aks-gpu:preflight\.clusterFile = \S*/cluster\.json: {says}"):
        planned_by(OfflineReader(), "dev", True, existingCluster=TEAM, gpuPool={"vmSize": T4}, preflight={"clusterFile": path})


@pytest.mark.parametrize(
    "content, says",
    [
        ("config:\n  aks-gpu:gpuPool: {vmSize: Standard_NC4as_T4_v3\n", r"Pulumi\.broken\.yaml: not valid YAML at line 3, column 1: "),
        ("config:\n  - one\n  - two\n", r"Pulumi\.broken\.yaml: expected a mapping with a `config:` mapping of keys to values"),
        ("just text\n", r"Pulumi\.broken\.yaml: expected a mapping with a `config:` mapping"),
    ],
)
def test_a_stack_file_that_is_not_yaml_is_one_line_in_make_render(tmp_path, monkeypatch, capsys, content, says):
    stack_file = tmp_path / "Pulumi.broken.yaml"
    stack_file.write_text(content)
    real = render.run_program
    monkeypatch.setattr(render, "run_program", lambda stack, **kw: real(stack, stack_file=stack_file, **kw))
    assert render.main(["--stack", "broken", "--out", str(tmp_path / "out")]) == 1
    err = capsys.readouterr().err
    assert err.count("\n") == 1
    assert __import__("re").match(rf"error: {says}", err), err


@pytest.mark.parametrize("preview", [True, False])
@pytest.mark.parametrize("content", ["", "[", b"\xff\xfe\x00{", [1, 2]], ids=["empty", "not JSON", "binary", "a list"])
def test_the_program_itself_refuses_a_cluster_file_that_is_not_a_description(tmp_path, content, preview):
    """Here the mock engine answers for the cluster without reading the file, as a real
    engine does (it reads Azure): the program's own check refuses it, before anything."""
    from tools.azure_mocks import existing_cluster

    path = write(tmp_path, "cluster.json", content)
    monitor = RecordingMonitor(AzureMocks(cluster=existing_cluster()))
    with pytest.raises(ConfigError, match=r"^invalid config aks-gpu:preflight\.clusterFile = \S*/cluster\.json: ") as raised:
        run_program(
            "dev",
            overrides={"existingCluster": TEAM, "gpuPool": {"vmSize": T4}, "preflight": {"clusterFile": path}},
            monitor=monitor,
            preview=preview,
        )
    assert "\n" not in str(raised.value) and monitor.registrations == []


@pytest.mark.parametrize("member", ["skusFile", "pricesFile", "clusterFile"])
def test_a_path_longer_than_the_system_takes_is_one_line(member):
    files = {"skusFile": "a" * 300, "usageFile": str(USAGE)} if member == "skusFile" else {member: "x/" * 1000 + "f.json"}
    extra = {"existingCluster": TEAM} if member == "clusterFile" else {}
    with pytest.raises(
        ConfigError,
        match=rf"^invalid config aks-gpu:preflight\.{member} = '?.{{100,}}\.\.\. \(\d+ characters\): (cannot be|expected an existing file)",
    ) as raised:
        planned_by(OfflineReader(), "dev", True, gpuPool={"vmSize": T4}, preflight=files, **extra)
    assert len(str(raised.value)) < 400


def test_a_file_inside_the_project_is_named_as_the_stack_file_names_it():
    """Relative paths are taken from the project directory, where Pulumi runs the program,
    and the message quotes the path as configured, not its base name alone."""
    with pytest.raises(
        ConfigError, match=r"^invalid config aks-gpu:preflight\.pricesFile = tests/fixtures/clusters/ml-aks\.json: no Items"
    ):
        planned_by(OfflineReader(), "dev", True, preflight={"pricesFile": "tests/fixtures/clusters/ml-aks.json"})


# --------------------------------------------------------------------------- what a path names (#44)


@contextmanager
def never_hangs():
    """A FIFO opened for reading waits for a writer: were the program to open one, the test
    would stop here and fail, not hang the suite. Nothing is timed: the guard only turns a
    hang into a failure."""
    signal.signal(signal.SIGALRM, lambda *_: pytest.fail("the run hung on a special file"))
    signal.alarm(120)
    try:
        yield
    finally:
        signal.alarm(0)


@pytest.mark.parametrize("what", sorted(SPECIAL))
def test_a_saved_file_that_is_no_regular_file_is_one_line_and_never_read(tmp_path, what):
    path = special(tmp_path, what)
    for member in ["clusterFile", "kubernetesFile", "pricesFile", "skusFile"]:
        files = {member: path, **({"usageFile": str(USAGE)} if member == "skusFile" else {})}
        with never_hangs():
            refusals(
                ConfigError,
                rf"^invalid config aks-gpu:preflight\.{member} = .*{SPECIAL[what]}",
                existingCluster=TEAM,
                gpuPool={"vmSize": T4},
                preflight=files,
            )


def test_a_saved_file_read_directly_is_refused_the_same_way_whatever_the_stat_said(tmp_path):
    """The render reads a clusterFile before the program checks its config: the reader itself
    stats first and never opens a FIFO (components/files.py)."""
    from components.cluster import cluster_facts

    with never_hangs(), pytest.raises(ConfigError, match=r"clusterFile = \S*/fifo\.json: is a FIFO"):
        cluster_facts.read_saved("aks-gpu:preflight.clusterFile", Path(special(tmp_path, "a FIFO")), cluster_facts.Named(None))


def test_a_saved_file_larger_than_the_bound_is_one_line(tmp_path, monkeypatch):
    """The bound (64 MiB) made small here, so that the test writes little."""
    from components import files
    from components.cost import prices

    monkeypatch.setattr(files, "LIMIT", 1000)
    path = write(tmp_path, "prices.json", {"Items": [{"armSkuName": T4, "retailPrice": 0.5, "productName": "x" * 2000}]})
    with pytest.raises(
        ConfigError, match=r"pricesFile = \S*/prices\.json: is 2,\d{3} bytes, more than the 1,000 bytes a file the program reads may be"
    ):
        prices.from_file(Path(path))


def test_a_saved_file_nested_deeper_than_azure_nests_is_one_line(tmp_path):
    deep: dict = {}
    for _ in range(900):
        deep = {"a": deep}
    path = write(tmp_path, "cluster.json", {"name": "team-aks", "location": "eastus", "agentPoolProfiles": [], "x": deep})
    with pytest.raises(ConfigError, match=r"clusterFile = \S*/cluster\.json: it is nested more than 32 levels deep"):
        planned_by(OfflineReader(), "dev", True, existingCluster=TEAM, gpuPool={"vmSize": T4}, preflight={"clusterFile": path})


def test_make_render_refuses_a_fifo_as_the_cluster_file_in_one_line(tmp_path, monkeypatch, capsys):
    fifo = special(tmp_path, "a FIFO")
    real = render.run_program
    fifo_file = {"existingCluster": TEAM, "gpuPool": {"vmSize": T4}, "preflight": {"clusterFile": fifo}}
    monkeypatch.setattr(render, "run_program", lambda stack, overrides, **kw: real(stack, overrides={**overrides, **fifo_file}, **kw))
    with never_hangs():
        assert render.main(["--stack", "dev", "--out", str(tmp_path / "out")]) == 1
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "clusterFile" in err and "is a FIFO" in err, err


# --------------------------------------------------------------------------- two pools of one name

TWICE = [
    {"name": "system", "mode": "System", "vmSize": "Standard_D4s_v5", "count": 1},
    {"name": "gpunp", "mode": "User", "vmSize": "Standard_NC4as_T4_v3", "count": 1},
    {"name": "GPUNP", "mode": "User", "vmSize": "Standard_NC24ads_A100_v4", "count": 2},
]


def test_a_saved_cluster_with_two_pools_of_one_name_is_refused_naming_the_file_and_the_pool(tmp_path):
    """Not the first adopted silently: refused by the plan of a preview and of a deployment, before anything is declared."""
    path = write(tmp_path, "cluster.json", {"name": "team-aks", "location": "eastus", "agentPoolProfiles": TWICE})
    for message in refusals(
        ConfigError,
        r"^invalid config aks-gpu:preflight\.clusterFile = \S*/cluster\.json: agentPoolProfiles holds two pools named",
        OfflineReader,
        existingCluster=TEAM,
        gpuPool={"name": "gpunp", "existing": "adopt"},
        preflight={"clusterFile": path},
    ):
        assert ': agentPoolProfiles holds two pools named "GPUNP" (items 1 and 2), and a cluster names each of its pools once' in message
        assert "\n" not in message


def test_azures_answer_with_two_pools_of_one_name_is_refused_as_azures(tmp_path):
    """The live read goes through the same check: Azure's answer is untrusted input too."""
    from tools.azure_mocks import existing_cluster

    reader = lambda: OfflineReader(cluster=existing_cluster(agentPoolProfiles=TWICE))  # noqa: E731
    for message in refusals(
        AzureReadError,
        "in Azure's answer, agentPoolProfiles holds two pools named",
        reader,
        existingCluster=TEAM,
        gpuPool={"name": "gpunp", "existing": "adopt"},
    ):
        assert message.startswith("aks-gpu:existingCluster team-rg/team-aks: reading the cluster (getManagedCluster): in Azure's answer")
