"""The stack files' JSON Schema: generated from the config's own definitions, fresh, used by
every stack file, and in agreement with the parser."""

from __future__ import annotations

import json

import jsonschema
import pytest
from support.stack_schema import SCHEMA, VALIDATOR, stack_file_problems

from components import stack as config
from components.errors import ConfigError
from tools import schema
from tools.stack_files import ROOT, stacks


def schema_errors(cfg: dict) -> list[str]:
    return [e.message for e in VALIDATOR.iter_errors({"config": cfg})]


def parser_error(cfg: dict) -> str:
    raw = {k: v if isinstance(v, str) else json.dumps(v) for k, v in cfg.items()}
    try:
        config.parse(raw, "aks-gpu", "dev")
    except ConfigError as error:
        return str(error)
    return ""


def test_the_committed_schema_is_what_make_schema_generates():
    assert schema.SCHEMA_FILE.read_text() == schema.render(), "stale: run `make schema`"


def test_the_schema_itself_is_valid_json_schema():
    jsonschema.Draft202012Validator.check_schema(SCHEMA)


@pytest.mark.parametrize("stack", stacks())
def test_every_stack_file_names_the_schema_for_the_editor_and_passes_it(stack):
    assert stack_file_problems(ROOT / f"Pulumi.{stack}.yaml") == []


def test_every_key_and_member_has_a_type_a_default_and_a_description():
    keys = SCHEMA["properties"]["config"]["properties"]
    assert set(keys) == {*config.known_keys(), config.LOCATION_KEY}
    for key, spec in keys.items():
        assert spec.get("description") and "default" in spec, key
    for name, definition in SCHEMA["$defs"].items():
        if name == "secureValue":
            continue
        for member, spec in definition["properties"].items():
            required = member in definition.get("required", [])
            assert spec.get("description") and ("default" in spec or required), f"{name}.{member}"
            assert "type" in spec or "anyOf" in spec or "enum" in spec or "$ref" in spec, f"{name}.{member}"


@pytest.mark.parametrize(
    "cfg",
    [
        {"aks-gpu:gpuPool": {"vmsize": "Standard_NC6"}},
        {"aks-gpu:gpupool": {"vmSize": "Standard_NC6"}},
        {"aks-gpu:gpuPool": {"nodeCount": "3"}},
        {"aks-gpu:gpuPool": {"nodeCount": 1001}},
        {"aks-gpu:gpuPool": {"name": "GPU"}},
        {"aks-gpu:gpuPool": {"gen2": "yes"}},
        {"aks-gpu:clusterTier": "Gold"},
        {"aks-gpu:kubernetesVersion": "1.3"},
        {"aks-gpu:access": {"mode": "entra", "adminGroupObjectIds": ["not-a-guid"]}},
        {"aks-gpu:access": {"authorizedIpRanges": ["203.0.113.0/24", "203.0.113.0/24"]}},
        {"aks-gpu:mnistJob": {"image": "Not An Image"}},
        {"aks-gpu:upgrade": {"channel": "weekly"}},
        {"azure-native:location": "East US"},
    ],
)
def test_what_the_schema_refuses_the_parser_refuses_too(cfg):
    assert schema_errors(cfg), "the schema refuses it"
    assert parser_error(cfg), "so does the program"


@pytest.mark.parametrize(
    "cfg",
    [
        {},
        {"aks-gpu:gpuPool": {"vmSize": "Standard_NC4as_T4_v3", "minCount": 0, "maxCount": 3, "gen2": True}},
        {"aks-gpu:kubernetesVersion": "1.33", "aks-gpu:clusterName": "", "aks-gpu:protect": True},
        {"aks-gpu:access": {"mode": "entra", "deployerObjectId": "5f1c2d3e-4a5b-4c6d-8e7f-9a0b1c2d3e4f"}},
        {"azure-native:location": "westeurope", "kubernetes:context": "other", "azure-native:subscriptionId": "x"},
    ],
)
def test_what_the_schema_accepts_the_parser_accepts(cfg):
    assert schema_errors(cfg) == []
    assert parser_error(cfg) == ""


def test_a_secret_is_accepted_wherever_a_string_is():
    secret = {"secure": "v1:abc"}
    assert schema_errors({"aks-gpu:clusterName": secret, "aks-gpu:gpuPool": {"vmSize": secret}}) == []
    assert schema_errors({"aks-gpu:gpuPool": {"nodeCount": secret}}), "not where a number is"
