"""Azure's description of a managed cluster, typed: every member the program reads of it, and
every member an adopted pool passes through to its declaration, with the type Azure's API gives it,
checked once at the edge for each description the program meets, so that a wrong type is one line
naming the member, never a traceback later. The types' sources (the ARM schema 2025-09-01 and
2026-01-02-preview, Azure's bicep types): docs/configuration.md, the existing cluster's description."""

from __future__ import annotations

import functools
import json
import math
import typing
from collections.abc import Mapping
from typing import Annotated, Any, Literal, cast

from pydantic import BeforeValidator, ConfigDict, Field, TypeAdapter, ValidationError
from typing_extensions import TypedDict, is_typeddict

from components import files
from components.config.pool_upgrades import NodeShare
from components.config.values import Allowed
from components.deciding.azure import cluster_egress
from components.errors import cut
from components.reading import saved_files


def _whole(value: Any) -> Any:
    # An invoke's answer reaches the program through a protobuf Struct, whose numbers are all
    # floats (google/protobuf struct.proto `number_value`): 3.0 is the count 3.
    return int(value) if isinstance(value, float) and math.isfinite(value) and value.is_integer() else value


Whole = Annotated[int, BeforeValidator(_whole)]
Number = Annotated[float, Field(allow_inf_nan=False)]
Strings = list[str]
Labels = dict[str, str]


class PowerState(TypedDict, total=False):
    code: str | None


class UpgradeSettings(TypedDict, total=False):
    """Read into the program's own PoolUpgradeSettings (existing_pools `_upgrade_settings`),
    so held to its rules here, which are AKS's (components/config/pool_upgrades.py)."""

    maxSurge: NodeShare | None
    maxUnavailable: NodeShare | None
    drainTimeoutInMinutes: Annotated[int, Field(ge=1, le=1440), Allowed("a whole number from 1 to 1440"), BeforeValidator(_whole)] | None
    nodeSoakDurationInMinutes: Annotated[int, Field(ge=0, le=30), Allowed("a whole number from 0 to 30"), BeforeValidator(_whole)] | None
    undrainableNodeBehavior: Annotated[Literal["Cordon", "Schedule"], Allowed("one of Cordon, Schedule")] | None


class NvidiaProfile(TypedDict, total=False):
    managementMode: str | None
    migStrategy: str | None


class GpuProfile(TypedDict, total=False):
    driver: str | None
    nvidia: NvidiaProfile | None


class KubeletConfig(TypedDict, total=False):
    cpuManagerPolicy: str | None
    cpuCfsQuota: bool | None
    cpuCfsQuotaPeriod: str | None
    imageGcHighThreshold: Whole | None
    imageGcLowThreshold: Whole | None
    topologyManagerPolicy: str | None
    allowedUnsafeSysctls: Strings | None
    failSwapOn: bool | None
    containerLogMaxSizeMB: Whole | None
    containerLogMaxFiles: Whole | None
    podMaxPids: Whole | None


# SysctlConfig: every member a whole number but these.
_SYSCTL_WHOLE = (
    "fsAioMaxNr fsFileMax fsInotifyMaxUserWatches fsNrOpen kernelThreadsMax netCoreNetdevMaxBacklog netCoreOptmemMax "
    "netCoreRmemDefault netCoreRmemMax netCoreSomaxconn netCoreWmemDefault netCoreWmemMax netIpv4NeighDefaultGcThresh1 "
    "netIpv4NeighDefaultGcThresh2 netIpv4NeighDefaultGcThresh3 netIpv4TcpFinTimeout netIpv4TcpKeepaliveProbes "
    "netIpv4TcpKeepaliveTime netIpv4TcpMaxSynBacklog netIpv4TcpMaxTwBuckets netIpv4TcpkeepaliveIntvl "
    "netNetfilterNfConntrackBuckets netNetfilterNfConntrackMax vmMaxMapCount vmSwappiness vmVfsCachePressure"
).split()
SysctlConfig = TypedDict(  # the functional form, for 28 members
    "SysctlConfig",
    {**dict.fromkeys(_SYSCTL_WHOLE, Whole | None), "netIpv4IpLocalPortRange": str | None, "netIpv4TcpTwReuse": bool | None},  # type: ignore[misc]
    total=False,
)


