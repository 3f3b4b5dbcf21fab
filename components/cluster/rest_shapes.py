"""Azure's description of a managed cluster and its pools, typed by the Azure SDK's own models
(azure-mgmt-containerservice 41.8, `_utils/model_base.py` `rest_field`), checked once at the edge,
so that a wrong type is one line naming the member, never a traceback later. The models check
nothing themselves: reading a member casts it (`bool("false")` is True) or hands back the raw
value (model_base `_deserialize_default`), so the check is made here, from their annotations."""

from __future__ import annotations

import enum
import functools
import json
import math
import operator
import typing
from collections.abc import Mapping
from typing import Any, cast

from azure.mgmt.containerservice import models  # the SDK's data models: no client, no call
from pydantic import ValidationError

from components import files
from components.cluster import cluster_egress
from components.config import messages
from components.errors import cut
from components.pools import pool_upgrades
from components.seam import saved_files

# A model whose members the program reads into its own config is held to the config's rules too.
RULES: dict[type, Any] = {models.AgentPoolUpgradeSettings: pool_upgrades.PoolUpgradeSettings}
# Members of the preview versions the SDK's stable models lack (2026-01-02-preview's ARM schema),
# which a newer az CLI's `az aks show` may hold.
PREVIEW_MEMBERS: dict[type, dict[str, Any]] = {
    models.ManagedClusterHTTPProxyConfig: {"effectiveNoProxy": list[str]},
    models.NvidiaGPUProfile: {"migStrategy": str},
}


@functools.cache
def fields(model: type) -> dict[str, Any]:
    """A model's members: REST name -> annotation, known after its first instance (model_base `Model.__new__`)."""
    model()
    hints = typing.get_type_hints(model, localns={"_models": models})
    members = {rf._rest_name: hints[attr] for attr, rf in model._attr_to_rest_field.items()}  # type: ignore[attr-defined]
    return members | PREVIEW_MEMBERS.get(model, {})


def _bare(annotation: Any) -> Any:
    """The type inside `X | None`; a string for `Union[str, SomeEnum]` (ARM's open enums)."""
    args = typing.get_args(annotation)
    if typing.get_origin(annotation) is typing.Union:
        args = tuple(a for a in args if a is not type(None) and not (isinstance(a, type) and issubclass(a, enum.Enum)))
        return args[0] if len(args) == 1 else annotation
    return annotation


def _is_model(shape: Any) -> bool:
    # As the SDK tells one itself (model_base `_is_model`).
    return isinstance(shape, type) and getattr(shape, "_is_model", False) is True


def _names(model: type) -> dict[str, str]:
    return {name.lower(): name for name in fields(model)}


def view(value: Any, annotation: Any = models.ManagedCluster) -> Any:
    """`value` in ARM's REST shape for `annotation`: members under the model's names (matched
    without case: `az aks show` writes `vnetSubnetId`), flat members put in the `properties`
    envelope where the model has one, and looked for in it where it has none; others kept."""
    shape = _bare(annotation)
    if _is_model(shape) and isinstance(value, Mapping):
        own = fields(shape)
        inner = _bare(own.get("properties"))
        nested = fields(inner) if _is_model(inner) else {}
        nested_names = _names(inner) if nested else {}
        envelope = next((v for k, v in value.items() if str(k).lower() == "properties"), None)
        enveloped = [] if not isinstance(envelope, Mapping) else [(k, v, True) for k, v in envelope.items()]
        found: dict[str, Any] = {}
        properties: dict[str, Any] = {}
        for key, member, in_envelope in [*((k, v, False) for k, v in value.items() if str(k).lower() != "properties"), *enveloped]:
            lowered = str(key).lower()
            homes = [(nested, nested_names, properties), (own, _names(shape), found)]
            for members, names, into in homes if in_envelope else homes[::-1]:
                if lowered in names and names[lowered] != "properties":
                    into.setdefault(names[lowered], view(member, members[names[lowered]]))
                    break
            else:
                (properties if in_envelope and nested else found).setdefault(key, member)
        if properties or (nested and envelope is not None):
            found["properties"] = properties if isinstance(envelope, Mapping) or properties else envelope
        return found
    if typing.get_origin(shape) is list and isinstance(value, list):
        return [view(inner, typing.get_args(shape)[0]) for inner in value]
    if typing.get_origin(shape) is dict and isinstance(value, Mapping):
        return {key: view(inner, typing.get_args(shape)[1]) for key, inner in value.items()}
    return value


def _wrong(value: Any, annotation: Any, loc: tuple[Any, ...]) -> tuple[tuple[Any, ...], str] | None:
    """Where the first member of another type than its annotation is, and what it should be."""
    shape = _bare(annotation)
    if value is None:
        return None
    if _is_model(shape):
        if not isinstance(value, Mapping):
            return loc, "an object"
        own = fields(shape)
        inner = (_wrong(v, own[k], (*loc, k)) for k, v in value.items() if k in own)
        return next((w for w in inner if w), None) or _ruled(value, shape, loc)
    origin, args = typing.get_origin(shape), typing.get_args(shape)
    if origin in (list, dict):  # list[T] by index, dict[str, T] by key: each member a T (args[-1])
        listed = origin is list
        if not isinstance(value, list if listed else Mapping):
            return loc, "a list" if listed else "an object"
        members = value.items() if isinstance(value, Mapping) else enumerate(value)
        return next((w for k, v in members if (w := _wrong(v, args[-1], (*loc, k)))), None)
    number = isinstance(value, (int, float)) and not isinstance(value, bool)
    if shape is int and not (number and math.isfinite(value) and float(value).is_integer()):
        # An invoke's answer reaches the program through a protobuf Struct, whose numbers are all
        # floats (google/protobuf struct.proto `number_value`): 3.0 is the count 3.
        return loc, "a whole number"
    if shape is float and not (number and math.isfinite(value)):
        return loc, "a finite number" if number else "a number"
    expected = {str: "a string", bool: "true or false"}.get(shape)
    return (loc, expected) if expected and not isinstance(value, shape) else None


