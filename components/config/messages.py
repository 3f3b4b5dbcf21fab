"""One-line errors: every refusal is `invalid config <key> = <value>: <what is allowed>`, a
`ConfigError` (a `pulumi.RunError`: the CLI prints it without a stack trace). pydantic's
first problem becomes such a line here, whatever concept's field it is in."""

from __future__ import annotations

import dataclasses
import difflib
import json
import math
import re
import types
import typing
from typing import Annotated, Any

from pydantic import ConfigDict, TypeAdapter, ValidationError
from pydantic.alias_generators import to_camel

from components.config.values import NAMESPACE, Allowed
from components.errors import ConfigError, cut


def validated(type_: Any, key: str, value: Any, hint: str = "") -> Any:
    try:
        return TypeAdapter(type_, config=ConfigDict(strict=True)).validate_python(value)
    except ValidationError:
        raise fail(key, value, f"expected {allowed_text(type_)}{hint}") from None


def fail(key: str, value: Any, allowed: str) -> ConfigError:
    return ConfigError(f"invalid config {cut(key)} = {show(value)}: {allowed}")


def show(value: Any) -> str:
    """The value as the line shows it; a long one cut, with its length, so the line stays
    readable (components/errors.py `cut`, the one rule every message quotes by)."""
    if isinstance(value, str):
        return repr(value) if len(repr(value)) <= 200 else f"{value[:160]!r}... ({len(value)} characters)"
    try:
        return cut(json.dumps(value, default=str))
    except (ValueError, RecursionError):  # NaN is written as Python writes it; a recursive value
        return cut(repr(value)) if not isinstance(value, (dict, list)) else f"a nested {type(value).__name__}"


def one_line(error: ValidationError, root: Any) -> ConfigError:
    """The first problem pydantic found in `root` (the dataclass of every key), as
    `invalid config <key path> = <value>: <allowed>`."""
    problem = error.errors()[0]
    loc = problem["loc"]
    key = f"{NAMESPACE}:{loc[0]}" + "".join(f"[{p}]" if isinstance(p, int) else f".{p}" for p in loc[1:])
    if problem["type"] in ("extra_forbidden", "unexpected_keyword_argument"):  # an unknown member inside an object
        parent = strip_annotated(strip_optional(annotation_at(root, loc[:-1])))
        allowed = members(parent) if dataclasses.is_dataclass(parent) else []
        return ConfigError(f"unknown config {key}{did_you_mean(str(loc[-1]), allowed)}; allowed: {', '.join(allowed)}")
    if problem["type"] == "missing":
        return ConfigError(f"invalid config {key} is missing: expected {allowed_text(annotation_at(root, loc))}")
    if problem["type"] == "value_error":  # this module's validators word their own message
        text = str(problem["ctx"]["error"])
    elif problem["type"] == "too_long":
        text = f"expected at most {problem['ctx']['max_length']} entries"
    else:
        text = f"expected {allowed_text(annotation_at(root, loc))}"
    return fail(key, problem["input"], text)


def annotation_at(cls: Any, loc: tuple[Any, ...]) -> Any:
    """The type annotation of the member a pydantic error location points at."""
    annotation: Any = cls
    for part in loc:
        annotation = strip_optional(annotation)
        if isinstance(part, int):
            annotation = typing.get_args(strip_annotated(annotation))[0]
        elif typing.get_origin(strip_annotated(annotation)) is dict:  # a map's entry
            annotation = typing.get_args(strip_annotated(annotation))[1]
        else:
            hints = typing.get_type_hints(annotation, include_extras=True)
            annotation = hints[snake(part)]
    return annotation


def allowed_text(annotation: Any) -> str:
    annotation = strip_optional(annotation)
    for meta in getattr(annotation, "__metadata__", ()):
        if isinstance(meta, Allowed):
            return meta.text
    return "an object (a YAML mapping in Pulumi.<stack>.yaml)"


def strip_optional(annotation: Any) -> Any:
    # `Optional[X]` is a typing.Union, `X | None` a types.UnionType: the same to a reader.
    if typing.get_origin(annotation) in (typing.Union, types.UnionType):
        return next(a for a in typing.get_args(annotation) if a is not type(None))
    return annotation


def strip_annotated(annotation: Any) -> Any:
    return typing.get_args(annotation)[0] if typing.get_origin(annotation) is Annotated else annotation


def snake(camel: str) -> str:
    return re.sub(r"(?<!^)(?=[A-Z])", "_", camel).lower()


# `node_count` -> `nodeCount`: config members and ARM properties are spelled so.
camel_case = to_camel


def did_you_mean(word: str, allowed: list[str], cutoff: float = 0.6) -> str:
    close = difflib.get_close_matches(word, allowed, n=1, cutoff=cutoff)
    if not close:
        lowered = {a.lower(): a for a in allowed}
        close = [lowered[word.lower()]] if word.lower() in lowered else []
    return f" (did you mean {close[0]}?)" if close else ""