class LinuxOSConfig(TypedDict, total=False):
    sysctls: SysctlConfig | None
    transparentHugePageEnabled: str | None
    transparentHugePageDefrag: str | None
    swapFileSizeMB: Whole | None


class SecurityProfile(TypedDict, total=False):
    enableVTPM: bool | None
    enableSecureBoot: bool | None
    sshAccess: str | None


class PortRange(TypedDict, total=False):
    portStart: Whole | None
    portEnd: Whole | None
    protocol: str | None


class IPTag(TypedDict, total=False):
    ipTagType: str | None
    tag: str | None


class PoolNetworkProfile(TypedDict, total=False):
    allowedHostPorts: list[PortRange] | None
    applicationSecurityGroups: Strings | None
    nodePublicIPTags: list[IPTag] | None


class AgentPoolProfile(TypedDict, total=False):
    """ManagedClusterAgentPoolProfile: what the program reads, and what adopting passes on
    (components/deciding/existing/existing_pools.py PASSED_THROUGH)."""

    name: str | None
    mode: str | None
    type: str | None
    vmSize: str | None
    count: Whole | None
    maxPods: Whole | None
    minCount: Whole | None
    maxCount: Whole | None
    enableAutoScaling: bool | None
    vnetSubnetID: str | None
    podSubnetID: str | None
    tags: Labels | None
    nodeTaints: Strings | None
    nodeLabels: Labels | None
    provisioningState: str | None
    powerState: PowerState | None
    osType: str | None
    scaleSetPriority: str | None
    scaleSetEvictionPolicy: str | None
    spotMaxPrice: Number | None
    gpuInstanceProfile: str | None
    gpuProfile: GpuProfile | None
    orchestratorVersion: str | None
    currentOrchestratorVersion: str | None
    upgradeSettings: UpgradeSettings | None
    availabilityZones: Strings | None
    osDiskSizeGB: Whole | None
    osDiskType: str | None
    osSKU: str | None
    enableNodePublicIP: bool | None
    nodePublicIPPrefixID: str | None
    enableEncryptionAtHost: bool | None
    enableFIPS: bool | None
    enableUltraSSD: bool | None
    kubeletDiskType: str | None
    proximityPlacementGroupID: str | None
    capacityReservationGroupID: str | None
    hostGroupID: str | None
    scaleDownMode: str | None
    workloadRuntime: str | None
    kubeletConfig: KubeletConfig | None
    linuxOSConfig: LinuxOSConfig | None
    securityProfile: SecurityProfile | None
    networkProfile: PoolNetworkProfile | None
    messageOfTheDay: str | None
    podIPAllocationMode: str | None


class NetworkProfile(TypedDict, total=False):
    networkPlugin: str | None
    networkPluginMode: str | None
    networkPolicy: str | None
    networkDataplane: str | None
    outboundType: str | None


class HttpProxyConfig(TypedDict, total=False):
    """ManagedClusterHttpProxyConfig. `enabled` and the read-only `effectiveNoProxy` are only in
    the preview versions (2026-01-02-preview's ARM schema and bicep types), which a saved
    `az aks show` of a newer az CLI may hold."""

    enabled: bool | None
    httpProxy: str | None
    httpsProxy: str | None
    noProxy: Strings | None
    effectiveNoProxy: Strings | None
    trustedCa: str | None


class ApiServerAccessProfile(TypedDict, total=False):
    enablePrivateCluster: bool | None
    enableVnetIntegration: bool | None
    authorizedIPRanges: Strings | None


class NodeProvisioningProfile(TypedDict, total=False):
    """ManagedClusterNodeProvisioningProfile (ARM 2025-09-01): `mode` Manual or Auto (node
    auto-provisioning, Karpenter), `defaultNodePools` None or Auto."""

    mode: str | None
    defaultNodePools: str | None


