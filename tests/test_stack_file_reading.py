"""A stack file is read as Pulumi's CLI reads it (tools/stack_yaml.py, tools/yaml_readers.py):
a value YAML 1.1 (PyYAML), YAML 1.2 (make lint's check-jsonschema) and the CLI (yaml.v3) read
differently is refused in one line that says to quote it; what all three read alike reaches
the program as the CLI hands it over. And an `azure-native:` key the provider does not have is
refused with a suggestion, as an unknown `aks-gpu:` key is (components/config/providers.py)."""

from __future__ import annotations

import datetime
import json
import math
import os
import re
import subprocess
import sys
from pathlib import Path

import jsonschema
import pulumi
import pulumi_azure_native.config.vars as azure_native_vars
import pytest

from components.config import ConfigError, parse, providers
from tools import stack_files, stack_yaml
from tools.azure_mocks import AzureMocks
from tools.mock_engine import RecordingMonitor, run_program
from tools.stack_files import ROOT, SavedFileError, as_cli_string, stack_config
from tools.yaml_readers import GoTime, go_scalar, yaml11_scalar, yaml12_scalar

NAN = "NaN"
TIME = "2026-01-01 00:00:00 +0000 UTC"
# What each reader makes of a plain scalar, as measured with the real readers: PyYAML 6.0.3's
# SafeLoader; check-jsonschema 0.39.0's loader (ruamel.yaml 0.19.1); and gopkg.in/yaml.v3 v3.0.1
# through LoadProjectStackBytes' decode, write and decode again, then object.MarshalString
# (pulumi/pulumi sdk/go/common/workspace/loaders.go, resource/config/object.go).
# Columns: written, YAML 1.1, YAML 1.2, the CLI's reading, what the CLI hands the program at
# the top and inside an object (None: it cannot load the file).
READ = [
    ("yes", True, "yes", "yes", "yes", '{"m":"yes"}'),
    ("no", False, "no", "no", "no", '{"m":"no"}'),
    ("on", True, "on", "on", "on", '{"m":"on"}'),
    ("off", False, "off", "off", "off", '{"m":"off"}'),
    ("y", "y", "y", "y", "y", '{"m":"y"}'),
    ("n", "n", "n", "n", "n", '{"m":"n"}'),
    ("True", True, True, True, "true", '{"m":true}'),
    ("TRUE", True, True, True, "true", '{"m":true}'),
    ("~", None, None, None, "", '{"m":null}'),
    ("null", None, None, None, "", '{"m":null}'),
    ("0o17", "0o17", 15, 15, "15", '{"m":15}'),
    ("017", 15, 17, 15, "15", '{"m":15}'),
    ("1_000", 1000, 1000, 1000, "1000", '{"m":1000}'),
    ("0x1F", 31, 31, 31, "31", '{"m":31}'),
    ("1:20", 80, "1:20", "1:20", "1:20", '{"m":"1:20"}'),
    (".inf", math.inf, math.inf, math.inf, None, None),
    (".nan", NAN, NAN, NAN, None, None),
    ("2026-01-01", datetime.date(2026, 1, 1), "2026-01-01", GoTime(TIME), TIME, f'{{"m":"{TIME}"}}'),
    ("1e3", "1e3", 1000.0, 1000, "1000", '{"m":1000}'),
]
DISPUTED = {"yes", "no", "on", "off", "0o17", "017", "1:20", "2026-01-01", "1e3"}
AGREED = [row for row in READ if row[0] not in DISPUTED and row[4] is not None]
HANDED = [row for row in READ if row[4] is not None]


def same(a, b) -> bool:
    if isinstance(b, str) and b == NAN:
        return isinstance(a, float) and math.isnan(a)
    return type(a) is type(b) and a == b


def stack_file(tmp_path: Path, body: str) -> Path:
    path = tmp_path / "Pulumi.reading.yaml"
    path.write_text(f"config:\n{body}")
    return path


@pytest.mark.parametrize(("text", "yaml11", "yaml12", "cli", "top", "inside"), READ, ids=[row[0] for row in READ])
def test_each_reader_reads_a_plain_scalar_as_the_real_one_does(text, yaml11, yaml12, cli, top, inside):
    assert same(yaml11_scalar(text), yaml11) and same(yaml12_scalar(text), yaml12) and same(go_scalar(text), cli)


