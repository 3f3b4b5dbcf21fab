"""Every setting is proven to matter (#54 §3): each key the stack schema knows, set to a valid
value other than its base's, changes what a run declares (a resource, its inputs or options, a
stack output; for a key that decides whether a deployment goes ahead, that it stops or not), or
is listed in SAYS_ONLY as changing only what the run says, with the reason. A key wired to
nothing fails here the day it is added to components/config/ (and so to the schema).

The keys come from schema/stack.schema.json (`make schema`), every member of every structured
key included; the value from the schema where it can say one (an enum, a boolean, a bounded
number), else from VALUES; the stack each is set on from BASES, where a key needs another key
to mean anything (a spot price needs a spot pool)."""

from __future__ import annotations

import functools
import json
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import fake_prices
import pytest
from conftest import PREFLIGHT_FIXTURES, run_cached
from support.stack_export import exported, saved
from support.stack_schema import SCHEMA, VALIDATOR

from components import stack as config
from components.errors import CostError, PreflightError
from components.stack import SUBSCRIPTION_KEY
from tools.azure_mocks import existing_cluster
from tools.mock_engine import Secret, merged_config
from tools.stack_files import ROOT

POOL_NAME = "<name>"  # a gpuPools member's place in a key's name, as `pulumi config set --path` writes a pool's
T4, T4_8, A100 = "Standard_NC4as_T4_v3", "Standard_NC8as_T4_v3", "Standard_NC24ads_A100_v4"
VNET = "/subscriptions/3333/resourceGroups/net-rg/providers/Microsoft.Network/virtualNetworks/team-vnet/subnets"
GUID = "5f1c2d3e-4a5b-4c6d-8e7f-9a0b1c2d3e4f"
TEAM = {"resourceGroupName": "team-rg", "name": "team-aks"}
EXAMPLE = ROOT / "examples" / "guide-cluster"

# --------------------------------------------------------------------------- the keys


def _resolve(schema: Mapping[str, Any]) -> dict[str, Any]:
    while "$ref" in schema:
        schema = {**SCHEMA["$defs"][schema["$ref"].rsplit("/", 1)[1]], **{k: v for k, v in schema.items() if k != "$ref"}}
    return dict(schema)


def _choices(schema: Mapping[str, Any]) -> list[dict[str, Any]]:
    """What a value may be, less "not set" (null, the empty string) and a secret."""
    schema = _resolve(schema)
    if "anyOf" not in schema:
        return [schema]
    out: list[dict[str, Any]] = []
    for choice in map(_resolve, schema["anyOf"]):
        if choice.get("type") == "null" or "const" in choice or choice.get("required") == ["secure"]:
            continue
        out += _choices(choice)
    return out


def _leaves(path: tuple[str, ...], schema: Mapping[str, Any]) -> Iterator[tuple[tuple[str, ...], dict[str, Any]]]:
    for choice in _choices(schema):
        if choice.get("type") == "object" and "properties" in choice:
            for member, spec in choice["properties"].items():
                yield from _leaves((*path, member), spec)
            return
        if choice.get("type") == "object" and "additionalProperties" in choice:  # gpuPools: a pool per name
            yield from _leaves((*path, POOL_NAME), choice["additionalProperties"])
            return
    yield path, _resolve(schema)


def every_key() -> dict[str, tuple[tuple[str, ...], dict[str, Any]]]:
    """Each settable leaf the schema knows ("aks-gpu:gpuPools.<name>.upgradeSettings.maxSurge"),
    with its path in the config and its schema; and azure-native:subscriptionId, the one
    provider key the program reads itself (SUBSCRIPTION_KEY), which the schema lets
    through with the provider's others."""
    keys = {}
    for key, spec in [*SCHEMA["properties"]["config"]["properties"].items(), (SUBSCRIPTION_KEY, {"type": "string"})]:
        for path, leaf in _leaves((key,), spec):
            keys[".".join(path)] = (path, leaf)
    return keys


KEYS = every_key()

