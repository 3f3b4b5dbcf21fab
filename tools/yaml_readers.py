"""How three readers of a stack file read one plain (unquoted) YAML scalar, and what the Pulumi CLI
then hands the program (tools/stack_yaml.py reads whole files with these): `go_scalar` (the CLI,
gopkg.in/yaml.v3), `yaml11_scalar` (PyYAML) and `yaml12_scalar` (ruamel.yaml, `make lint`), each
compared with the real reader on some 5,800 scalars. The readers' sources: docs/configuration.md,
"How a stack file is read"."""

from __future__ import annotations

import json
import math
import re
from decimal import Decimal
from typing import Any

import yaml
from yaml.constructor import SafeConstructor
from yaml.nodes import ScalarNode

READERS = ("YAML 1.1", "YAML 1.2", "Pulumi's CLI")


class GoTime(str):
    """A timestamp as the CLI passes it on: Go's `time.Time.String()`."""


# --------------------------------------------------------------------------- Pulumi's CLI: yaml.v3

_GO_MAP: dict[str, Any] = {
    **dict.fromkeys(("true", "True", "TRUE"), True),
    **dict.fromkeys(("false", "False", "FALSE"), False),
    **dict.fromkeys(("", "~", "null", "Null", "NULL"), None),
    **dict.fromkeys((".nan", ".NaN", ".NAN"), math.nan),
    **dict.fromkeys((".inf", ".Inf", ".INF", "+.inf", "+.Inf", "+.INF"), math.inf),
    **dict.fromkeys(("-.inf", "-.Inf", "-.INF"), -math.inf),
}
_GO_FLOAT = re.compile(r"[-+]?(\.[0-9]+|[0-9]+(\.[0-9]*)?)([eE][-+]?[0-9]+)?\Z")  # resolve.go yamlStyleFloat
_GO_DOT_FLOAT = re.compile(r"\.[0-9]+(_[0-9]+)*([eE][-+]?[0-9]+(_[0-9]+)*)?\Z")  # strconv.ParseFloat of ".5", ".5_5"
_GO_TIME = re.compile(
    r"([0-9]{4})-([0-9][0-9]?)-([0-9][0-9]?)"  # "2006-1-2"
    r"(?:(?:[Tt]|( +))([0-9][0-9]?):([0-9][0-9]?):([0-9][0-9]?)(?:[.,]([0-9]+))?(?(4)|(Z|[-+][0-9][0-9]:[0-9][0-9])))?\Z"  # "T15:4:5.999999999Z07:00", " 15:4:5.999999999"
)
_BASES = {"x": (16, "0123456789abcdefABCDEF"), "b": (2, "01"), "o": (8, "01234567")}


def _go_int(text: str) -> int | None:
    """strconv.ParseInt(text, 0, 64), else ParseUint(text, 0, 64), as yaml.v3 tries them."""
    body = text[1:] if text[:1] in "+-" else text
    base, digits = 10, body
    if len(body) > 2 and body[0] == "0" and body[1].lower() in _BASES:
        base, digits = _BASES[body[1].lower()][0], body[2:]
    elif len(body) > 1 and body[0] == "0":
        base, digits = 8, body[1:]
    allowed = _BASES["x"][1] if base == 16 else "0123456789"[:base]
    if not digits or any(c not in allowed for c in digits):
        return None
    if len(digits.lstrip("0")) > 64:  # past 64 bits in any base: ErrRange, without Python's 4,300-digit int() limit
        return None
    value = int(digits, base) * (-1 if text[:1] == "-" else 1)
    if -(2**63) <= value < 2**63 or (text[:1] not in "+-" and 0 <= value < 2**64):
        return value
    return None


def _days_in(month: int, year: int) -> int:
    if month == 2:
        return 29 if year % 4 == 0 and (year % 100 != 0 or year % 400 == 0) else 28
    return 30 if month in (4, 6, 9, 11) else 31