@pytest.mark.parametrize(("text", "yaml11", "yaml12", "cli", "top", "inside"), HANDED, ids=[row[0] for row in HANDED])
def test_what_the_cli_hands_the_program_is_what_go_writes(text, yaml11, yaml12, cli, top, inside):
    assert (as_cli_string(cli), as_cli_string({"m": cli})) == (top, inside)


@pytest.mark.parametrize("text", sorted(DISPUTED))
@pytest.mark.parametrize("where", ["top", "inside an object"])
def test_a_value_the_readers_read_differently_for_a_key_that_takes_a_word_is_refused_in_one_line_saying_to_quote_it(tmp_path, text, where):
    body = f"  aks-gpu:clusterName: {text}\n" if where == "top" else f"  aks-gpu:preflight:\n    mode: {text}\n"
    with pytest.raises(SavedFileError) as error:
        stack_config("reading", stack_file(tmp_path, body))
    key = "aks-gpu:clusterName" if where == "top" else "aks-gpu:preflight.mode"
    said = str(error.value)
    assert said.startswith(f"Pulumi.reading.yaml: {key} = {text}: YAML readers disagree on this value (")
    assert said.endswith(f'; quote it "{text}"') and "\n" not in said and "true or false" not in said


@pytest.mark.parametrize("text", ["yes", "no", "on", "off"])
@pytest.mark.parametrize("key", ["aks-gpu:protect", "aks-gpu:gpuPool.spot"])
def test_a_yaml_11_boolean_for_a_key_that_takes_a_boolean_is_told_to_write_true_or_false_not_to_quote_it(tmp_path, text, key):
    body = f"  {key}: {text}\n" if "." not in key else f"  aks-gpu:gpuPool:\n    spot: {text}\n"
    with pytest.raises(SavedFileError) as error:
        stack_config("reading", stack_file(tmp_path, body))
    assert str(error.value).startswith(f"Pulumi.reading.yaml: {key} = {text}: ") and str(error.value).endswith("; write true or false")


def test_a_key_the_schema_does_not_know_is_told_both_ways(tmp_path):
    with pytest.raises(SavedFileError) as error:
        stack_config("reading", stack_file(tmp_path, "  team:flag: off\n"))
    assert str(error.value).endswith('; write true or false, or quote it "off"')


def test_spot_yes_says_what_each_reader_reads_and_what_to_write(tmp_path):
    with pytest.raises(
        SavedFileError, match=re.escape("YAML 1.1 reads the boolean true, YAML 1.2 and Pulumi's CLI a string); write true or false")
    ):
        stack_config("reading", stack_file(tmp_path, "  aks-gpu:gpuPool:\n    spot: yes\n"))


@pytest.mark.parametrize("text", [".inf", ".nan", "-.inf"])
def test_infinity_and_nan_are_refused_the_cli_cannot_load_them(tmp_path, text):
    with pytest.raises(
        SavedFileError,
        match=rf"^Pulumi.reading.yaml: aks-gpu:cost.maxHourly = {re.escape(text)}: Pulumi's CLI cannot load this value \(json: unsupported value: ",
    ):
        stack_config("reading", stack_file(tmp_path, f"  aks-gpu:cost:\n    maxHourly: {text}\n"))


@pytest.mark.parametrize(("text", "yaml11", "yaml12", "cli", "top", "inside"), AGREED, ids=[row[0] for row in AGREED])
def test_a_value_all_readers_read_alike_reaches_the_program_as_the_cli_hands_it(tmp_path, text, yaml11, yaml12, cli, top, inside):
    given = stack_config("reading", stack_file(tmp_path, f"  aks-gpu:k: {text}\n  aks-gpu:o:\n    m: {text}\n"))
    assert (given["aks-gpu:k"], given["aks-gpu:o"]) == (top, inside)


def test_a_quoted_value_is_a_string_for_every_reader_and_the_program_judges_it(tmp_path):
    given = stack_config("reading", stack_file(tmp_path, '  aks-gpu:gpuPool:\n    spot: "yes"\n'))
    assert given["aks-gpu:gpuPool"] == '{"spot":"yes"}'
    with pytest.raises(ConfigError, match=r"^invalid config aks-gpu:gpuPool.spot = 'yes': expected true or false"):
        parse(given, "aks-gpu", "reading")