class ManagedCluster(TypedDict, total=False):
    id: str | None
    name: str | None
    location: str | None
    resourceUID: str | None
    kubernetesVersion: str | None
    currentKubernetesVersion: str | None
    provisioningState: str | None
    powerState: PowerState | None
    nodeResourceGroup: str | None
    networkProfile: NetworkProfile | None
    aadProfile: dict[str, Any] | None
    apiServerAccessProfile: ApiServerAccessProfile | None
    httpProxyConfig: HttpProxyConfig | None
    nodeProvisioningProfile: NodeProvisioningProfile | None
    agentPoolProfiles: list[AgentPoolProfile] | None


# Strict: "30" is not a whole number, 1 not true (pydantic's strict mode, on each shape).
for _shape in (PowerState, UpgradeSettings, NvidiaProfile, GpuProfile, KubeletConfig, SysctlConfig, LinuxOSConfig, SecurityProfile):
    setattr(_shape, "__pydantic_config__", ConfigDict(strict=True))  # noqa: B010 - a TypedDict's pydantic config
for _shape in (
    PortRange,
    IPTag,
    PoolNetworkProfile,
    AgentPoolProfile,
    NetworkProfile,
    ApiServerAccessProfile,
    NodeProvisioningProfile,
    ManagedCluster,
):
    setattr(_shape, "__pydantic_config__", ConfigDict(strict=True))  # noqa: B010 - a TypedDict's pydantic config
HttpProxyConfig.__pydantic_config__ = ConfigDict(strict=True)  # type: ignore[attr-defined]
CLUSTER = TypeAdapter(ManagedCluster)
# pydantic's error types, as a line says what a member should be.
EXPECTED = {
    "string_type": "a string",
    "int_type": "a whole number",
    "int_from_float": "a whole number",
    "bool_type": "true or false",
    "float_type": "a number",
    "finite_number": "a finite number",
    "dict_type": "an object",
    "list_type": "a list",
}


def _bare(annotation: Any) -> Any:
    """The type inside `X | None` and `Annotated[X, ...]`."""
    while True:
        if typing.get_origin(annotation) is Annotated:
            annotation = typing.get_args(annotation)[0]
        elif type(None) in typing.get_args(annotation) and typing.get_origin(annotation) is not dict:
            annotation = next(a for a in typing.get_args(annotation) if a is not type(None))
        else:
            return annotation


@functools.cache
def _hints(shape: Any) -> dict[str, Any]:
    """A TypedDict's members and their annotations, resolved once (`get_type_hints` resolves
    every string annotation again on each call)."""
    return typing.get_type_hints(shape, include_extras=True)


def view(value: Any, annotation: Any = ManagedCluster) -> Any:
    """`value` with the members of `annotation` under their schema names (matched without
    case, a `properties` envelope looked into, as cluster_facts `_get` reads them) and the
    members the program does not read left out."""
    shape = _bare(annotation)
    if is_typeddict(shape) and isinstance(value, Mapping):
        envelope = value.get("properties")
        # The member itself first, then the envelope's: the first spelling found wins, as in `_get`.
        members = [*value.items(), *(envelope.items() if isinstance(envelope, Mapping) else ())]
        hints = _hints(shape)
        names = {name.lower(): name for name in hints}
        found: dict[str, Any] = {}
        for key, inner in members:
            name = names.get(str(key).lower())
            if name is not None and name not in found:
                found[name] = view(inner, hints[name])
        return found
    if typing.get_origin(shape) is list and isinstance(value, list):
        return [view(inner, typing.get_args(shape)[0]) for inner in value]
    return value


def _where(loc: tuple[Any, ...], checked: Mapping[str, Any]) -> str:
    """`agentPoolProfiles[gpunp].upgradeSettings.maxSurge`: a pool by its name where it has one."""
    text, at = "", cast(Any, checked)
    for part in loc:
        if isinstance(part, int):
            item = at[part] if isinstance(at, list) and part < len(at) else None
            name = item.get("name") if isinstance(item, Mapping) else None
            text += f"[{name}]" if isinstance(name, str) and name.isprintable() and 0 < len(name) <= 40 else f"[{part}]"
            at = item
        else:
            text += f".{part}" if text else str(part)
            at = at.get(part) if isinstance(at, Mapping) else None
    return text