# --------------------------------------------------------------------------- the bases


@dataclass(frozen=True)
class Base:
    """A stack a key means something on: a fixture stack, its overrides, and Azure's answer
    for an existing cluster (tools.azure_mocks.existing_cluster; None: assumed)."""

    stack: str
    overrides: Mapping[str, Any] = field(default_factory=dict)
    cluster: Mapping[str, Any] | None = None
    stack_file: Path | None = None
    #: False: a deployment (`pulumi up`), for a key that decides whether one goes ahead.
    preview: bool = True

    def with_(self, **overrides: Any) -> Base:
        return replace(self, overrides={**self.overrides, **overrides})

    def deployed(self) -> Base:
        return replace(self, preview=False)


# A created cluster with a current GPU size (the dev stack's NC6 is retired: Gen1 only, no MIG).
CREATED = Base("dev", {"gpuPool": {"name": "gpu", "vmSize": T4}})
EXISTING = Base("team")
SYSTEM = {"name": "system", "mode": "System", "vmSize": "Standard_D4s_v5", "count": 3, "maxPods": 250, "osType": "Linux"}
# The cluster's own GPU pool, as tests/support/existing_pools.py has it.
GPUNP = {"name": "gpunp", "mode": "User", "vmSize": T4, "count": 1, "maxPods": 250, "osType": "Linux", "type": "VirtualMachineScaleSets"}
WITH_GPUNP = existing_cluster(agentPoolProfiles=[SYSTEM, GPUNP])
DYNAMIC_POD_IPS = existing_cluster(
    networkProfile={"networkPlugin": "azure", "networkPolicy": "cilium", "networkDataplane": "cilium"},
    agentPoolProfiles=[{**SYSTEM, "vnetSubnetID": f"{VNET}/nodes", "podSubnetID": f"{VNET}/pods", "maxPods": 50}],
)

# The saved files a base or a value names, made by the `saved_files` fixture: each named here
# by its placeholder, put in its place before the run.
PRICES, SKUS, USAGE, NO_A100_SKUS, NO_QUOTA, STATE = "<prices>", "<skus>", "<usage>", "<skus without A100>", "<usage at quota>", "<state>"
FACTS = {"skusFile": SKUS, "usageFile": USAGE}

# What a pool member needs beside it to mean anything: the pool's settings (a T4 pool where
# none are given), and the existing cluster it joins (None: a created cluster).
POOL_NEEDS: dict[str, tuple[dict[str, Any], Mapping[str, Any] | None]] = {
    "gen2": ({}, None),  # without a size, gen2 chooses the default size (catalog.gpu_sizes.default_size)
    "minCount": ({"vmSize": T4, "minCount": 0, "maxCount": 3}, None),
    "maxCount": ({"vmSize": T4, "minCount": 0, "maxCount": 3}, None),
    "spotMaxPrice": ({"vmSize": T4, "spot": True}, None),
    "migProfile": ({"vmSize": A100}, None),
    "maxPods": ({"vmSize": T4, "nodeCount": 3}, None),
    "vnetSubnetId": ({"vmSize": T4}, existing_cluster()),
    "podSubnetId": ({"vmSize": T4, "vnetSubnetId": f"{VNET}/gpu-nodes"}, DYNAMIC_POD_IPS),
    "existing": ({"existing": "use"}, WITH_GPUNP),
    "onDestroy": ({"existing": "adopt"}, WITH_GPUNP),
    "upgradeSettings.maxSurge": ({"vmSize": T4, "upgradeSettings": {"maxSurge": "1", "maxUnavailable": "0"}}, None),
    "upgradeSettings.maxUnavailable": ({"vmSize": T4, "upgradeSettings": {"maxSurge": "0", "maxUnavailable": "1"}}, None),
}