def _go_time(text: str) -> GoTime | None:
    """time.Parse with yaml.v3's layouts, as `time.Time.String()` writes the result; None if
    it is not one. (An offset the machine's own zone has is named after that zone by Go.)"""
    found = _GO_TIME.match(text)
    if not found:
        return None
    year, month, day, _, hour, minute, second, fraction, zone = found.groups()
    y, mo, d = int(year), int(month), int(day)
    h, mi, s = int(hour or 0), int(minute or 0), int(second or 0)
    if not (1 <= mo <= 12 and 1 <= d <= _days_in(mo, y) and h < 24 and mi < 60 and s < 60):
        return None
    frac = (fraction or "")[:9].rstrip("0")
    offset = "+0000 UTC" if zone in (None, "Z") else f"{zone[:3]}{zone[4:]} {zone[:3]}{zone[4:]}"
    return GoTime(f"{y:04d}-{mo:02d}-{d:02d} {h:02d}:{mi:02d}:{s:02d}{'.' + frac if frac else ''} {offset}")


def _round_trip(value: float) -> float | int:
    """A float written back as YAML (`FormatFloat(f, 'g', -1, 64)`) and read again: a whole
    number under a million comes back an integer, -0 as 0."""
    return int(value) if value.is_integer() and abs(value) < 1e6 else value


def go_scalar(text: str) -> Any:
    """A plain scalar as yaml.v3 resolves it (resolve.go `resolve`), after the CLI's round trip."""
    if text in _GO_MAP:
        return _GO_MAP[text]
    first = text[0]
    if first == ".":
        if _GO_DOT_FLOAT.match(text) and math.isfinite(value := float(text.replace("_", ""))):
            return _round_trip(value)
        return text
    if not (first.isascii() and (first.isdigit() or first in "+-")):
        return text
    if first.isdigit() and (when := _go_time(text)):
        return when
    plain = text.replace("_", "")
    if (number := _go_int(plain)) is not None:
        return number
    if _GO_FLOAT.match(plain) and math.isfinite(value := float(plain)):  # ParseFloat's ErrRange: a string
        return _round_trip(value)
    return text


def _go_float(value: float, json_format: bool) -> str:
    """Go's shortest form of a float: encoding/json's (`e` below 1e-6 and from 1e21), or
    `%v`'s (`'g'`: `e` below 1e-4 and from 1e6)."""
    if not math.isfinite(value):
        raise ValueError(f"json: unsupported value: {'NaN' if math.isnan(value) else ('+Inf' if value > 0 else '-Inf')}")
    digits = Decimal(repr(value))
    exponent = digits.adjusted()
    small, large = (-7, 21) if json_format else (-5, 6)
    if value != 0 and (exponent <= small or exponent >= large):
        mantissa, _, power = f"{digits.normalize():e}".partition("e")
        text = f"{mantissa}e{power[0]}{int(power[1:]):02d}"
        return re.sub(r"e-0(\d)$", r"e-\1", text) if json_format else text
    text = format(digits, "f")
    return text.rstrip("0").rstrip(".") if "." in text else text


def go_key(key: Any) -> str:
    """A mapping key as unmarshalObject names it: `fmt.Sprintf("%v", key)`."""
    if isinstance(key, str):
        return key
    if key is None:
        return "<nil>"
    if isinstance(key, bool):
        return "true" if key else "false"
    if isinstance(key, float):
        return _go_float(key, json_format=False)
    return str(key)


def _go_string(text: str) -> str:
    quoted = json.dumps(text, ensure_ascii=False)
    for char, escape in (("<", "\\u003c"), (">", "\\u003e"), ("&", "\\u0026"), ("\u2028", "\\u2028"), ("\u2029", "\\u2029")):
        quoted = quoted.replace(char, escape)
    return quoted