@pytest.mark.parametrize("preview", [True, False])
def test_unquoted_mode_off_stops_the_render_and_the_tests_before_anything_is_registered(tmp_path, preview):
    monitor = RecordingMonitor(AzureMocks())
    path = stack_file(tmp_path, "  aks-gpu:preflight:\n    mode: off\n")
    with pytest.raises(SavedFileError, match=r"aks-gpu:preflight.mode = off: YAML readers disagree") as error:
        run_program("dev", stack_file=path, monitor=monitor, preview=preview)
    assert isinstance(error.value, pulumi.RunError) and monitor.registrations == []
    assert str(error.value).endswith('; quote it "off"'), "mode takes a word: quoting it is the answer, not true or false"


def test_a_key_the_readers_read_differently_is_refused(tmp_path):
    path = stack_file(tmp_path, "  aks-gpu:gpuPools:\n    on:\n      vmSize: Standard_NC4as_T4_v3\n")
    with pytest.raises(
        SavedFileError,
        match=r'^Pulumi.reading.yaml: aks-gpu:gpuPools.on \(a key\): YAML readers disagree on this key \(.*\); quote it "on"$',
    ):
        stack_config("reading", path)


def test_a_key_given_twice_is_refused_as_the_cli_refuses_it(tmp_path):
    path = stack_file(tmp_path, "  aks-gpu:gpuPool:\n    spot: true\n    spot: false\n")
    with pytest.raises(
        SavedFileError, match=r"aks-gpu:gpuPool.spot \(a key\): given twice \(lines 3 and 4\): Pulumi's CLI refuses the file"
    ):
        stack_config("reading", path)


def test_a_key_set_to_null_reaches_the_program_empty_as_from_the_cli(tmp_path):
    assert stack_config("reading", stack_file(tmp_path, "  aks-gpu:clusterName: ~\n"))["aks-gpu:clusterName"] == ""


def test_objects_are_handed_over_as_go_writes_json():
    value = {"b": [1.0, 0.5, 1e21, 1e-7, 1e16], "a": "<x & y>", "é": None}
    assert as_cli_string(value) == '{"a":"\\u003cx \\u0026 y\\u003e","b":[1,0.5,1e+21,1e-7,10000000000000000],"é":null}'


def test_the_projects_files_are_read_alike_by_every_reader():
    done = subprocess.run(
        [sys.executable, "-m", "tools.stack_yaml", "Pulumi.yaml", *(f"Pulumi.{s}.yaml" for s in stack_files.stacks())],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=False,
    )
    assert (done.returncode, done.stderr) == (0, "")


def test_make_lints_check_names_every_disputed_value_one_line_each(tmp_path, capsys):
    (tmp_path / "Pulumi.yaml").write_text("name: aks-gpu\n")
    path = stack_file(tmp_path, "  protect: yes\n  aks-gpu:gpuPool:\n    nodeCount: 017\n")
    assert stack_yaml.main([str(path)]) == 1
    assert [line.split(": YAML")[0] for line in capsys.readouterr().err.splitlines()] == [
        f"{path}: aks-gpu:protect = yes",
        f"{path}: aks-gpu:gpuPool.nodeCount = 017",
    ]


# --------------------------------------------------------------------------- aliases, depth, special files (#44)

# Python's int() stops at 4,300 digits (sys.get_int_max_str_digits): a number past it in a
# stack file is one line naming the file and the key, never a traceback from a reader.
LONG = "9" * 5000
LONG_NUMBERS = [
    ("  aks-gpu:gpuPool:\n    maxCount: " + LONG + "\n", "aks-gpu:gpuPool.maxCount", "a whole number of 5000 digits"),
    ("  aks-gpu:clusterName: -" + LONG + "\n", "aks-gpu:clusterName", "a whole number of 5000 digits"),
    ("  aks-gpu:cost:\n    maxHourly: 0x" + "f" * 5000 + "\n", "aks-gpu:cost.maxHourly", "a whole number of 5002 characters, past 64 bits"),
]


@pytest.mark.parametrize(("content", "key", "says"), LONG_NUMBERS, ids=["decimal", "negative at the top", "hexadecimal"])
def test_a_5000_digit_number_in_a_stack_file_is_one_line_naming_the_file_and_the_key(tmp_path, content, key, says):
    with pytest.raises(SavedFileError) as raised:
        stack_config("reading", stack_file(tmp_path, content))
    said = str(raised.value)
    assert said.startswith(f"Pulumi.reading.yaml: {key} = ") and says in said and "\n" not in said and len(said) < 600, said
    assert "set_int_max_str_digits" not in said