def _pool_base(key: str) -> Base:
    """A gpuPool or gpuPools member's base: one pool, on a created cluster or the one it needs."""
    single = key.startswith(f"{config.NAMESPACE}:gpuPool.")
    member = key.split(".", 1 if single else 2)[-1]
    settings, cluster = POOL_NEEDS.get(member, ({"vmSize": T4}, None))
    name = "gpunp" if cluster is WITH_GPUNP else "gpu"
    where = {"existingCluster": TEAM} if cluster is not None else {}
    pools = {"gpuPool": {"name": name, **settings}} if single else {"gpuPool": None, "gpuPools": {name: settings}}
    return Base("dev", {**where, **pools}, cluster)


GUIDE = Base("ml-prod", stack_file=EXAMPLE / "Pulumi.ml-prod.yaml")  # the guide's cluster, its pool used (examples/guide-cluster/)
ADOPTED = Base("dev", {"existingCluster": TEAM, "gpuPool": None, "gpuPools": {"gpunp": {"existing": "adopt"}}}, WITH_GPUNP)
OPERATOR = CREATED.with_(gpuPool={"name": "gpu", "vmSize": T4, "management": "gpu-operator"})
ENTRA = CREATED.with_(access={"mode": "entra"})
# A deployment that Azure's saved lists let go ahead (tests/fixtures/preflight: quota for A100s, none for T4s).
WITH_FACTS = CREATED.with_(gpuPool={"name": "gpu", "vmSize": A100}, preflight=FACTS).deployed()
BUDGET = CREATED.with_(cost={"budget": {"amount": 100, "contactEmails": ["gpu@example.com"]}})
# Two pools that scale from zero, which a capacity group may list (components/pools/groups.py).
TWO_SIZES = Base(
    "dev",
    {
        "gpuPool": None,
        "gpuPools": {"t4": {"vmSize": T4, "minCount": 0, "maxCount": 2}, "t4b": {"vmSize": T4_8, "minCount": 0, "maxCount": 2}},
    },
)

# Keys that mean something only beside others (the config refuses them alone, or they change
# nothing alone), or only in a deployment (whether it goes ahead).
BASES: dict[str, Base] = {
    "aks-gpu:existingCluster.resourceGroupName": EXISTING,
    "aks-gpu:existingCluster.name": EXISTING,
    "aks-gpu:devicePlugin.adopt": GUIDE,
    "aks-gpu:devicePlugin.onDestroy": GUIDE.with_(devicePlugin={"adopt": True}),
    "aks-gpu:access.deployerType": ENTRA,
    "aks-gpu:access.adminGroupObjectIds": ENTRA,
    "aks-gpu:access.deployerObjectId": ENTRA,
    "aks-gpu:gpuOperator.version": OPERATOR,
    "aks-gpu:gpuOperator.namespace": OPERATOR,
    # Preflight: whether a deployment goes ahead. The dev stack's NC6 is retired: enforce stops.
    "aks-gpu:preflight.mode": Base("dev").deployed(),
    "aks-gpu:preflight.skusFile": WITH_FACTS,
    "aks-gpu:preflight.usageFile": WITH_FACTS,
    "aks-gpu:preflight.pricesFile": CREATED,
    "aks-gpu:preflight.clusterFile": GUIDE.with_(gpuPools={"gpu": {"vmSize": T4}}, preflight=None),
    "aks-gpu:preflight.kubernetesFile": GUIDE.with_(preflight={"clusterFile": str(EXAMPLE / "cluster.json")}),
    "aks-gpu:preflight.stateFile": ADOPTED,
    "aks-gpu:cost.currency": CREATED.with_(preflight={"pricesFile": PRICES}),
    "aks-gpu:cost.maxHourly": CREATED.with_(preflight={"pricesFile": PRICES}).deployed(),
    "aks-gpu:cost.withoutPrices": CREATED.with_(cost={"maxHourly": 100}).deployed(),
    "aks-gpu:cost.budget.amount": BUDGET,
    "aks-gpu:cost.budget.contactEmails": BUDGET,
    f"aks-gpu:gpuGroups.{POOL_NAME}": TWO_SIZES,
}


