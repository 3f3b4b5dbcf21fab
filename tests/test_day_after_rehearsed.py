"""The day after, rehearsed offline: the render writes the state a first `up` would leave
(`make render WRITE_STATE=`), marked as a rehearsal, and a render given a state (`STATE_FILE=`)
shows what `up` would change in each resource it holds, replace, delete or release. The guide's
hand-made cluster, adopted: its saved `az aks show` and `kubectl get` (examples/guide-cluster/)."""

from __future__ import annotations

import copy
import json
import re
from pathlib import Path
from typing import Any

import pytest
import yaml
from support.adoption import saved_cluster, saved_list
from support.guide_example import STACK_FILE
from support.plan import refusals

from components.errors import PreflightError
from components.ownership import saved_state
from tools import render
from tools.azure_mocks import OfflineReader

ADOPT = {"aks-gpu:gpuPools": {"gpunp": {"existing": "adopt"}}, "aks-gpu:devicePlugin": {"adopt": True}}
POOL = "gpu-pool-gpunp-agent-pool (azure-native:containerservice:AgentPool)"
REHEARSED = re.compile(r"offline: the state a first `up` would leave, rehearsed by the render on \d{4}-\d{2}-\d{2}, read from ")


def stack_file(folder: Path, **config: Any) -> Path:
    """The guide's stack file (its saved cluster and Kubernetes list) with `config` over it, as a
    stack of the reader's own: Pulumi.ml-prod.yaml in `folder`."""
    stack = yaml.safe_load(STACK_FILE.read_text())
    stack["config"].update(config)
    folder.mkdir(parents=True, exist_ok=True)
    (path := folder / "Pulumi.ml-prod.yaml").write_text(yaml.safe_dump(stack))
    return path


def rendered(capsys: pytest.CaptureFixture[str], config: Path, out: Path, *extra: str) -> tuple[int, str, str]:
    """`make render CONFIG_FILE=<config> ...`: the exit status, the summary (unfolded) and the error."""
    code = render.main(["--config-file", str(config), "--out", str(out), *extra])
    said = capsys.readouterr()
    return code, render.unfold(said.out), said.err


@pytest.fixture(scope="module")
def rehearsal(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Day 1 rehearsed: the adopting stack rendered, and the state its `up` would leave written."""
    folder = tmp_path_factory.mktemp("day1")
    code = render.main(
        ["--config-file", str(stack_file(folder, **ADOPT)), "--out", str(folder / "out"), "--write-state", str(folder / "state.json")]
    )
    assert code == 0
    return folder / "state.json"


def day_after(capsys, tmp_path: Path, state: Path, *extra: str, **config: Any) -> tuple[int, str, str]:
    return rendered(capsys, stack_file(tmp_path, **{**ADOPT, **config}), tmp_path / "out", "--state-file", str(state), *extra)


def changed(said: str) -> list[str]:
    """The summary's day-after lines: each changed resource, then its fields."""
    lines = said.splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith("the day after"))
    end = next(i for i in range(start + 1, len(lines)) if lines[i].startswith("Kubernetes objects:"))
    return lines[start + 1 : end]


# --------------------------------------------------------------------------- the rehearsal written


def test_the_rehearsal_is_a_version_3_export_whose_root_stack_says_it_is_a_rehearsal(rehearsal):
    export = json.loads(rehearsal.read_text())
    assert export["version"] == 3 and set(export["deployment"]) == {"manifest", "resources"}
    root, *resources = export["deployment"]["resources"]
    assert root["type"] == "pulumi:pulumi:Stack" and not root.get("parent")
    assert "not a deployment" in root["outputs"]["rehearsal"] and "written by the offline render" in root["outputs"]["rehearsal"]
    assert root["outputs"]["clusterName"] == "ml-prod", "the program's own outputs beside the mark"
    # As the engine names them: a top-level component's type stands alone (tools/urns.py).
    assert not [r["urn"] for r in resources if "pulumi:pulumi:Stack$" in r["urn"]]
    assert "urn:pulumi:ml-prod::aks-gpu::aks-gpu:azure:GpuPool::gpu-pool-gpunp" in [r["urn"] for r in resources]
    for resource in resources:
        assert {"urn", "custom", "type", "inputs", "outputs", "parent"} <= set(resource), resource["urn"]
        if provider := resource.get("provider"):
            assert re.fullmatch(r"urn:pulumi:\S+::\S+", provider), "a provider reference is <urn>::<id>"
    [pool] = [r for r in resources if r["type"] == "azure-native:containerservice:AgentPool"]
    assert pool["retainOnDelete"] is True and pool["inputs"]["maxCount"] == 3 and pool["id"]
    seen = {root["urn"]}
    for resource in resources:  # the engine's order: what a resource names comes before it
        assert resource["parent"] in seen, resource["urn"]
        seen.add(resource["urn"])