def _ruled(value: Mapping[str, Any], model: type, loc: tuple[Any, ...]) -> tuple[tuple[Any, ...], str] | None:
    rule = RULES.get(model)
    if rule is None:
        return None
    try:
        rule(**{messages.snake(k): v for k, v in value.items() if messages.snake(k) in rule.__dataclass_fields__ and v is not None})
    except ValidationError as error:
        member = str(error.errors()[0]["loc"][0])
        return (*loc, messages.camel_case(member)), messages.allowed_text(messages.annotation_at(rule, (member,)))
    return None


def _where(loc: tuple[Any, ...], checked: Mapping[str, Any]) -> str:
    """`agentPoolProfiles[gpunp].gpuProfile.driver`: a pool by its name, no `properties`."""
    text, at = "", cast(Any, checked)
    for part in loc:
        if isinstance(part, int):
            item = at[part] if isinstance(at, list) and part < len(at) else None
            text += f"[{_name(item, part)}]"
            at = item
        else:
            text += "" if part == "properties" else _in(text, str(part))[len(text) :]
            at = at.get(part) if isinstance(at, Mapping) else None
    return text


def _shown(value: Any) -> str:
    try:
        return cut(json.dumps(value))
    except ValueError:  # NaN, which json.dumps writes, and nothing else here
        return cut(repr(value))


# Maps whose keys are data, not Azure's member names: Kubernetes label keys are case-sensitive.
_DATA = frozenset({"nodelabels"})


def _twice(value: Any, where: str = "") -> str | None:
    """A member given twice in two casings (`vmSize` and `VMSize`), anywhere: `view` reads
    members without case, so which one Azure meant is not known."""
    if isinstance(value, list):
        return next((t for i, item in enumerate(value) if (t := _twice(item, f"{where}[{_name(item, i)}]"))), None)
    if not isinstance(value, Mapping):
        return None
    seen: dict[str, str] = {}
    for key in value:
        lowered = str(key).lower()
        if lowered in seen and lowered not in _DATA:
            return f"{_in(where, seen[lowered])} is given twice, as {_shown(seen[lowered])} and {_shown(str(key))}"
        seen[lowered] = str(key)
    return next((t for k, inner in value.items() if str(k).lower() not in _DATA and (t := _twice(inner, _in(where, str(k))))), None)


def _plain(text: str) -> bool:
    return text.isprintable() and text.isascii() and 0 < len(text) <= 40


def _in(where: str, key: str) -> str:
    """A member's path, its name quoted (escaped, cut) where it is not plain."""
    name = key if _plain(key) else _shown(key)
    return f"{where}.{name}" if where else name


def _name(item: Any, index: int) -> str:
    name = item.get("name") if isinstance(item, Mapping) else None
    return name if isinstance(name, str) and _plain(name) else str(index)


def problem(doc: Any, model: type = models.ManagedCluster) -> str | None:
    """What member of Azure's description of a `model` is not of Azure's type, in words, or None."""
    if deep := files.depth_problem(doc, saved_files.DEPTH):
        return deep
    if twice := _twice(doc):
        return f"{twice}: Azure's member names do not depend on case, so this program cannot tell which one Azure means"
    checked = view(doc, model)
    if wrong := _wrong(checked, model, ()):
        loc, expected = wrong
        return f"{_where(loc, checked)} is {_shown(_at(checked, loc))}, not {expected}"
    properties = checked.get("properties")
    return _surrogate_problem(checked) or _proxy_problem(properties.get("httpProxyConfig") if isinstance(properties, Mapping) else None)


def cluster(doc: Any) -> models.ManagedCluster:
    """The description as the SDK's model, once `problem` found nothing wrong with it."""
    return models.ManagedCluster(view(doc))


def _surrogates(value: Any, loc: tuple[Any, ...] = ()) -> tuple[Any, ...] | None:
    """Where the first string holding a lone surrogate is (a JSON `\\ud800` escape: UTF-8, and
    so no message or declared input, can carry it), or None."""
    if isinstance(value, str):
        return loc if any("\ud800" <= c <= "\udfff" for c in value) else None
    items = value.items() if isinstance(value, Mapping) else enumerate(value) if isinstance(value, list) else ()
    for key, inner in items:
        if isinstance(key, str) and _surrogates(key) is not None:
            return loc
        if (found := _surrogates(inner, (*loc, key))) is not None:
            return found
    return None


def _at(checked: Any, loc: tuple[Any, ...]) -> Any:
    return functools.reduce(operator.getitem, loc, checked)


def _surrogate_problem(checked: Any) -> str | None:
    loc = _surrogates(checked)
    if loc is None:
        return None
    at = _at(checked, loc)
    said = f"is {_shown(at)}, not text: it holds" if isinstance(at, str) else "has a member whose name holds"
    return f"{_where(loc, checked) or 'the description'} {said} a lone surrogate, which UTF-8 cannot carry"


def _proxy_problem(config: Any) -> str | None:
    """A proxy URL urllib cannot read (the Job would fail on it), quoted without its password."""
    for member in ("httpProxy", "httpsProxy"):
        url = config.get(member) if isinstance(config, Mapping) else None
        if isinstance(url, str) and url and (allowed := cluster_egress.url_problem(url)):
            return f"httpProxyConfig.{member} is {_shown(cluster_egress.shown_url(url))}, not {allowed}"
    return None
