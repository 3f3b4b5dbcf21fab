"""The offline what-if knows the day after (#52, 3): given what `pulumi stack export` wrote
(`preflight.stateFile`), the offline render plans as `up` would on that state: what the state
holds is not imported or counted as created again, and a slip the state refuses is refused
offline too. A file that is not this stack's export is one line naming the key. Each in a
preview and a deployment; also what the render says of the pools it read, the ConfigMap's data
in manifests.yaml, and the guide's example rendered where it ships."""

from __future__ import annotations

import copy
import json
import math
import re
from pathlib import Path
from typing import Any

import pytest
import yaml
from support.adoption import guide_as_listed, saved_cluster
from support.guide_example import STACK_FILE
from support.plan import MODES, planned_by, refusals
from support.stack_export import exported, saved

from components.errors import ConfigError, PreflightError
from tools import render
from tools.azure_mocks import UNREAD_POOLS, AzureMocks, OfflineReader
from tools.mock_engine import ProgramRun, RecordingMonitor, run_program

BOTH = pytest.mark.parametrize("preview", [True, False], ids=["preview", "deployment"])
POOL = "azure-native:containerservice:AgentPool"
ADOPT = {"gpuPools": {"gpunp": {"existing": "adopt"}}, "devicePlugin": {"adopt": True}}
SAVED = {"clusterFile": "examples/guide-cluster/cluster.json", "kubernetesFile": "examples/guide-cluster/kubernetes.json"}
KEY = "aks-gpu:preflight.stateFile"


@pytest.fixture(scope="module")
def adopted(tmp_path_factory: pytest.TempPathFactory) -> str:
    """The export of the state the adopting `up` of the guide's cluster left."""
    return saved(tmp_path_factory.mktemp("state") / "state.json", exported(guide_as_listed(preview=False)))


def settings_after(state_file: str, **overrides: Any) -> dict[str, Any]:
    return {**ADOPT, **overrides, "preflight": {**SAVED, "stateFile": state_file}}


def day_after(state_file: str, preview: bool, monitor: RecordingMonitor | None = None, **overrides: Any):
    """The offline render's run of the guide's stack with its state saved: the mocks' reader reads every file the config names."""
    monitor = monitor or RecordingMonitor(AzureMocks())
    return run_program(
        "ml-prod", overrides=settings_after(state_file, **overrides), monitor=monitor, preview=preview, stack_file=STACK_FILE
    )


def day_after_refusals(error: type[Exception], match: str, state_file: str, **overrides: Any) -> list[str]:
    """The line `day_after` of a preview and of a deployment stops with, from the plan: the
    offline render's reader reads the files as that run's does, and the plan comes before
    anything is declared (support/plan.py `refusals`)."""
    return refusals(error, match, OfflineReader, "ml-prod", STACK_FILE, **settings_after(state_file, **overrides))


@pytest.fixture(scope="module")
def after_adopting(adopted: str) -> dict[bool, ProgramRun]:
    """`day_after(adopted, preview)` of a preview (True) and of a deployment (False), run once for the module's tests."""
    return {preview: day_after(adopted, preview) for preview in MODES}


# --------------------------------------------------------------------------- the day after adopting


@BOTH
def test_the_day_after_adopting_the_render_imports_nothing_again_and_says_whose_state_it_read(adopted, after_adopting, preview):
    first = guide_as_listed(preview=False)
    run = after_adopting[preview]
    assert len([r for r in first.resources if r.options.get("import")]) == 3, "the adopting run imported pool, namespace, DaemonSet"
    assert [r.urn for r in run.resources if r.options.get("import")] == []
    assert not [line for line in run.infos if line.startswith("adopt:")]
    assert "adopted earlier (the stack's state holds it)" in " ".join(run.infos)
    assert f"offline: the stack's state read from {adopted} ({len(first.resources) + 1} resources)" in run.notes