def test_the_rehearsal_reads_back_as_a_saved_state_with_each_entrys_inputs(rehearsal):
    state = saved_state.read_saved("aks-gpu:preflight.stateFile", rehearsal, "aks-gpu", "ml-prod")
    assert state.rehearsal is not None and "not a deployment" in state.rehearsal
    assert "rehearsal" not in state.outputs and state.outputs["clusterName"] == "ml-prod"
    [pool] = [e for e in state.resources.values() if e["type"] == "azure-native:containerservice:AgentPool"]
    assert pool["inputs"]["maxCount"] == 3 and pool["retainOnDelete"] is True


# --------------------------------------------------------------------------- the day after


def test_a_state_file_given_on_the_command_line_that_is_no_export_is_refused_in_one_line_naming_where_it_came_from(capsys, tmp_path):
    (broken := tmp_path / "state.json").write_text('{"version": 3}')
    code, _, err = day_after(capsys, tmp_path, broken)
    assert code == 1 and err.count("\n") == 1
    assert err.startswith("error: invalid config aks-gpu:preflight.stateFile = ") and "no deployment object" in err
    assert err.rstrip().endswith("(the file given with --state-file, which stands in for that key)")


def test_a_changed_max_count_shows_old_to_new_on_the_adopted_pool(capsys, tmp_path, rehearsal):
    code, said, _ = day_after(
        capsys, tmp_path, rehearsal, **{"aks-gpu:gpuPools": {"gpunp": {"existing": "adopt", "minCount": 0, "maxCount": 4}}}
    )
    assert code == 0
    lines = changed(said)
    assert lines[lines.index(f"~ update {POOL}") + 1] == "  ~ maxCount: 3 => 4"
    assert " held in the stack's state (" in said.splitlines()[0] and " 0 created" in said.splitlines()[0]
    assert REHEARSED.search(said) and f"read from {rehearsal}, given with --state-file (20 resources)" in said
    assert "  ~ maxCount: 3 => 4" in (tmp_path / "out" / "diff.txt").read_text().splitlines()


def test_a_dropped_adoption_shows_the_pool_released_not_deleted(capsys, tmp_path, rehearsal):
    pools = {"aks-gpu:gpuPools": {"gpu2": {"vmSize": "Standard_NC4as_T4_v3", "minCount": 0, "maxCount": 1}}}
    code, said, _ = day_after(capsys, tmp_path, rehearsal, **pools)
    assert code == 0
    released = f"- delete[retain] {POOL}: released: Pulumi forgets it, Azure keeps it"
    assert released in changed(said) and released in (tmp_path / "out" / "diff.txt").read_text()
    assert "+ create gpu-pool-gpu2-agent-pool (azure-native:containerservice:AgentPool)" in changed(said)
    assert "no longer declared: " in said.splitlines()[0]


def test_the_day_after_with_nothing_changed_is_quiet(capsys, tmp_path, rehearsal):
    """Day 2 takes off what only the adopting run declares (the DaemonSet's patchForce, which
    takes over kubectl's fields once); day 3, from the state day 2 leaves, changes nothing."""
    code, said, _ = day_after(capsys, tmp_path / "day2", rehearsal, "--write-state", str(tmp_path / "day2.json"))
    assert code == 0
    assert changed(said) == [
        "~ update nvidia-device-plugin-ds (kubernetes:apps/v1:DaemonSet)",
        '  - metadata.annotations.pulumi.com/patchForce: "true"',
    ]
    code, said, _ = day_after(capsys, tmp_path / "day3", tmp_path / "day2.json")
    assert code == 0
    assert "the day after: nothing changes in what the stack's state holds" in said
    assert " held in the stack's state (19 unchanged, 0 updated, 0 replaced)" in said.splitlines()[0]


def test_a_replacement_names_the_field_that_forces_it(capsys, tmp_path, rehearsal):
    created = {"aks-gpu:gpuPools": {"gpu2": {"vmSize": "Standard_NC4as_T4_v3", "minCount": 0, "maxCount": 1}}}
    assert day_after(capsys, tmp_path / "day2", rehearsal, "--write-state", str(tmp_path / "day2.json"), **created)[0] == 0
    bigger = {"aks-gpu:gpuPools": {"gpu2": {"vmSize": "Standard_NC8as_T4_v3", "minCount": 0, "maxCount": 1}}}
    code, said, _ = day_after(capsys, tmp_path / "day3", tmp_path / "day2.json", **bigger)
    assert code == 0
    lines = changed(said)
    [replaced] = [line for line in lines if line.startswith("+- replace gpu-pool-gpu2-agent-pool")]
    assert ": vmSize: AKS fixes it when a pool is created" in replaced
    assert lines[lines.index(replaced) + 1] == '  ~ vmSize: "Standard_NC4as_T4_v3" => "Standard_NC8as_T4_v3"'


