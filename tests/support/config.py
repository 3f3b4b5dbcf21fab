"""The config as the CLI hands it to the program, parsed, or refused in one line."""

from __future__ import annotations

import json
from typing import Any

import pytest

from components import stack as config
from components.errors import ConfigError
from components.stack import parse

NS = "aks-gpu"


def raw(**keys: Any) -> dict[str, str]:
    """Config as the CLI passes it: objects JSON-encoded, scalars as strings."""
    out = {}
    for key, value in keys.items():
        full = key.replace("__", ":") if "__" in key else f"{NS}:{key}"
        out[full] = value if isinstance(value, str) else json.dumps(value)
    return out


def parsed(**keys: Any) -> config.StackConfig:
    return parse(raw(**keys), "aks-gpu", "dev")


def refused(match: str, **keys: Any) -> str:
    with pytest.raises(ConfigError, match=match) as error:
        parsed(**keys)
    message = str(error.value)
    assert "\n" not in message, "config errors are one line"
    return message
