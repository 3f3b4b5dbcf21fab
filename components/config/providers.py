"""The keys of the provider namespace the program documents, `azure-native:` (README,
"Configuration": `azure-native:location`; docs/preflight.md: `azure-native:subscriptionId`): the
provider's own list, read from its installed SDK, and the one-line refusal, with a suggestion, of
any other (a misspelt `azure-native:locaton` would leave the region at eastus, silently). Why,
and where the keys come from: docs/configuration.md, "How a stack file is read" ("Provider keys")."""

from __future__ import annotations

import ast
import difflib
import functools
import importlib.util
from collections.abc import Mapping
from pathlib import Path

from components.config.messages import did_you_mean
from components.config.values import NAMESPACE
from components.errors import ConfigError

# The provider namespaces the program documents, and the Python SDK that carries each one's keys.
PROVIDERS = {"azure-native": "pulumi_azure_native"}
# The default provider's plugin version and download URL, which the engine takes from any
# provider's namespace (pulumi/pulumi pkg/resource/deploy/providers/registry.go `versionKey`,
# `pluginDownloadKey`).
ENGINE_KEYS = ("version", "pluginDownloadURL")
# Read by the provider though its schema does not declare it: the audience of the OIDC token
# exchange (pulumi-azure-native provider/pkg/provider/auth_azidentity.go `readAuthConfig`,
# ARM_OIDC_AUDIENCE).
UNDECLARED = {"azure-native": ("oidcAudience",)}
# How close a namespace must be to one of these to be taken for a misspelling of it
# (difflib's ratio: `azure-natve` 0.96, `azurenative` 0.96; `azure` 0.59, `kubernetes` 0.27).
NAMESPACE_CUTOFF = 0.8


@functools.cache
def sdk_keys(namespace: str) -> dict[str, str]:
    """The config keys the provider's installed Python SDK declares, each with its description."""
    spec = importlib.util.find_spec(PROVIDERS[namespace])
    if spec is None or spec.origin is None:
        raise ConfigError(f"cannot read the {namespace} provider's config keys: its Python SDK {PROVIDERS[namespace]} is not installed")
    source = Path(spec.origin).parent / "config" / "vars.py"
    keys: dict[str, str] = {}
    for node in ast.walk(ast.parse(source.read_text(encoding="utf-8"))):
        if not isinstance(node, ast.FunctionDef):
            continue
        for call in ast.walk(node):
            if not (isinstance(call, ast.Call) and isinstance(getter := call.func, ast.Attribute) and call.args):
                continue
            if getter.attr.startswith("get") and getattr(getter.value, "id", "") == "__config__" and isinstance(call.args[0], ast.Constant):
                key = call.args[0].value
                if isinstance(key, str):
                    keys[key] = " ".join((ast.get_docstring(node) or "").split())
    return keys


def allowed_keys(namespace: str) -> list[str]:
    """Every key of `namespace` the program lets through: the SDK's, in its order, then the rest."""
    return list(dict.fromkeys([*sdk_keys(namespace), *UNDECLARED.get(namespace, ()), *ENGINE_KEYS]))


def check(raw: Mapping[str, str]) -> None:
    """Refuses, in one line with a suggestion, a key of a documented provider namespace that the
    provider does not have, and a key whose namespace is a near miss of one the program reads."""
    for full_key in raw:
        namespace, _, key = full_key.partition(":")
        shown = full_key if full_key.isprintable() else repr(full_key)
        if namespace in PROVIDERS and key not in (allowed := allowed_keys(namespace)):
            listed = ", ".join(f"{namespace}:{k}" for k in allowed)
            raise ConfigError(f"unknown config {shown}{did_you_mean(key, allowed)}; allowed: {listed}")
        near = difflib.get_close_matches(namespace, [NAMESPACE, *PROVIDERS], n=1, cutoff=NAMESPACE_CUTOFF)
        if namespace not in PROVIDERS and namespace != NAMESPACE and key and near:
            raise ConfigError(f"unknown config {shown} (did you mean {near[0]}:{key}?): nothing reads the namespace {namespace}")