def test_the_summary_of_the_day_after_counts_what_the_state_holds_apart_not_as_created(after_adopting):
    run = after_adopting[True]
    first = render.counts(guide_as_listed(preview=True))
    assert first.startswith(f"{len(run.resources)} resources: 3 imported") and "0 imported" not in first
    # The one update: the DaemonSet's patchForce, which only the adopting run declares (device_plugin_spec.py PATCH_FORCE).
    assert render.counts(run) == f"{len(run.resources)} resources: {len(run.resources)} held in the stack's state " + (
        f"({len(run.resources) - 1} unchanged, 1 updated, 0 replaced), 0 imported (0 then updated in place), 0 created"
    )


def test_a_slip_the_state_refuses_is_refused_offline_the_day_after(adopted):
    """The entry lost `existing: adopt`: the state's record of the pool's tags says adopted,
    though the saved `az aks show` (made before adopting) carries none."""
    slip = {"gpuPools": {"gpunp": {"vmSize": "Standard_NC4as_T4_v3"}}}
    day_after_refusals(PreflightError, "the pool gpunp is the owner's, adopted by this stack", adopted, **slip)


@BOTH
def test_an_export_of_a_stack_that_never_deployed_renders_as_a_first_up(tmp_path, preview):
    never = saved(tmp_path / "state.json", {"version": 3, "deployment": {"manifest": {"time": "2026-11-28T10:00:00Z"}}})
    run = day_after(never, preview)
    assert len([r for r in run.resources if r.options.get("import")]) == 3 and run.held == frozenset()


NEVER_DEPLOYED = [
    ({"manifest": {"time": "2026-11-28T10:00:00Z"}}, "no resources"),
    (
        {
            "resources": [
                {"urn": "urn:pulumi:ml-prod::aks-gpu::pulumi:pulumi:Stack::aks-gpu-ml-prod", "custom": False, "type": "pulumi:pulumi:Stack"}
            ]
        },
        "only the root Stack, with no outputs",
    ),
]


@BOTH
@pytest.mark.parametrize(("deployment", "why"), NEVER_DEPLOYED, ids=["no resources", "only the root Stack"])
def test_the_render_says_in_one_line_that_the_export_it_read_never_deployed(tmp_path, preview, deployment, why):
    never = saved(tmp_path / "state.json", {"version": 3, "deployment": deployment})
    run = day_after(never, preview)
    said = f"offline: the stack's state read from {never}: no deployment of it has completed ({why}), so this is a first `up`"
    assert said in run.notes and run.held == frozenset()


@BOTH
def test_a_resource_pending_delete_in_the_export_is_not_held(tmp_path, preview):
    """readStackResourceOutputs skips a resource marked `delete` (pkg/backend/backend.go GetStackResourceOutputs)."""
    export = exported(guide_as_listed(preview=False))
    for resource in export["deployment"]["resources"]:
        resource["delete"] = resource["type"] == POOL
    run = day_after(saved(tmp_path / "state.json", export), preview)
    assert [r.type for r in run.resources if r.options.get("import")] == [POOL]


def test_a_urn_twice_with_the_old_one_pending_delete_is_read_as_a_replacement_leaves_it(tmp_path):
    """A replacement's old state stays beside the new one, marked `delete`, until it is deleted:
    Pulumi's check allows that (pkg/resource/deploy/snapshot.go VerifyIntegrity), and so does the read."""
    export = exported(guide_as_listed(preview=False))
    [pool] = [r for r in export["deployment"]["resources"] if r["type"] == POOL]
    export["deployment"]["resources"].append({**copy.deepcopy(pool), "delete": True})
    run = day_after(saved(tmp_path / "state.json", export), True)
    assert not [r for r in run.resources if r.type == POOL and r.options.get("import")], "the pool is held, not imported again"


# --------------------------------------------------------------------------- a file that is not this stack's export


