"""A stack file is read as Pulumi's CLI reads it (tools/stack_yaml.py: PyYAML with gopkg.in/yaml.v3's
rules): what the CLI hands the program is what the render and the tests hand it, and what the CLI
reads otherwise than written, or than YAML 1.2 (make lint's check-jsonschema) reads it, is refused in
one line that says what to write. Each yaml.v3 answer is cited at go-yaml/yaml v3.0.1 (f6f7691),
the version pulumi/pulumi's sdk/go.mod requires. And an `azure-native:` key the provider does not
have is refused with a suggestion, as an unknown `aks-gpu:` key is (components/config/providers.py)."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import jsonschema
import pulumi_azure_native.config.vars as azure_native_vars
import pytest

from components.config import providers
from components.errors import ConfigError
from components.stack import parse
from tools import stack_files, stack_yaml
from tools.azure_mocks import AzureMocks
from tools.mock_engine import RecordingMonitor, run_program
from tools.stack_files import ROOT, SavedFileError, as_cli_string, stack_config


def stack_file(tmp_path: Path, body: str) -> Path:
    path = tmp_path / "Pulumi.reading.yaml"
    path.write_text(f"config:\n{body}")
    return path


def handed(tmp_path: Path, text: str) -> tuple[str, str]:
    """What the program gets for `text` written plainly at the top of a key and inside an object."""
    given = stack_config("reading", stack_file(tmp_path, f"  aks-gpu:k: {text}\n  aks-gpu:o:\n    m: {text}\n"))
    return given["aks-gpu:k"], given["aks-gpu:o"]


def refused(tmp_path: Path, text: str) -> str:
    with pytest.raises(SavedFileError) as error:
        stack_config("reading", stack_file(tmp_path, f"  aks-gpu:gpuPool:\n    nodeCount: {text}\n"))
    said = str(error.value)
    assert said.startswith(f"Pulumi.reading.yaml: aks-gpu:gpuPool.nodeCount = {text}: ") and "\n" not in said, said
    return said


# --------------------------------------------------------------------------- yaml.v3's answers


# resolve.go lines 52-53: only true/false/True/TRUE/... are booleans; yes, no, on, off, y and n
# fall through to line 264, strings. Only a typed Go bool takes them (decode.go lines 684-692),
# and the CLI decodes config values into interface{} (config/value.go `UnmarshalYAML`).
@pytest.mark.parametrize("text", ["yes", "no", "on", "off", "y", "n", "Yes", "OFF"])
def test_yes_no_on_off_stay_strings_as_yaml_v3_reads_them_into_config(tmp_path, text):
    assert handed(tmp_path, text) == (text, f'{{"m":"{text}"}}')


# resolve.go lines 52-54: YAML 1.2's spellings of true, false and null.
@pytest.mark.parametrize(
    ("text", "top", "inside"),
    [
        ("true", "true", '{"m":true}'),
        ("TRUE", "true", '{"m":true}'),
        ("False", "false", '{"m":false}'),
        ("~", "", '{"m":null}'),
        ("null", "", '{"m":null}'),
    ],
)
def test_true_false_and_null_are_read_in_yaml_1_2s_spellings_as_yaml_v3_reads_them(tmp_path, text, top, inside):
    assert handed(tmp_path, text) == (top, inside)


def test_spot_yes_reaches_the_program_as_the_string_the_cli_hands_it_and_is_refused_there(tmp_path):
    with pytest.raises(ConfigError, match=r"^invalid config aks-gpu:gpuPool.spot = 'yes': expected true or false"):
        run_program("dev", stack_file=stack_file(tmp_path, "  aks-gpu:gpuPool:\n    spot: yes\n"), preview=True)


# resolve.go line 191 drops every "_", line 192 reads the rest with Go's ParseInt(s, 0, 64):
# 0o, 0x and 0b prefixes, a sign; line 200 ParseUint up to 2^64-1.
@pytest.mark.parametrize(
    ("text", "number"),
    [
        ("0o17", "15"),
        ("0x1F", "31"),
        ("-0x1F", "-31"),
        ("0b101", "5"),
        ("1_000", "1000"),
        ("+12", "12"),
        ("0", "0"),
        ("18446744073709551615", "18446744073709551615"),
    ],
)
def test_0o_0x_0b_and_underscores_are_read_as_yaml_v3_reads_them(tmp_path, text, number):
    assert handed(tmp_path, text) == (number, f'{{"m":{number}}}')


# resolve.go lines 124 and 204 (yamlStyleFloat, ParseFloat) and 173-178 (a leading "."): floats,
# which the CLI hands over as Go's encoding/json writes them (1000, not 1000.0 or 1e3).
@pytest.mark.parametrize(
    ("text", "number"), [("1e3", "1000"), (".5", "0.5"), ("1.", "1"), ("2.50", "2.5"), ("1e21", "1e+21"), (".5e-7", "5e-8")]
)
def test_floats_are_read_as_yaml_v3_reads_them_and_handed_over_as_go_writes_them(tmp_path, text, number):
    assert handed(tmp_path, text) == (number, f'{{"m":{number}}}')


# resolve.go lines 165-167: base-60 numbers (YAML 1.1's 1:20 = 80) are dropped; what is no
# number, bool or null is a string (line 264).
@pytest.mark.parametrize("text", ["1:20", "1.2.3", "10.0.0.0/16", "12ab", "2026-01-01-x", "+", "٣"])
def test_what_only_looks_like_a_number_stays_the_string_written_as_yaml_v3_reads_it(tmp_path, text):
    assert handed(tmp_path, text) == (text, f'{{"m":"{text}"}}')


# resolve.go line 192: ParseInt's base 0 reads 017 as octal 15; YAML 1.2 (and check-jsonschema) as 17.
@pytest.mark.parametrize("text", ["017", "0017", "-08", "0_17"])
def test_a_number_with_a_leading_zero_is_refused_as_yaml_v3_reads_it_as_octal(tmp_path, text):
    assert refused(tmp_path, text).endswith(f'write it without the 0 (0o17 for octal), or quote it "{text}"')


# resolve.go lines 184-188 and 294-325 (parseTimestamp): a date is a Go time, which the CLI hands
# the program as "2026-01-01 00:00:00 +0000 UTC" (config/object.go `unmarshalObject`, time.Time).
@pytest.mark.parametrize("text", ["2026-01-01", "2026-1-2T15:04:05Z", "2026-01-01 10:00:00", "2026-01-01t10:00:00.5+01:00"])
def test_a_date_is_refused_as_yaml_v3_would_hand_the_program_a_go_time(tmp_path, text):
    assert refused(tmp_path, text).endswith(f'reads this as a time and hands the program Go\'s text for it; quote it "{text}"')


# resolve.go lines 55-58 read them; Go's encoding/json cannot write them (config/object.go).
@pytest.mark.parametrize(("text", "go"), [(".inf", "+Inf"), (".nan", "NaN"), ("-.inf", "-Inf"), ("+.INF", "+Inf")])
def test_infinity_and_nan_are_refused_the_cli_cannot_load_them(tmp_path, text, go):
    assert f"Pulumi's CLI cannot load this value (json: unsupported value: {go}); write a number, or quote it" in refused(tmp_path, text)


# resolve.go lines 192-209: past int64 and uint64, ParseInt and ParseUint fail and a decimal
# becomes a float (99999999999999999999 is 1e20), a 0x number or a 5,000-digit one a string.
@pytest.mark.parametrize("text", ["99999999999999999999", "-9223372036854775809", "0x1" + "0" * 16, "9" * 5000, "1e400"])
def test_a_number_past_64_bits_is_refused_as_yaml_v3_reads_it_as_a_float_or_a_string(tmp_path, text):
    with pytest.raises(SavedFileError) as error:
        stack_config("reading", stack_file(tmp_path, f"  aks-gpu:gpuPool:\n    maxCount: {text}\n"))
    said = str(error.value)
    assert said.startswith("Pulumi.reading.yaml: aks-gpu:gpuPool.maxCount = ") and "\n" not in said and len(said) < 600, said
    assert ("past 64 bits" in said or "past the largest number" in said) and "set_int_max_str_digits" not in said


# decode.go lines 769-781: "mapping key %#v already defined", keys compared as written (a quoted
# "spot" is the same key); PyYAML alone keeps the last.
@pytest.mark.parametrize("second", ["spot: false", '"spot": false'])
def test_a_duplicate_key_is_refused_as_yaml_v3_refuses_it(tmp_path, second):
    path = stack_file(tmp_path, f"  aks-gpu:gpuPool:\n    spot: true\n    {second}\n")
    with pytest.raises(
        SavedFileError,
        match=r"^Pulumi.reading.yaml: aks-gpu:gpuPool.spot \(a key\): given twice \(lines 3 and 4\): Pulumi's CLI refuses the file",
    ):
        stack_config("reading", path)


def test_a_duplicate_key_inside_a_merged_mapping_is_refused_as_yaml_v3_refuses_it(tmp_path):
    # decode.go line 959 `merge` unmarshals the merged mapping, which line 769 checks.
    with pytest.raises(SavedFileError, match=r"vmSize \(a key\): given twice"):
        stack_config("reading", stack_file(tmp_path, "  aks-gpu:gpuPool: {<<: {vmSize: a, vmSize: b}}\n"))


# decode.go lines 240-243 (a plain "<<" is the merge tag), 826-857 and 959-996: the mapping's
# own keys win over merged ones, and an earlier merged mapping over a later one.
def test_a_merge_key_merges_as_yaml_v3_merges_it(tmp_path):
    content = "  aks-gpu:a: &a {vmSize: A, nodeCount: 1}\n  aks-gpu:b: &b {vmSize: B, maxCount: 3}\n  aks-gpu:gpuPool: {nodeCount: 2, <<: [*a, *b]}\n"
    given = stack_config("reading", stack_file(tmp_path, content))["aks-gpu:gpuPool"]
    assert json.loads(given) == {"vmSize": "A", "nodeCount": 2, "maxCount": 3}


# resolve.go lines 126-151: an explicit tag is applied by yaml.v3's own rules (!!bool yes fails,
# !!int 017 is 15), by PyYAML's YAML 1.1 ones (!!bool yes is true) and by YAML 1.2's (!!int 017
# is 17); !!str is a string for each (line 159).
@pytest.mark.parametrize(
    ("text", "tag"), [("!!int 017", "!!int"), ("!!bool yes", "!!bool"), ("!!timestamp 2026-01-01", "!!timestamp"), ("!custom x", "!custom")]
)
def test_an_explicit_tag_is_refused_as_readers_apply_it_differently(tmp_path, text, tag):
    with pytest.raises(
        SavedFileError, match=rf"^Pulumi.reading.yaml: aks-gpu:k = .*: an explicit tag \({tag}\), which YAML readers apply differently"
    ):
        stack_config("reading", stack_file(tmp_path, f"  aks-gpu:k: {text}\n"))


def test_an_explicit_str_tag_is_the_string_written_as_yaml_v3_reads_it(tmp_path):
    assert stack_config("reading", stack_file(tmp_path, "  aks-gpu:k: !!str 017\n"))["aks-gpu:k"] == "017"


def test_a_second_document_is_refused_where_yaml_v3_would_drop_it(tmp_path):
    # yaml.go `unmarshal` decodes the parser's first document only: the CLI would drop the second.
    path = tmp_path / "Pulumi.reading.yaml"
    path.write_text("config:\n  aks-gpu:clusterName: a\n---\nconfig:\n  aks-gpu:clusterName: b\n")
    with pytest.raises(
        SavedFileError,
        match=r"^Pulumi\.reading\.yaml: not valid YAML at line 3, column 1: a second document, which Pulumi's CLI would drop; keep one",
    ):
        stack_config("reading", path)


def test_a_quoted_value_is_a_string_for_every_reader_and_the_program_judges_it(tmp_path):
    given = stack_config("reading", stack_file(tmp_path, '  aks-gpu:gpuPool:\n    spot: "yes"\n'))
    assert given["aks-gpu:gpuPool"] == '{"spot":"yes"}'
    with pytest.raises(ConfigError, match=r"^invalid config aks-gpu:gpuPool.spot = 'yes': expected true or false"):
        parse(given, "aks-gpu", "reading")


def test_unquoted_mode_off_reaches_the_program_as_the_word_off_as_the_cli_hands_it(tmp_path):
    given = stack_config("reading", stack_file(tmp_path, "  aks-gpu:preflight:\n    mode: off\n"))
    assert given["aks-gpu:preflight"] == '{"mode":"off"}' and parse(given, "aks-gpu", "reading").preflight.mode == "off"


def test_a_pool_named_on_is_the_key_on_as_yaml_v3_reads_it(tmp_path):
    given = stack_config("reading", stack_file(tmp_path, "  aks-gpu:gpuPools:\n    on:\n      vmSize: Standard_NC4as_T4_v3\n"))
    assert json.loads(given["aks-gpu:gpuPools"]) == {"on": {"vmSize": "Standard_NC4as_T4_v3"}}


def test_a_refused_key_is_named_as_a_key(tmp_path):
    with pytest.raises(SavedFileError, match=r"^Pulumi.reading.yaml: aks-gpu:gpuPools.017 \(a key\): a leading 0 makes this octal"):
        stack_config("reading", stack_file(tmp_path, "  aks-gpu:gpuPools:\n    017:\n      vmSize: Standard_NC4as_T4_v3\n"))


def test_a_refused_value_in_a_list_is_named_by_its_index(tmp_path):
    with pytest.raises(SavedFileError, match=r"^Pulumi.reading.yaml: aks-gpu:tags\[1\] = 2026-01-01: Pulumi's CLI reads this as a time"):
        stack_config("reading", stack_file(tmp_path, "  aks-gpu:tags: [a, 2026-01-01]\n"))


def test_a_key_set_to_null_reaches_the_program_empty_as_from_the_cli(tmp_path):
    assert stack_config("reading", stack_file(tmp_path, "  aks-gpu:clusterName: ~\n"))["aks-gpu:clusterName"] == ""


def test_objects_are_handed_over_as_go_writes_json():
    value = {"b": [1.0, 0.5, 1e21, 1e-7, 1e16], "a": "<x & y>", "é": None}
    assert as_cli_string(value) == '{"a":"\\u003cx \\u0026 y\\u003e","b":[1,0.5,1e+21,1e-7,10000000000000000],"é":null}'


def test_the_projects_files_are_read_as_the_cli_reads_them():
    done = subprocess.run(
        [sys.executable, "-m", "tools.stack_yaml", "Pulumi.yaml", *(f"Pulumi.{s}.yaml" for s in stack_files.stacks())],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=False,
    )
    assert (done.returncode, done.stderr) == (0, "")


def test_make_lints_check_names_each_refused_file_in_one_line(tmp_path, capsys):
    (tmp_path / "Pulumi.yaml").write_text("name: aks-gpu\n")
    first = stack_file(tmp_path, "  protect: yes\n  aks-gpu:gpuPool:\n    nodeCount: 017\n")
    second = tmp_path / "Pulumi.other.yaml"
    second.write_text("config:\n  aks-gpu:expires: 2026-01-01\n")
    assert stack_yaml.main([str(first), str(second)]) == 1
    assert [line.split(": a leading")[0].split(": Pulumi's")[0] for line in capsys.readouterr().err.splitlines()] == [
        f"{first}: aks-gpu:gpuPool.nodeCount = 017",
        f"{second}: aks-gpu:expires = 2026-01-01",
    ]


# --------------------------------------------------------------------------- aliases, depth, special files (#44)

# Python's int() stops at 4,300 digits (sys.get_int_max_str_digits): a number past it in a
# stack file is one line naming the file and the key, never a traceback from a reader.
LONG = "9" * 5000
LONG_NUMBERS = [
    ("  aks-gpu:gpuPool:\n    maxCount: " + LONG + "\n", "aks-gpu:gpuPool.maxCount"),
    ("  aks-gpu:clusterName: -" + LONG + "\n", "aks-gpu:clusterName"),
    ("  aks-gpu:cost:\n    maxHourly: 0x" + "f" * 5000 + "\n", "aks-gpu:cost.maxHourly"),
]


@pytest.mark.parametrize(("content", "key"), LONG_NUMBERS, ids=["decimal", "negative at the top", "hexadecimal"])
def test_a_5000_digit_number_in_a_stack_file_is_one_line_naming_the_file_and_the_key(tmp_path, content, key):
    with pytest.raises(SavedFileError) as raised:
        stack_config("reading", stack_file(tmp_path, content))
    said = str(raised.value)
    assert (
        said.startswith(f"Pulumi.reading.yaml: {key} = ") and "a whole number past 64 bits" in said and "\n" not in said and len(said) < 600
    ), said
    assert "set_int_max_str_digits" not in said


@pytest.mark.parametrize("preview", [True, False])
def test_a_5000_digit_number_stops_a_preview_and_a_deployment_before_anything_is_registered(tmp_path, preview):
    monitor = RecordingMonitor(AzureMocks())
    path = stack_file(tmp_path, LONG_NUMBERS[0][0])
    with pytest.raises(SavedFileError, match=r"aks-gpu:gpuPool.maxCount = 9+\.\.\. \(5000 characters\): a whole number past 64 bits"):
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
    assert len(err) == 2 and all("a whole number past 64 bits" in line and len(line) < 600 for line in err), err


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