def cli_json(value: Any) -> str:
    """`value` as Go's encoding/json writes it (json.Marshal): keys sorted, no spaces, `<`, `>`
    and `&` escaped, floats in Go's shortest form. Infinity and NaN raise ValueError."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        return _go_float(value, json_format=True)
    if isinstance(value, str):
        return _go_string(value)
    if isinstance(value, dict):
        members = sorted((go_key(k), v) for k, v in value.items())
        return "{" + ",".join(f"{_go_string(k)}:{cli_json(v)}" for k, v in members) + "}"
    if isinstance(value, (list, tuple)):
        return "[" + ",".join(cli_json(v) for v in value) + "]"
    raise TypeError(f"no JSON for {type(value).__name__}")


# --------------------------------------------------------------------------- YAML 1.1 and YAML 1.2

_YAML11_RESOLVER = yaml.resolver.Resolver()


class Unreadable(str):
    """A reader that cannot construct the value at all; the text says why."""


# Python's int() refuses more than 4,300 decimal digits (sys.get_int_max_str_digits), as
# PyYAML's and ruamel.yaml's constructors do: said in words, not as the interpreter's advice.
LONG_DIGITS = 4300


def long_number(text: str) -> int:
    """How many digits a plain decimal integer scalar has past Python's int() limit; 0 if none."""
    digits = text.lstrip("+-").replace("_", "")
    return len(digits) if len(digits) > LONG_DIGITS and digits.isascii() and digits.isdigit() else 0


def yaml11_scalar(text: str) -> Any:
    """A plain scalar as PyYAML's SafeLoader reads it (YAML 1.1)."""
    tag = _YAML11_RESOLVER.resolve(ScalarNode, text, (True, False))
    try:
        return SafeConstructor().construct_object(ScalarNode(tag, text))
    except (yaml.YAMLError, ValueError) as error:
        return Unreadable(getattr(error, "problem", None) or str(error))


# ruamel/yaml/resolver.py `implicit_resolvers`, the entries for version (1, 2), in its order.
_YAML12 = [
    ("bool", r"(?:true|True|TRUE|false|False|FALSE)", "tTfF"),
    (
        "float",
        r"(?:[-+]?(?:[0-9][0-9_]*)\.[0-9_]*(?:[eE][-+]?[0-9]+)?|[-+]?(?:[0-9][0-9_]*)(?:[eE][-+]?[0-9]+)"
        r"|[-+]?\.[0-9_]+(?:[eE][-+][0-9]+)?|[-+]?\.(?:inf|Inf|INF)|\.(?:nan|NaN|NAN))",
        "-+0123456789.",
    ),
    ("int", r"(?:[-+]?0b[0-1_]+|[-+]?0o?[0-7_]+|[-+]?[0-9_]+|[-+]?0x[0-9a-fA-F_]+)", "-+0123456789"),
    ("merge", r"(?:<<)", "<"),
    ("null", r"(?:~|null|Null|NULL|)", "~nN"),
    (
        "timestamp",
        r"(?:[0-9][0-9][0-9][0-9]-[0-9][0-9]-[0-9][0-9]|[0-9][0-9][0-9][0-9]-[0-9][0-9]?-[0-9][0-9]?"
        r"(?:[Tt]|[ \t]+)[0-9][0-9]?:[0-9][0-9]:[0-9][0-9](?:\.[0-9]*)?(?:[ \t]*(?:Z|[-+][0-9][0-9]?(?::[0-9][0-9])?))?)",
        "0123456789",
    ),
    ("value", r"(?:=)", "="),
]
_YAML12_RES = [(tag, re.compile(f"^{pattern}$"), first) for tag, pattern, first in _YAML12]


def _yaml12_number(tag: str, text: str) -> int | float:
    """ruamel.yaml's SafeConstructor.construct_yaml_int and construct_yaml_float at YAML 1.2."""
    body = text.replace("_", "")
    body = body.lower() if tag == "float" else body
    sign = -1 if body[0] == "-" else 1
    body = body[1:] if body[0] in "+-" else body
    if tag == "float":
        return sign * math.inf if body == ".inf" else math.nan if body == ".nan" else sign * float(body)
    if body[:2] in ("0b", "0x", "0o"):
        return sign * int(body[2:], {"b": 2, "x": 16, "o": 8}[body[1]])
    return sign * int(body)