def bad(export: dict[str, Any], how: str) -> bytes:
    """The export broken one way."""
    resources = export["deployment"]["resources"]
    if how == "not UTF-8":
        return json.dumps(export).encode()[:-1] + b"\xff}"
    if how == "not JSON":
        return json.dumps(export).encode()[:-9]
    if how == "NaN":
        resources[1]["outputs"]["count"] = math.nan
        return json.dumps(export, allow_nan=True).encode()
    if how == "a number past Python's limit":
        return json.dumps(export).replace('"version": 3', '"version": ' + "9" * 5000).encode()
    if how == "a number past a float's range":
        return json.dumps(export).replace('"version": 3', '"version": 3, "past": 1e400').encode()
    if how == "a URN twice":
        resources.append(copy.deepcopy(resources[1]))
    changes = {
        "an old version": lambda: export.update(version=1),
        "resources not a list": lambda: export["deployment"].update(resources={"urn": "x"}),
        "a URN not a string": lambda: resources[1].update(urn=7),
        "outputs not an object": lambda: resources[1].update(outputs=["a"]),
        "delete not a bool": lambda: resources[1].update(delete="yes"),
        "inputs not an object": lambda: resources[1].update(inputs=["a"]),
        "retainOnDelete not a bool": lambda: resources[1].update(retainOnDelete="yes"),
        "another stack's": lambda: resources[1].update(urn=resources[1]["urn"].replace("urn:pulumi:ml-prod::", "urn:pulumi:prod::")),
        "another project's": lambda: resources[1].update(urn=resources[1]["urn"].replace("::aks-gpu::", "::other::", 1)),
        "a lone surrogate": lambda: resources[1].update(type="\ud800"),
        "a line break in a URN": lambda: resources[1].update(urn=resources[1]["urn"] + "\n\u202e"),
        "a URN twice": lambda: None,
        "a secret's plaintext not JSON": lambda: resources[1]["outputs"].update(
            k={"4dabf18193072939515e22adb298388d": "1b47061264138c4ac30d75fd1eb44270", "plaintext": "NaN"}
        ),
    }
    changes[how]()
    return json.dumps(export).encode()


BROKEN = [
    ("not UTF-8", "not UTF-8 text"),
    ("not JSON", "not JSON"),
    ("NaN", "NaN is not a JSON number"),
    ("a number past Python's limit", "not JSON"),
    ("a number past a float's range", "not JSON (1e400 is past the largest number a float holds)"),
    ("a URN twice", "is there twice, neither marked for deletion, which Pulumi's own check refuses"),
    ("an old version", "version is 1"),
    ("resources not a list", "deployment.resources is dict, not a list"),
    ("a URN not a string", "deployment.resources[1]: urn is 7, not a string"),
    ("outputs not an object", 'deployment.resources[1]: outputs is ["a"], not an object'),
    ("delete not a bool", 'deployment.resources[1]: delete is "yes", not true or false'),
    ("inputs not an object", 'deployment.resources[1]: inputs is ["a"], not an object'),
    ("retainOnDelete not a bool", 'deployment.resources[1]: retainOnDelete is "yes", not true or false'),
    ("another stack's", "not of stack ml-prod of project aks-gpu; save this stack's own state: `pulumi stack export --stack ml-prod"),
    ("another project's", "not of stack ml-prod of project aks-gpu"),
    ("a lone surrogate", "a lone UTF-16 surrogate ('\\ud800')"),
    ("a line break in a URN", "has a character no URN or type has"),
    ("a secret's plaintext not JSON", "deployment.resources[1].outputs: a secret's plaintext is not JSON text"),
]


@pytest.mark.parametrize(("how", "said"), BROKEN, ids=[b[0] for b in BROKEN])
def test_a_state_file_that_is_not_this_stacks_export_is_one_line_naming_the_key_before_anything_is_registered(tmp_path, how, said):
    path = tmp_path / "state.json"
    path.write_bytes(bad(copy.deepcopy(exported(guide_as_listed(preview=False))), how))
    for message in day_after_refusals(ConfigError, f"^invalid config {re.escape(KEY)} = ", str(path)):
        assert message.startswith(f"invalid config {KEY} = ") and said in message, message
        assert "\n" not in message and "\u202e" not in message and len(message) < 1000


def test_a_state_file_without_an_existing_cluster_is_refused_as_the_other_saved_files_are(adopted):
    for said in refusals(ConfigError, f"^invalid config {re.escape(KEY)} = ", preflight={"stateFile": adopted}):
        assert said.startswith(f"invalid config {KEY} = ") and "only with aks-gpu:existingCluster" in said