def base_of(key: str) -> Base:
    if key.startswith((f"{config.NAMESPACE}:gpuPool.", f"{config.NAMESPACE}:gpuPools.")):
        return _pool_base(key)
    return BASES.get(key, CREATED)


# --------------------------------------------------------------------------- the values

# Values the schema cannot give (a pattern's string, a list, a number without bounds), or
# where its first other choice is what the base does anyway. A gpuPools member takes its
# gpuPool twin's value. Files are made by `saved_files` (below) and named by their key here.
VALUES: dict[str, Any] = {
    "aks-gpu:resourceGroupName": "gpu-rg",
    "aks-gpu:clusterName": "gpu-aks",
    "aks-gpu:kubernetesVersion": "1.33",
    "aks-gpu:systemPool.vmSize": "Standard_D4s_v5",
    "aks-gpu:gpuPool.vmSize": T4_8,
    "aks-gpu:gpuPool.spotMaxPrice": 0.5,
    "aks-gpu:gpuPool.zones": ["1", "2"],
    "aks-gpu:gpuPool.vnetSubnetId": f"{VNET}/gpu-nodes",
    "aks-gpu:gpuPool.podSubnetId": f"{VNET}/gpu-pods",
    "aks-gpu:gpuPool.existing": "adopt",
    "aks-gpu:gpuPool.onDestroy": "delete",
    "aks-gpu:gpuPool.upgradeSettings.maxSurge": "33%",
    "aks-gpu:gpuPool.upgradeSettings.maxUnavailable": "2",
    "aks-gpu:gpuPool.name": "gpu2",
    "aks-gpu:existingCluster.resourceGroupName": "other-rg",
    "aks-gpu:existingCluster.name": "other-aks",
    "aks-gpu:devicePlugin.namespace": "nvidia-device-plugin",
    "aks-gpu:devicePlugin.image": "nvcr.io/nvidia/k8s-device-plugin:v0.17.4",
    "aks-gpu:devicePlugin.onDestroy": "delete",
    "aks-gpu:mnistJob.image": "pytorch/pytorch:2.8.0-cuda12.8-cudnn9-runtime",
    "aks-gpu:mnistJob.run": "image",
    "aks-gpu:mnistJob.namespace": "proof",
    "aks-gpu:access.adminGroupObjectIds": [GUID],
    "aks-gpu:access.authorizedIpRanges": ["203.0.113.0/24"],
    "aks-gpu:access.deployerObjectId": GUID,
    "aks-gpu:monitoring.dcgmExporterImage": "nvcr.io/nvidia/k8s/dcgm-exporter:4.4.1-4.6.0-distroless",
    "aks-gpu:gpuOperator.version": "v25.10.1",
    "aks-gpu:gpuOperator.namespace": "nvidia-gpu-operator",
    "aks-gpu:preflight.skusFile": NO_A100_SKUS,
    "aks-gpu:preflight.usageFile": NO_QUOTA,
    "aks-gpu:preflight.pricesFile": PRICES,
    "aks-gpu:preflight.stateFile": STATE,
    "aks-gpu:preflight.clusterFile": str(EXAMPLE / "cluster.json"),
    "aks-gpu:preflight.kubernetesFile": str(EXAMPLE / "kubernetes.json"),
    "aks-gpu:cost.currency": "EUR",
    "aks-gpu:cost.maxHourly": 0.01,
    "aks-gpu:cost.budget.contactEmails": ["ml@example.com"],
    f"aks-gpu:gpuGroups.{POOL_NAME}": ["t4", "t4b"],
    "azure-native:location": "westeurope",
    "azure-native:subscriptionId": "00000000-0000-0000-0000-000000000001",
}


def _twin(key: str) -> str:
    """A gpuPools member's gpuPool twin: "aks-gpu:gpuPools.<name>.vmSize" -> "aks-gpu:gpuPool.vmSize"."""
    return key.replace(f"gpuPools.{POOL_NAME}.", "gpuPool.")