def yaml12_scalar(text: str) -> Any:
    """A plain scalar as check-jsonschema reads it (ruamel.yaml at YAML 1.2, timestamps as strings)."""
    tag = next((t for t, pattern, first in _YAML12_RES if (text[:1] in first if text else t == "null") and pattern.match(text)), "str")
    try:
        if tag in ("int", "float"):
            return _yaml12_number(tag, text)
    except (ValueError, IndexError) as error:
        return Unreadable(str(error))
    if tag in ("merge", "value"):
        return Unreadable(f"could not determine a constructor for the tag 'tag:yaml.org,2002:{tag}'")
    return {"bool": lambda: text.lower() == "true", "null": lambda: None}.get(tag, lambda: text)()


def _kind(value: Any) -> tuple[str, Any]:
    if isinstance(value, Unreadable):
        return ("error", str(value))
    if isinstance(value, GoTime):
        return ("time", str(value))
    if value is None or isinstance(value, (bool, str)):
        return ({type(None): "null", bool: "boolean", str: "string"}[type(value)], value)
    if isinstance(value, (int, float)):
        return ("number", "nan" if value != value else value)
    return ("date", value.isoformat())  # PyYAML's date or datetime


def _describe(kind: str, value: Any, text: str) -> str:
    if kind == "boolean":
        return f"the boolean {'true' if value else 'false'}"
    if kind == "number" and isinstance(value, int) and value.bit_length() > 64:  # str() stops at 4,300 digits
        return f"a whole number of {len(text)} characters, past 64 bits"
    if kind == "number":
        shown = str(value) if isinstance(value, int) or value == "nan" or not math.isfinite(value) else _go_float(value, json_format=True)
        return f"the number {shown}"
    if kind == "string":
        return "a string" if value == text else f"the string {json.dumps(value, ensure_ascii=False)}"
    if kind == "time":
        return f"a time it passes on as {json.dumps(value)}"
    if kind == "date":
        return f"the date {value}"
    return "null" if kind == "null" else f"no value ({value})"


def readings(text: str) -> dict[str, tuple[str, Any]]:
    """How each reader reads `text` written as a plain scalar."""
    return dict(zip(READERS, (_kind(yaml11_scalar(text)), _kind(yaml12_scalar(text)), _kind(go_scalar(text))), strict=True))


def _said(text: str) -> str | None:
    """What the readers read of the plain scalar `text`, reader by reader, if they do not all
    read it alike; None if they do."""
    read = readings(text)
    if len(set(read.values())) == 1:
        return None
    groups: dict[tuple[str, Any], list[str]] = {}
    for reader, reading in read.items():
        groups.setdefault(reading, []).append(reader)
    return ", ".join(
        " and ".join(names) + ((" reads " if len(names) == 1 else " read ") if i == 0 else " ") + _describe(*reading, text)
        for i, (reading, names) in enumerate(groups.items())
    )


def disagreement(text: str, key: bool = False, expects: frozenset[str] = frozenset()) -> str | None:
    """What the readers say of the plain scalar (or key) `text`, and what to write, if they do
    not all read it alike; None if they do. `expects`: the JSON types the value's key takes
    (the stack schema's; empty where unknown), so that a word is told to be quoted, and a
    boolean or a number to be written as one."""
    said = _said(text)
    if said is None:
        return None
    quoted = json.dumps(text, ensure_ascii=False)
    if key:
        return f"YAML readers disagree on this key ({said}); quote it {quoted}"
    kinds = {kind for kind, _ in readings(text).values()}
    if "string" in expects:
        return f"YAML readers disagree on this value ({said}); quote it {quoted}"
    if "boolean" in kinds and "boolean" in expects:
        return f"YAML readers disagree on this value ({said}); write true or false"
    if "number" in kinds and expects & {"integer", "number"}:
        return f"YAML readers disagree on this value ({said}); write the number in decimal"
    advice = "write true or false, or " if "boolean" in kinds else "write the number in decimal, or " if "number" in kinds else ""
    return f"YAML readers disagree on this value ({said}); {advice}quote it {quoted}"


def json_refusal(value: float) -> str:
    """Why Go's encoding/json refuses `value` (infinity, NaN), as it says it; "" if it does not."""
    try:
        _go_float(value, json_format=True)
    except ValueError as error:
        return str(error)
    return ""
