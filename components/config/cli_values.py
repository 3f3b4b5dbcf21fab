"""A config value as the Pulumi CLI hands it to a program: the stack file's value as a string,
objects and lists as Go's encoding/json writes them. The mock engine hands a stack file's values
over this way (tools/stack_files.py), and the package's components their inputs
(components/environment/component.py), so both reach the parser as `pulumi up` hands them."""

from __future__ import annotations

import json
import math
import re
from decimal import Decimal
from typing import Any


def as_cli_string(value: Any) -> str:
    """A config value as the CLI hands it to a program (pulumi/pulumi sdk/go/common/resource/
    config/object.go `unmarshalObject`, `MarshalString`): a string as it is; null as "" (a
    stack file's key set to null); anything else as Go's encoding/json writes it (keys sorted,
    no spaces). Infinity and NaN, which the CLI cannot load (stack_yaml refuses them first),
    are written as Python's json writes them, so that a test can still hand them to the program."""
    if isinstance(value, str):
        return value
    if value is None:
        return ""
    try:
        return cli_json(value)
    except ValueError:
        return json.dumps(value, sort_keys=True, separators=(",", ":"))


# No library writes JSON as Go's encoding/json does, which is what the program gets from the CLI.
def _go_float(value: float, json_format: bool) -> str:
    """Go's shortest form of a float: encoding/json's (`e` below 1e-6 and from 1e21), or
    `%v`'s (`'g'`: `e` below 1e-4 and from 1e6)."""
    if not math.isfinite(value):
        raise ValueError(f"json: unsupported value: {value}")
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