def _current(base: Base, path: tuple[str, ...], schema: Mapping[str, Any]) -> Any:
    """The value the base runs with: its own, or the schema's default."""
    merged = merged_config(base.stack, overrides=base.overrides, stack_file=base.stack_file)
    if path[0] not in merged:
        return schema.get("default")
    node: Any = _decoded(merged[path[0]])
    for part in path[1:]:
        if not isinstance(node, dict):
            return schema.get("default")
        node = next(iter(node.values())) if part == POOL_NAME else node.get(part, schema.get("default"))
    return node


def _decoded(cli_value: str) -> Any:
    """A value as the CLI hands it (objects and scalars as JSON, strings as they are)."""
    try:
        return json.loads(cli_value)
    except ValueError:
        return cli_value


def derived(schema: Mapping[str, Any], current: Any) -> Any:
    """A value the schema allows other than `current`: another of an enum's, the other
    boolean, the next number within bounds (the least, where none is set). None: it cannot say."""
    for choice in _choices(schema):
        if "enum" in choice:
            return next(v for v in choice["enum"] if v != current)
        kind = choice.get("type")
        if kind == "boolean":
            return not current
        if kind in ("integer", "number") and current is not None:
            high = choice.get("maximum")
            if high is None or current + 1 <= high:
                return current + 1
            return current - 1 if kind == "integer" else (current + high) / 2
        if kind == "integer":
            return choice.get("minimum", 0)
    return None


def value_of(key: str) -> Any:
    for name in (key, _twin(key)):
        if name in VALUES:
            return VALUES[name]
    path, schema = KEYS[key]
    return derived(schema, _current(base_of(key), path, schema))


def with_key(base: Base, key: str, value: Any) -> dict[str, Any]:
    """The base's overrides with the key set to `value`, inside its structured key's object."""
    path, _ = KEYS[key]
    top_key = _short(path[0])
    if len(path) == 1:
        return {**base.overrides, top_key: value}
    merged = merged_config(base.stack, overrides=base.overrides, stack_file=base.stack_file)
    top = _decoded(merged.get(path[0]) or "{}")
    node = top
    for part in path[1:-1]:
        part = next(iter(node)) if part == POOL_NAME else part
        if not isinstance(node.get(part), dict):
            node[part] = {}
        node = node[part]
    # A map's entry (gpuGroups' group) takes the base's own name, or one of its own.
    node[next(iter(node), "inference") if path[-1] == POOL_NAME else path[-1]] = value
    return {**base.overrides, top_key: top}


def _short(key: str) -> str:
    """A key as run_cached and merged_config take it: the project's keys without their namespace."""
    return key.removeprefix(f"{config.NAMESPACE}:")


# --------------------------------------------------------------------------- what a run shows


@dataclass(frozen=True)
class Seen:
    """What a run shows: what it declares (each resource's type, inputs, options, parent,
    provider and dependencies, by URN, and the stack outputs; or, for a deployment that
    preflight stops, its one line) and what it says (its warnings and lines for the record)."""

    declared: Any
    said: Any


def _frozen(value: Any) -> Any:
    if isinstance(value, Secret):
        return ("secret", _frozen(value.value))
    if isinstance(value, dict):
        return tuple(sorted((k, _frozen(v)) for k, v in value.items()))
    if isinstance(value, list):
        return tuple(_frozen(v) for v in value)
    return value


def seen(base: Base, overrides: Mapping[str, Any], files: Mapping[str, str]) -> Seen:
    placed = json.loads(functools.reduce(lambda text, f: text.replace(f, files[f]), files, json.dumps(overrides)))
    cluster = dict(base.cluster) if base.cluster is not None else None
    try:
        run = run_cached(base.stack, base.preview, cluster=cluster, stack_file=base.stack_file, **placed)[0]
    except (PreflightError, CostError) as stopped:
        if base.preview:
            raise
        return Seen(declared=("stopped", str(stopped)), said=())
    resources = {r.urn: (r.type, _frozen(r.inputs), _frozen(r.options), r.parent, r.provider, tuple(r.dependencies)) for r in run.resources}
    outputs = {name: (_frozen(out.value), out.secret) for name, out in run.outputs.items()}
    return Seen(declared=(resources, outputs), said=(tuple(run.warnings), tuple(run.infos)))