def members(cls: Any) -> list[str]:
    """A structured key's members, as the stack files spell them."""
    return [to_camel(f.name) for f in dataclasses.fields(cls)]


def json_object(key: str, raw: Any) -> dict[str, Any]:
    """A structured key's value, decoded: an object, or a one-line error."""
    expected = "expected an object (a YAML mapping in Pulumi.<stack>.yaml)"

    def no_repeats(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
        # Python's parser keeps the last of a member given twice, and a pool named twice in
        # gpuPools would silently be one (and on a deployed stack, the other deleted).
        seen: set[str] = set()
        for member, _ in pairs:
            if member in seen:
                raise ConfigError(f"invalid config {key}: {member!r} is given twice; expected each member once")
            seen.add(member)
        return dict(pairs)

    def whole(text: str) -> int:
        # int() refuses past 4,300 digits (sys.get_int_max_str_digits) in the interpreter's words.
        if len(digits := text.lstrip("-")) > 64:
            raise fail(key, raw[:200], f"a whole number of {len(digits)} digits; no setting takes one past 64 bits")
        return int(text)

    try:
        value = (
            json.loads(raw, object_pairs_hook=no_repeats, parse_constant=refuse_constant, parse_int=whole, parse_float=finite_float)
            if isinstance(raw, str)
            else raw
        )
    except (ValueError, RecursionError):  # JSONDecodeError is a ValueError; so is NaN
        raise fail(key, raw[:200] if isinstance(raw, str) else raw, expected) from None
    if not isinstance(value, dict):
        raise fail(key, value, expected)
    return value


def refuse_constant(name: str) -> Any:
    """json's `parse_constant`: NaN and Infinity are not JSON (RFC 8259), though Python's
    parser takes them. Config values and saved answers of Azure alike refuse them."""
    raise ValueError(f"{name} is not a JSON number")


def finite_float(text: str) -> float:
    """json's `parse_float`: a number past a float's range (1e400) is JSON, but Python's parser
    makes it infinity, which no setting, price or state means."""
    value = float(text)
    if not math.isfinite(value):
        raise ValueError(f"{cut(text)} is past the largest number a float holds")
    return value


# Unicode categories no setting has a use for: control characters (a NUL, an escape),
# format characters (a zero-width space, a right-to-left mark), line and paragraph separators,
# surrogates and private use. Invisible in a terminal and a review, they make a name or an
# address that looks right and is not.
UNPRINTABLE = ("Cc", "Cf", "Zl", "Zp", "Cs", "Co")


def _unprintable(text: str) -> str | None:
    """The first character of UNPRINTABLE in `text`, named, or None."""
    import unicodedata

    bad = next((c for c in text if unicodedata.category(c) in UNPRINTABLE), None)
    return None if bad is None else f"U+{ord(bad):04X} ({unicodedata.name(bad, 'a control character')})"


def printable(key: str, value: Any) -> None:
    """Refuses, in one line naming the member, a string anywhere in `value` (a member's name
    included) that holds a character of UNPRINTABLE."""
    if isinstance(value, str):
        if found := _unprintable(value):
            raise fail(key, value, f"contains {found}, which is invisible; expected printable text")
    elif isinstance(value, dict):
        for member, inner in value.items():
            if found := _unprintable(str(member)):
                raise fail(key, member, f"a member's name contains {found}, which is invisible; expected printable text")
            printable(f"{key}.{member}", inner)
    elif isinstance(value, list):
        for index, inner in enumerate(value):
            printable(f"{key}[{index}]", inner)


def structured(key: str, raw: Any, cls: type) -> dict[str, Any]:
    """Decodes a structured key and refuses members its dataclass does not have."""
    value = json_object(key, raw)
    allowed = members(cls)
    for member in value:
        if member not in allowed:
            raise ConfigError(f"unknown config {key}.{member}{did_you_mean(member, allowed)}; allowed: {', '.join(allowed)}")
    return value


# A GPU pool's count rules, a new pool's (pools/settings.py) and an adopted one's (pools/existing_pools.py).
def min_above_max(key: str, min_count: int, max_count: int) -> ConfigError:
    return ConfigError(f"invalid config {key}: minCount {min_count} is greater than maxCount {max_count}; expected minCount <= maxCount")


def no_node_for_the_job(key: str) -> ConfigError:
    why = "the Job would wait forever for a GPU node; set nodeCount >= 1, set minCount/maxCount, or set mnistJob.enabled to false"
    return ConfigError(f"invalid config {key}.nodeCount = 0 with {NAMESPACE}:mnistJob.enabled = true: {why}")
