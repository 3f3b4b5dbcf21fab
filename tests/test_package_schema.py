"""The component package's schema, as a consumer's `pulumi package add` gets it: the provider host
started the way the Pulumi CLI starts a `runtime: python` plugin (`python package/ [flags] <engine
address>`), asked over gRPC (GetSchema), then held as a snapshot and validated against Pulumi's
package metaschema (pulumi/pulumi pkg/codegen/schema/pulumi.json, tests/fixtures/pulumi-package/).
Docs: docs/design/package.md."""

from __future__ import annotations

import ast
import json
import re
import sys
from pathlib import Path
from typing import Any

import jsonschema
import pytest

from components.environment import package
from components.environment.kinds import GPU_POOLS, GPU_STACK
from tools import package_args, package_schema
from tools.schema import stack_file_schema

ROOT = Path(__file__).resolve().parent.parent
METASCHEMA = ROOT / "tests" / "fixtures" / "pulumi-package" / "metaschema.json"
ENVIRONMENT = "aks-gpu:index:GpuEnvironment"
POOLS = "aks-gpu:index:GpuPools"
STACK = "aks-gpu:index:GpuStack"
PROOF = "aks-gpu:index:GpuProof"


@pytest.fixture(scope="module")
def served() -> dict[str, Any]:
    return package_schema.served_schema()


def environment(schema: dict[str, Any]) -> dict[str, Any]:
    return schema["resources"][ENVIRONMENT]


def stack_keys() -> dict[str, dict[str, Any]]:
    """The stack file's keys under the input's name: `aks-gpu:gpuPool` is gpuPool, `azure-native:location` location."""
    keys = stack_file_schema()["properties"]["config"]["properties"]
    return {package_args.RENAMED.get(k, k.removeprefix("aks-gpu:")): v for k, v in keys.items()}


def program_outputs() -> set[str]:
    """Every output the program can export: the keys components/environment/declare.py's `outputs` sets."""
    tree = ast.parse((ROOT / "components" / "environment" / "declare.py").read_text())
    function = next(n for n in tree.body if isinstance(n, ast.FunctionDef) and n.name == "outputs")
    keys = {
        n.slice.value
        for n in ast.walk(function)
        if isinstance(n, ast.Subscript) and isinstance(n.slice, ast.Constant) and isinstance(n.slice.value, str)
    }
    keys |= {k.value for n in ast.walk(function) if isinstance(n, ast.Dict) for k in n.keys if isinstance(k, ast.Constant)}
    return keys


def test_the_host_started_as_the_cli_starts_a_plugin_answers_getschema_with_each_component(served):
    assert served["name"] == "aks-gpu"
    assert served["version"] == package.project_version()
    assert list(served["resources"]) == [ENVIRONMENT, POOLS, STACK, PROOF]
    assert environment(served)["isComponent"] is True
    assert environment(served)["description"].startswith("GPU-ready AKS")


def test_the_environments_inputs_are_the_stack_files_keys_under_the_same_names_each_described(served):
    inputs = environment(served)["inputProperties"]
    assert set(inputs) == set(stack_keys())
    assert [name for name, spec in inputs.items() if not spec.get("description")] == []
    assert inputs["gpuPool"]["$ref"] == "#/types/aks-gpu:index:GpuPoolConfig"
    assert inputs["gpuPools"]["additionalProperties"]["$ref"] == "#/types/aks-gpu:index:GpuPoolSettings"
    assert inputs["protect"]["type"] == "boolean"
    # Every input decides what the environment declares: a plain value in every SDK.
    assert [name for name, spec in inputs.items() if spec.get("plain") is not True] == []


def test_every_key_of_the_stack_file_is_optional_and_a_nested_setting_that_needs_a_member_marks_it_required(served):
    assert environment(served).get("requiredInputs", []) == []
    types = served["types"]
    assert types["aks-gpu:index:ExistingClusterConfig"]["required"] == ["name", "resourceGroupName"]
    assert types["aks-gpu:index:BudgetConfig"]["required"] == ["amount", "contactEmails"]
    assert "required" not in types["aks-gpu:index:GpuPoolConfig"]
    assert types["aks-gpu:index:GpuPoolConfig"]["properties"]["nodeCount"]["type"] == "integer"
    assert types["aks-gpu:index:GpuPoolConfig"]["properties"]["vmSize"]["description"]


def test_the_environments_outputs_are_the_programs_stack_outputs_each_described(served):
    outputs = environment(served)["properties"]
    assert set(outputs) == program_outputs()
    assert [name for name, spec in outputs.items() if not spec.get("description")] == []
    # What every run exports is required; what some runs export (gpuGroups, estimatedCost, ...) is not.
    assert environment(served)["required"] == [
        "clusterName",
        "getCredentialsCommand",
        "gpuMetrics",
        "gpuPools",
        "kubeconfig",
        "resourceGroupName",
    ]