# --------------------------------------------------------------------------- what the render says and writes


def test_the_render_does_not_say_the_pools_were_not_read_when_the_saved_cluster_described_them():
    """What the render says it assumed is its reader's notes (a run's `notes`), which the plan's
    reads make: asked of the plan of a preview and of a deployment, each with a fresh reader."""
    for preview in MODES:
        for overrides in ({"gpuPools": {"gpunp": {"existing": "use"}}}, ADOPT):
            planned_by(reader := OfflineReader(), "ml-prod", preview, STACK_FILE, **overrides)
            assert reader.notes, "the reader says where it read the cluster from"
            assert UNREAD_POOLS not in reader.notes and "GPU pools were not read" not in " ".join(reader.notes)
        # Where it described no cluster, it still says so.
        planned_by(reader := OfflineReader(), "dev", preview, gpuPool={"vmSize": "Standard_NC4as_T4_v3"})
        assert UNREAD_POOLS in reader.notes


def test_a_pool_the_saved_cluster_runs_aks_managed_is_refused_a_switch_offline_as_a_preview_refuses_it(tmp_path):
    cluster = saved_cluster()
    [gpunp] = [p for p in cluster["agentPoolProfiles"] if p["name"] == "gpunp"]
    gpunp["gpuProfile"] = {"nvidia": {"managementMode": "Managed"}}
    (tmp_path / "cluster.json").write_text(json.dumps(cluster))
    settings = {
        "gpuPools": {"gpunp": {"vmSize": "Standard_NC4as_T4_v3"}},
        "preflight": {**SAVED, "clusterFile": str(tmp_path / "cluster.json")},
    }
    for said in refusals(
        PreflightError, "node pool gpunp in cluster ml-prod runs aks-managed", OfflineReader, "ml-prod", STACK_FILE, **settings
    ):
        assert "cannot switch" in said


def test_manifests_yaml_holds_the_proof_scripts_configmap_data(dev, tmp_path: Path):
    """What `make render` writes of the dev stack's run (render.write; the shared run: conftest's `dev`)."""
    render.write(dev, tmp_path)
    [config_map] = [d for d in yaml.safe_load_all((tmp_path / "manifests.yaml").read_text()) if d["kind"] == "ConfigMap"]
    assert config_map["data"]["train_mnist.py"] == (Path(render.ROOT) / "proof" / "train_mnist.py").read_text()


def test_the_guides_example_renders_where_it_ships_with_its_own_saved_files(tmp_path: Path, capsys):
    config_file = STACK_FILE.relative_to(render.ROOT)
    assert render.main(["--config-file", str(config_file), "--out", str(tmp_path)]) == 0, capsys.readouterr().err
    said = render.unfold(capsys.readouterr().out)
    assert said.startswith("aks-gpu ml-prod: ")
    assert "offline: cluster ml-rg/ml-prod read from examples/guide-cluster/cluster.json" in said
    assert "offline: what the cluster runs in Kubernetes read from examples/guide-cluster/kubernetes.json" in said
    assert (tmp_path / "manifests.yaml").is_file()


def test_the_day_after_renders_from_a_stack_file_that_names_the_export(adopted, tmp_path: Path, capsys):
    stack = yaml.safe_load(STACK_FILE.read_text())
    stack["config"]["aks-gpu:gpuPools"] = ADOPT["gpuPools"]
    stack["config"]["aks-gpu:devicePlugin"] = ADOPT["devicePlugin"]
    stack["config"]["aks-gpu:preflight"]["stateFile"] = adopted
    (tmp_path / "Pulumi.ml-prod.yaml").write_text(yaml.safe_dump(stack))
    assert render.main(["--config-file", str(tmp_path / "Pulumi.ml-prod.yaml"), "--out", str(tmp_path / "out")]) == 0
    said = render.unfold(capsys.readouterr().out)
    assert " 0 imported (0 then updated in place), 0 created" in said.splitlines()[0]
    assert f"offline: the stack's state read from {adopted}" in said