def _allowed(loc: tuple[Any, ...]) -> str | None:
    """What the member at `loc` allows, as its annotation words it (values.Allowed)."""
    annotation: Any = ManagedCluster
    for part in loc:
        shape = _bare(annotation)
        if isinstance(part, int):
            annotation = typing.get_args(shape)[0]
        elif is_typeddict(shape):
            annotation = _hints(shape).get(str(part))
        else:
            return None
    inner = [a for a in typing.get_args(annotation) if a is not type(None)] if type(None) in typing.get_args(annotation) else []
    found = [m for a in (annotation, *inner) for m in getattr(a, "__metadata__", ()) if isinstance(m, Allowed)]
    return found[0].text if found else None


def _shown(value: Any) -> str:
    try:
        return cut(json.dumps(value))
    except ValueError:  # NaN, which json.dumps writes, and nothing else here
        return cut(repr(value))


# Maps whose keys are data, not Azure's member names: Kubernetes label keys are case-sensitive.
_DATA = frozenset({"nodelabels"})


def _twice(value: Any, where: str = "") -> str | None:
    """A member given twice in two casings (`vmSize` and `VMSize`), anywhere: the program
    reads members without case (cluster_facts `_get`), so which one Azure meant is not known."""
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


def problem(doc: Any) -> str | None:
    """What member of a cluster's description is not of the type Azure gives it, in words,
    or None."""
    if deep := files.depth_problem(doc, saved_files.DEPTH):
        return deep
    if twice := _twice(doc):
        return f"{twice}: Azure's member names do not depend on case, so this program cannot tell which one Azure means"
    checked = view(doc)
    try:
        CLUSTER.validate_python(checked)
    except ValidationError as error:
        first = error.errors()[0]
        where = _where(tuple(first["loc"]), checked)
        expected = EXPECTED.get(first["type"]) or _allowed(tuple(first["loc"])) or first["msg"].lower()
        return f"{where} is {_shown(first['input'])}, not {expected}"
    return _surrogate_problem(checked) or _proxy_problem(checked.get("httpProxyConfig") if isinstance(checked, Mapping) else None)


def _surrogates(value: Any, loc: tuple[Any, ...] = ()) -> tuple[Any, ...] | None:
    """Where the first string holding a lone surrogate is (a JSON `\\ud800` escape in a saved
    file: UTF-8 cannot carry it, so neither a message nor a declared input can), or None."""
    if isinstance(value, str):
        return loc if any("\ud800" <= c <= "\udfff" for c in value) else None
    items = value.items() if isinstance(value, Mapping) else enumerate(value) if isinstance(value, list) else ()
    for key, inner in items:
        if isinstance(key, str) and _surrogates(key) is not None:
            return loc
        if (found := _surrogates(inner, (*loc, key))) is not None:
            return found
    return None


def _surrogate_problem(checked: Any) -> str | None:
    loc = _surrogates(checked)
    if loc is None:
        return None
    at: Any = checked
    for part in loc:
        at = at[part]
    said = f"is {_shown(at)}, not text: it holds" if isinstance(at, str) else "has a member whose name holds"
    return f"{_where(loc, checked) or 'the description'} {said} a lone surrogate, which UTF-8 cannot carry"


def _proxy_problem(config: Any) -> str | None:
    """A proxy URL urllib cannot read (the Job would fail on it, and the program with it), quoted
    without its password."""
    for member in ("httpProxy", "httpsProxy"):
        url = config.get(member) if isinstance(config, Mapping) else None
        if isinstance(url, str) and url and (allowed := cluster_egress.url_problem(url)):
            return f"httpProxyConfig.{member} is {_shown(cluster_egress.shown_url(url))}, not {allowed}"
    return None