@pytest.mark.parametrize("preview", [True, False])
def test_a_5000_digit_number_stops_a_preview_and_a_deployment_before_anything_is_registered(tmp_path, preview):
    monitor = RecordingMonitor(AzureMocks())
    path = stack_file(tmp_path, LONG_NUMBERS[0][0])
    with pytest.raises(SavedFileError, match=r"aks-gpu:gpuPool.maxCount = 9+\.\.\. \(5000 characters\): a whole number of 5000 digits"):
        run_program("dev", stack_file=path, monitor=monitor, preview=preview)
    assert monitor.registrations == []


def test_make_render_and_make_lints_check_say_a_5000_digit_number_in_one_line(tmp_path, monkeypatch, capsys):
    from tools import render

    (tmp_path / "Pulumi.yaml").write_text("name: aks-gpu\n")
    path = stack_file(tmp_path, LONG_NUMBERS[0][0])
    real = render.run_program
    monkeypatch.setattr(render, "run_program", lambda stack, **kw: real(stack, stack_file=path, **kw))
    assert render.main(["--stack", "reading", "--out", str(tmp_path / "out")]) == 1
    assert stack_yaml.main([str(path)]) == 1
    err = capsys.readouterr().err.splitlines()
    assert len(err) == 2 and all("a whole number of 5000 digits" in line and len(line) < 600 for line in err), err


def test_what_the_cli_hands_over_for_a_number_past_64_bits_is_a_string_as_yaml_v3_reads_it():
    """yaml.v3 resolve.go: ParseInt and ParseUint fail (ErrRange), ParseFloat too (+Inf): a string."""
    assert go_scalar(LONG) == LONG and go_scalar("0x" + "f" * 5000) == "0x" + "f" * 5000
    assert go_scalar("0" * 5000 + "17") == 15, "leading zeros: octal 17, within 64 bits"


def test_a_5000_digit_number_inside_a_structured_key_is_one_line_in_the_program_too():
    with pytest.raises(
        ConfigError, match=r"^invalid config aks-gpu:gpuPool = .*: a whole number of 5000 digits; no setting takes one past 64 bits$"
    ):
        parse({"aks-gpu:gpuPool": '{"maxCount": ' + LONG + "}"}, "aks-gpu", "reading")


NINE = ",".join(["lol"] * 9)
# "Billion laughs": nine levels of nine aliases each, 9^9 strings once expanded.
LAUGHS = (
    "  aks-gpu:a0: &a0 [" + NINE + "]\n" + "".join(f"  aks-gpu:a{i}: &a{i} [" + ",".join([f"*a{i - 1}"] * 9) + "]\n" for i in range(1, 9))
)
UNREADABLE = [
    (LAUGHS, r"the document contains excessive aliasing, which Pulumi's CLI refuses \(yaml\.v3\)"),
    ("  aks-gpu:gpuPool: &pool [*pool]\n", r"an anchor's value contains an alias of itself, which Pulumi's CLI refuses"),
    ("  aks-gpu:gpuPool: &pool {tags: *pool}\n", r"an anchor's value contains an alias of itself"),
    ("  aks-gpu:gpuPool: " + "[" * 100_000 + "]" * 100_000 + "\n", r"nested more than 64 levels deep; no stack setting is"),
    (
        "  aks-gpu:a: &a " + "[" * 40 + "]" * 40 + "\n  aks-gpu:b: " + "[" * 40 + "*a" + "]" * 40 + "\n",
        r"nested more than 64 levels deep once its aliases are expanded",
    ),
]


@pytest.mark.parametrize(
    "content, says", UNREADABLE, ids=["billion laughs", "a list in itself", "a mapping in itself", "deep", "deep by alias"]
)
def test_a_stack_file_the_cli_refuses_for_its_aliases_or_depth_is_one_line(tmp_path, content, says):
    with pytest.raises(SavedFileError, match=rf"^Pulumi\.reading\.yaml: not valid YAML at line \d+, column \d+: {says}") as raised:
        stack_config("reading", stack_file(tmp_path, content))
    assert "\n" not in str(raised.value)


def test_aliases_within_yaml_v3s_ratio_are_read_as_the_cli_reads_them(tmp_path):
    content = "  aks-gpu:tags: &tags {team: ml}\n  aks-gpu:gpuPool: {vmSize: Standard_NC4as_T4_v3, tags: *tags}\n"
    assert json.loads(stack_config("reading", stack_file(tmp_path, content))["aks-gpu:gpuPool"])["tags"] == {"team": "ml"}