# --------------------------------------------------------------------------- the lists

# Keys whose only effect is on what the run says, each with the reason; a listed key that
# changes what is declared, or nothing at all, fails. None today: the keys that only warn in a
# preview (preflight's, the cost limit's) are set on a deployment, which they stop or let go.
SAYS_ONLY: dict[str, str] = {}

# --------------------------------------------------------------------------- the tests


@pytest.fixture(scope="module")
def saved_files(tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    """The files a base or a value names, by placeholder: Azure's saved SKU and usage lists, as
    they are, without the A100 size, and with every quota used; a price list; and the export of the state a
    deployment of the adopting stack left."""
    folder = tmp_path_factory.mktemp("every-key")
    skus = json.loads((PREFLIGHT_FIXTURES / "eastus-skus.json").read_text())
    usages = json.loads((PREFLIGHT_FIXTURES / "eastus-usage.json").read_text())
    for usage in usages:
        usage["currentValue"] = usage["limit"]
    files = {
        SKUS: str(PREFLIGHT_FIXTURES / "eastus-skus.json"),
        USAGE: str(PREFLIGHT_FIXTURES / "eastus-usage.json"),
        NO_A100_SKUS: [s for s in skus if s["name"] != A100],
        NO_QUOTA: usages,
        PRICES: json.loads(fake_prices.saved()),
    }
    for placeholder, content in files.items():
        if not isinstance(content, str):
            path = folder / f"{len(list(folder.iterdir()))}.json"
            path.write_text(json.dumps(content))
            files[placeholder] = str(path)
    cluster = dict(ADOPTED.cluster or {})
    deployed = run_cached(ADOPTED.stack, False, cluster=cluster, **ADOPTED.overrides)[0]
    files[STATE] = saved(folder / "state.json", exported(deployed))
    return files  # type: ignore[return-value]


@pytest.mark.parametrize("key", sorted(KEYS))
def test_every_key_changes_what_a_run_declares_or_is_listed_as_only_said(key: str, saved_files: dict[str, str]) -> None:
    base, value = base_of(key), value_of(key)
    assert value is not None, f"{key}: the schema gives no value: add one to VALUES"
    before, after = seen(base, base.overrides, saved_files), seen(base, with_key(base, key, value), saved_files)
    stopped = [s.declared[0] == "stopped" for s in (before, after)]
    declares = after.declared != before.declared and not all(stopped)  # a deployment stopped either way: not by this key
    says = after.said != before.said
    shown = f"{key} = {value!r} ({'a deployment' if not base.preview else 'a preview'})"
    if key in SAYS_ONLY:
        assert not declares, f"{shown} changes what is declared: take it off SAYS_ONLY"
        assert says, f"{shown} changes nothing, not even what the run says"
    else:
        assert declares, f"{shown} changes nothing the run declares" + (
            " (only what it says: list it in SAYS_ONLY, with the reason)" if says else ""
        )


def test_the_tables_name_only_keys_the_schema_has() -> None:
    pool_members = {key.split(".", 1)[1] for key in KEYS if key.startswith(f"{config.NAMESPACE}:gpuPool.")}
    assert set(VALUES) | set(BASES) | set(SAYS_ONLY) <= set(KEYS)
    assert set(POOL_NEEDS) <= pool_members


def test_every_value_and_base_set_here_is_one_the_schema_accepts() -> None:
    for key in KEYS:
        base = base_of(key)
        overrides = with_key(base, key, value_of(key))
        given = {k if ":" in k else f"{config.NAMESPACE}:{k}": v for k, v in overrides.items() if v is not None}
        assert [e.message for e in VALIDATOR.iter_errors({"config": given})] == [], key