@pytest.mark.parametrize("kind", [GPU_POOLS, GPU_STACK], ids=lambda k: k.name)
def test_a_smaller_components_inputs_are_its_stack_file_keys_as_the_environment_takes_them_and_its_own_required_ones(served, kind):
    component = served["resources"][kind.type]
    inputs = component["inputProperties"]
    assert set(inputs) == {*(kind.keys or ()), *kind.own}
    # The same key is the same input, type and description, in every component.
    assert {key: inputs[key] for key in kind.keys or ()} == {key: environment(served)["inputProperties"][key] for key in kind.keys or ()}
    assert component["requiredInputs"] == sorted(name for name, own in kind.own.items() if own.required)
    # Every input decides what is declared, but a kubeconfig, which only signs the objects in (Kind.signs_in).
    assert [name for name, spec in inputs.items() if spec.get("plain") is not True] == (["kubeconfig"] if kind.signs_in else [])
    assert [name for name, spec in inputs.items() if not spec.get("description")] == []
    outputs = component["properties"]
    assert set(outputs) <= program_outputs() and [name for name, spec in outputs.items() if not spec.get("description")] == []


def test_the_schema_is_the_committed_snapshot(served):
    committed = package_schema.SNAPSHOT.read_text() if package_schema.SNAPSHOT.exists() else ""
    assert committed == package_schema.snapshot_text(served), "the package's schema changed; if intended, run `make snapshots`"


def python_patterns(node: Any) -> Any:
    """The metaschema with its ECMA-262 named groups, `(?<name>`, in Python's spelling, `(?P<name>`:
    Python's `re` knows no other (the version pattern names its parts)."""
    if isinstance(node, dict):
        return {
            k: re.sub(r"\(\?<(?=[A-Za-z])", "(?P<", v) if k == "pattern" and isinstance(v, str) else python_patterns(v)
            for k, v in node.items()
        }
    if isinstance(node, list):
        return [python_patterns(v) for v in node]
    return node


def metaschema_validator() -> jsonschema.protocols.Validator:
    meta = python_patterns(json.loads(METASCHEMA.read_text()))
    cls = jsonschema.validators.validator_for(meta)
    cls.check_schema(meta)
    return cls(meta, format_checker=cls.FORMAT_CHECKER)


def test_the_schema_is_valid_against_pulumis_package_metaschema(served):
    assert [f"{list(e.absolute_path)}: {e.message[:200]}" for e in metaschema_validator().iter_errors(served)] == []


def test_the_metaschema_check_refuses_a_schema_pulumi_would_refuse(served):
    broken = json.loads(json.dumps(served))
    broken["version"] = "one"
    broken["resources"][ENVIRONMENT]["inputProperties"]["protect"]["plain"] = "yes"
    assert len(list(metaschema_validator().iter_errors(broken))) == 2


def test_the_components_args_are_what_make_package_args_writes():
    assert package_args.ARGS_FILE.read_text() == package_args.render(), "run `make package-args`"


@pytest.mark.skipif(sys.version_info < (3, 11), reason="tomllib is Python 3.11's")
def test_the_packages_version_is_pyprojects():
    import tomllib

    assert package.project_version() == tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["version"]


def test_the_package_folder_is_a_python_plugin_that_installs_the_programs_locked_packages():
    """`pulumi package add .../package@<tag>` runs this folder (docs/design/package.md): PulumiPlugin.yaml's
    runtime is python, and pip installs the repository's hash-locked requirements into its venv."""
    import yaml

    plugin = yaml.safe_load((ROOT / "package" / "PulumiPlugin.yaml").read_text())
    assert plugin["runtime"]["name"] == "python"
    assert plugin["runtime"]["options"] == {"toolchain": "pip", "virtualenv": "venv"}
    lines = [line for line in (ROOT / "package" / "requirements.txt").read_text().splitlines() if line and not line.startswith("#")]
    assert lines == ["-r ../requirements.txt"]


PACKAGE_ADD = re.compile(r"aks-gpu/package@(v[0-9][0-9A-Za-z.+-]*|<[a-z]+>)")


def test_every_pulumi_package_add_line_names_the_tag_of_the_projects_version():
    """What a consumer copies checks out the release whose package this is (`v<version>`: pulumi/pulumi
    1b594989 sdk/go/common/workspace/plugins.go parsePluginSpecFromURL, gitSource.Download)."""
    pages = [ROOT / "README.md", ROOT / "docs" / "package.md", ROOT / "package" / "PulumiPlugin.yaml"]
    pages += sorted(p for p in (ROOT / "examples").glob("consumer-*/*") if p.suffix in (".md", ".yaml"))
    found = {str(p.relative_to(ROOT)): PACKAGE_ADD.findall(p.read_text()) for p in pages}
    assert found["README.md"] and found["docs/package.md"], "the README and the package's page give the line"
    tags = {tag for tags in found.values() for tag in tags}
    assert tags == {f"v{package.project_version()}"}, found