def test_yaml_v3s_alias_ratio_is_mirrored():
    """go-yaml/yaml@f6f7691 decode.go `allowedAliasRatio`: 99% up to 400,000 decodes, 10% from
    4,000,000, a straight line between."""
    assert [round(stack_yaml.allowed_alias_ratio(n), 9) for n in (1, 400_000, 2_200_000, 4_000_000, 10**8)] == [0.99, 0.99, 0.545, 0.1, 0.1]


@pytest.mark.parametrize("what", ["a FIFO", "a directory"])
def test_a_stack_file_that_is_no_regular_file_is_one_line(tmp_path, what):
    path = tmp_path / "Pulumi.reading.yaml"
    if what == "a FIFO":
        os.mkfifo(path)
    else:
        path.mkdir()
    kind = "a FIFO (a named pipe)" if what == "a FIFO" else "a directory"
    with pytest.raises(SavedFileError, match=rf"^Pulumi\.reading\.yaml: is {re.escape(kind)}, not a regular file$"):
        stack_config("reading", path)


def test_make_lints_check_refuses_aliases_and_special_files_one_line_each(tmp_path, capsys):
    (tmp_path / "Pulumi.yaml").write_text("name: aks-gpu\n")
    os.mkfifo(tmp_path / "Pulumi.fifo.yaml")
    laughs = stack_file(tmp_path, LAUGHS)
    assert stack_yaml.main([str(tmp_path / "Pulumi.fifo.yaml"), str(laughs), "/dev/zero"]) == 1
    assert [line.split(": ", 1)[1] for line in capsys.readouterr().err.splitlines()] == [
        "is a FIFO (a named pipe), not a regular file",
        "not valid YAML at line 2, column 44: the document contains excessive aliasing, which Pulumi's CLI refuses (yaml.v3); write the values out",
        "is a character device, not a regular file",
    ]


def test_make_render_refuses_a_billion_laughs_stack_file_in_one_line(tmp_path, monkeypatch, capsys):
    from tools import render

    path = stack_file(tmp_path, LAUGHS)
    real = render.run_program
    monkeypatch.setattr(render, "run_program", lambda stack, **kw: real(stack, stack_file=path, **kw))
    assert render.main(["--stack", "reading", "--out", str(tmp_path / "out")]) == 1
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "excessive aliasing" in err, err


# --------------------------------------------------------------------------- provider keys


def test_the_azure_native_keys_are_the_installed_sdks():
    declared = [name for name, member in vars(azure_native_vars._ExportableConfig).items() if isinstance(member, property)]
    keys = providers.sdk_keys("azure-native")
    assert len(keys) == len(declared) and {"location", "subscriptionId", "clientId", "useOidc"} <= set(keys)
    assert all(keys.values()), "each with the SDK's description"


@pytest.mark.parametrize("preview", [True, False])
def test_a_misspelt_azure_native_key_is_refused_with_a_suggestion(preview):
    monitor = RecordingMonitor(AzureMocks())
    with pytest.raises(
        ConfigError, match=r"^unknown config azure-native:locaton \(did you mean location\?\); allowed: azure-native:auxiliaryTenantIds, "
    ) as error:
        run_program("dev", overrides={"azure-native:locaton": "westeurope"}, monitor=monitor, preview=preview)
    assert "\n" not in str(error.value) and monitor.registrations == []


def test_a_misspelt_namespace_is_refused_with_a_suggestion():
    with pytest.raises(ConfigError, match=r"^unknown config azure-natve:location \(did you mean azure-native:location\?\)"):
        parse({"azure-natve:location": "westeurope"}, "aks-gpu", "dev")


def test_azure_native_keys_the_provider_has_are_accepted():
    run = run_program(
        "dev",
        overrides={"azure-native:location": "westeurope", "azure-native:environment": "public", "azure-native:useMsi": True},
        preview=True,
    )
    assert run.of_type("azure-native:resources:ResourceGroup")[0].inputs["location"] == "westeurope"


def test_other_namespaces_still_belong_to_their_providers():
    assert parse({"kubernetes:context": "x", "command:anything": "y"}, "aks-gpu", "dev").location == "eastus"


def test_the_schema_refuses_and_accepts_the_same_azure_native_keys():
    validator = jsonschema.Draft202012Validator(json.loads((ROOT / "schema" / "stack.schema.json").read_text()))
    assert list(validator.iter_errors({"config": {"azure-native:locaton": "westeurope"}}))
    assert not list(validator.iter_errors({"config": {f"azure-native:{key}": "x" for key in providers.allowed_keys("azure-native")}}))