def test_a_changed_proof_image_replaces_the_job_as_pulumi_kubernetes_forces_it(capsys, tmp_path, rehearsal):
    code, said, _ = day_after(
        capsys, tmp_path, rehearsal, **{"aks-gpu:mnistJob": {"image": "mcr.microsoft.com/azuredocs/samples-tf-mnist-demo:gpu"}}
    )
    assert code == 0
    lines = changed(said)
    [job] = [line for line in lines if line.startswith("+- replace mnist-job-gpunp (kubernetes:batch/v1:Job): ")]
    assert job.endswith(": metadata.name, spec.template: forced by pulumi-kubernetes (its diff.go forceNewProperties)")
    image = "  ~ spec.template.spec.containers[0].image: "
    assert [line for line in lines if line.startswith(image)][0].endswith(' => "mcr.microsoft.com/azuredocs/samples-tf-mnist-demo:gpu"')


def test_a_changed_vm_size_of_the_adopted_pool_is_refused_in_one_line(rehearsal):
    bigger = {"gpuPools": {"gpunp": {"existing": "adopt", "vmSize": "Standard_NC8as_T4_v3"}}, "devicePlugin": {"adopt": True}}
    preflight = {"clusterFile": "examples/guide-cluster/cluster.json", "kubernetesFile": "examples/guide-cluster/kubernetes.json"}
    for said in refusals(
        PreflightError, "gpunp.vmSize", OfflineReader, "ml-prod", STACK_FILE, **bigger, preflight={**preflight, "stateFile": str(rehearsal)}
    ):
        assert "'Standard_NC8as_T4_v3'" in said and "'Standard_NC4as_T4_v3'" in said and "would replace it" in said


# --------------------------------------------------------------------------- a rehearsal is never a real state


def engine_answer(export: dict[str, Any]) -> dict[str, dict[str, Any]]:
    """What readStackResourceOutputs answers of a stack whose state is `export` (pulumi/pulumi
    pkg/backend/backend.go GetStackResourceOutputs: URN -> type and outputs, the root Stack's too)."""
    return {r["urn"]: {"type": r["type"], "outputs": r.get("outputs") or {}} for r in export["deployment"]["resources"]}


def test_a_rehearsal_imported_into_the_stacks_own_state_is_refused_in_one_line(rehearsal):
    export = json.loads(rehearsal.read_text())
    answer = engine_answer(export)
    root = export["deployment"]["resources"][0]["outputs"]

    def reader() -> OfflineReader:  # what the engine answers a real run, not a file it was given
        return OfflineReader(cluster=saved_cluster(), kubernetes=saved_list(), stack=copy.deepcopy(answer), stack_outputs=dict(root))

    adopt = {"gpuPools": {"gpunp": {"existing": "adopt"}}, "devicePlugin": {"adopt": True}}
    for said in refusals(PreflightError, "is a rehearsal, not a deployment", reader, "ml-prod", STACK_FILE, **adopt):
        assert said.startswith("preflight: the state of stack ml-prod is a rehearsal") and "pulumi stack import" in said
        assert "written by the offline render" in said and "nothing was created" in said


def test_no_rehearsal_is_written_where_up_would_stop_and_the_render_says_why(capsys, tmp_path):
    """The tests' dev stack asks for a retired GPU size: a preview warns, a deployment stops."""
    code = render.main(["--stack", "dev", "--out", str(tmp_path / "out"), "--write-state", str(tmp_path / "state.json")])
    err = capsys.readouterr().err
    assert code == 1 and not (tmp_path / "state.json").exists()
    assert err.startswith(f"error: no state written to {tmp_path / 'state.json'}: a deployment stops here: preflight: ")
    assert "Standard_NC6" in err, "what stops it, in the program's own words"


def test_the_day_after_of_a_stack_that_creates_its_cluster_is_quiet_when_nothing_changed(capsys, tmp_path):
    """A created cluster with capacity groups (the state is read there too): the rehearsal's
    inputs are what the program declares, the cluster's and its pools' included."""
    groups = render.ROOT / "examples" / "gpu-groups" / "Pulumi.inference.yaml"
    state = tmp_path / "state.json"
    assert rendered(capsys, groups, tmp_path / "day1", "--write-state", str(state))[0] == 0
    code, said, _ = rendered(capsys, groups, tmp_path / "day2", "--state-file", str(state))
    assert code == 0 and "the day after: nothing changes in what the stack's state holds" in said
    assert " 0 imported (0 then updated in place), 0 created -> " in said.splitlines()[0]


def test_a_rehearsal_imported_into_a_created_clusters_state_is_refused_in_one_line(capsys, tmp_path):
    groups = render.ROOT / "examples" / "gpu-groups" / "Pulumi.inference.yaml"
    assert rendered(capsys, groups, tmp_path / "day1", "--write-state", str(tmp_path / "state.json"))[0] == 0
    export = json.loads((tmp_path / "state.json").read_text())
    answer, root = engine_answer(export), export["deployment"]["resources"][0]["outputs"]

    def reader() -> OfflineReader:
        return OfflineReader(stack=copy.deepcopy(answer), stack_outputs=dict(root))

    for said in refusals(PreflightError, "is a rehearsal, not a deployment", reader, "inference", groups):
        assert said.startswith("preflight: the state of stack inference is a rehearsal")
