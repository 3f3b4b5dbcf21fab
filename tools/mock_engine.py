"""Runs the real Pulumi program under Pulumi's mock engine and records what it declares.

This is the machinery behind both `make render` and the tests: no cloud, no credentials,
no Pulumi CLI. It does what the CLI would do before it starts the program:

  * merges project config from `Pulumi.yaml` (provider values and project-key defaults)
    with `Pulumi.<stack>.yaml`, and hands the program the same flat string map the CLI
    does (the mock engine applies no `Pulumi.yaml` defaults by itself);
  * records every resource registration with its type, inputs, parent, provider,
    dependencies and options (the stock mock monitor keeps only the resulting state);
  * collects stack outputs (with their secretness) and the warnings the program logs.

Mock answers stand in for Azure: resource names echo their inputs and the user
credential is a fake kubeconfig whose token is `MOCK_USER_TOKEN`.
"""

from __future__ import annotations

import asyncio
import base64
import contextlib
import copy
import functools
import json
import logging
import runpy
import sys
import warnings
import weakref
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Iterator, Mapping, Optional

import grpc
import pulumi
import yaml
from pulumi.runtime import mocks as pulumi_mocks
from pulumi.runtime import rpc, settings
from pulumi.runtime.stack import wait_for_rpcs
from pulumi.runtime.sync_await import _sync_await

ROOT = Path(__file__).resolve().parent.parent
PROJECT_FILE = ROOT / "Pulumi.yaml"

# The fake credential; tests check that it never shows up outside a secret.
MOCK_USER_TOKEN = "mock-user-token-0123456789abcdef"
USER_CREDENTIALS_TOKEN = "azure-native:containerservice:listManagedClusterUserCredentials"
CLIENT_CONFIG_TOKEN = "azure-native:authorization:getClientConfig"
FEATURE_REGISTRATION_TOKEN = "azure-native:features:getSubscriptionFeatureRegistration"
MANAGED_CLUSTER_TOKEN = "azure-native:containerservice:getManagedCluster"
# Who "runs pulumi up" under mocks.
MOCK_CLIENT = {
    "clientId": "11111111-1111-1111-1111-111111111111",
    "objectId": "22222222-2222-2222-2222-222222222222",
    "subscriptionId": "33333333-3333-3333-3333-333333333333",
    "tenantId": "44444444-4444-4444-4444-444444444444",
}
# The AKS Entra server application that kubelogin asks tokens for (Azure/kubelogin docs).
AKS_ENTRA_SERVER_ID = "6dae42f8-4368-4678-94ff-3960e28e3630"


class Secret:
    """A recorded value that Pulumi treats as secret."""

    def __init__(self, value: Any) -> None:
        self.value = value

    def __repr__(self) -> str:  # never print the value by accident
        return "Secret([secret])"


@dataclass
class Registration:
    """One resource as the program registered it."""

    urn: str
    type: str
    name: str
    custom: bool
    parent: str
    provider: str
    dependencies: list[str]
    inputs: dict[str, Any]
    options: dict[str, Any]
    #: The inputs as the SDK sent them to the engine (a protobuf Struct: every number a
    #: double, a preview's unknowns the UNKNOWN string), which the engine hands a provider.
    wire: Any = field(default=None, repr=False, compare=False)


@dataclass
class StackOutput:
    value: Any
    secret: bool


@dataclass
class ProgramRun:
    project: str
    stack: str
    preview: bool
    config: dict[str, str]
    resources: list[Registration]
    outputs: dict[str, StackOutput]
    warnings: list[str] = field(default_factory=list)
    #: The program's `pulumi.log.info` lines (the cost figures).
    infos: list[str] = field(default_factory=list)
    #: What the mock engine assumed in Azure's place (a cluster it had no description of).
    notes: list[str] = field(default_factory=list)

    def of_type(self, type_: str) -> list[Registration]:
        return [r for r in self.resources if r.type == type_]

    def one(self, type_: str, name: Optional[str] = None) -> Registration:
        """The one resource of a type; for Kubernetes objects, optionally the one so named."""
        found = [r for r in self.of_type(type_) if name is None or (r.inputs.get("metadata") or {}).get("name") == name]
        if len(found) != 1:
            raise LookupError(f"expected one {type_}{f' named {name}' if name else ''}, found {len(found)}")
        return found[0]

    def by_urn(self, urn: str) -> Registration:
        return next(r for r in self.resources if r.urn == urn)


# --------------------------------------------------------------------------- config


def _as_cli_string(value: Any) -> str:
    """Config values the way the CLI passes them to a program."""
    if isinstance(value, str):
        return value
    return json.dumps(value)


def _yaml_file(path: Path) -> Any:
    """A YAML file's contents, parsed once per version of the file (a test session reads the
    project and stack files for every run), with libyaml when PyYAML has it."""
    stat = path.stat()
    return copy.deepcopy(_parsed_yaml(path, stat.st_mtime_ns, stat.st_size))


@functools.lru_cache(maxsize=None)
def _parsed_yaml(path: Path, mtime_ns: int, size: int) -> Any:
    return yaml.load(path.read_text(), Loader=getattr(yaml, "CSafeLoader", yaml.SafeLoader))


def project_name() -> str:
    return _yaml_file(PROJECT_FILE)["name"]


def project_config() -> dict[str, str]:
    """What `Pulumi.yaml` contributes: provider values, and defaults of project keys."""
    project = _yaml_file(PROJECT_FILE)
    name = project["name"]
    merged: dict[str, str] = {}
    for key, decl in (project.get("config") or {}).items():
        if ":" in key:  # another namespace: a value, plain or as {value: ...}
            value = decl.get("value") if isinstance(decl, dict) else decl
        else:  # a project key: its declared default, if any
            key = f"{name}:{key}"
            value = decl.get("default") if isinstance(decl, dict) else decl
        if value is not None:
            merged[key] = _as_cli_string(value)
    return merged


class SavedFileError(pulumi.RunError):
    """A stack file, or a saved description the offline render reads, that it cannot use: one line."""


def stack_config(stack: str, path: Optional[Path] = None) -> dict[str, str]:
    """`Pulumi.<stack>.yaml` (or `path`) over `Pulumi.yaml`, as the CLI merges them."""
    path = path or ROOT / f"Pulumi.{stack}.yaml"
    if not path.exists():
        raise FileNotFoundError(f"no stack file {path.name}")
    name = project_name()
    merged = project_config()
    try:
        document = _yaml_file(path) or {}
    except yaml.YAMLError as error:
        mark = getattr(error, "problem_mark", None)
        where = f" at line {mark.line + 1}, column {mark.column + 1}" if mark else ""
        raise SavedFileError(f"{path.name}: not valid YAML{where}: {getattr(error, 'problem', None) or error}") from None
    config = document.get("config") if isinstance(document, dict) else None
    if not isinstance(document, dict) or not isinstance(config or {}, dict):
        raise SavedFileError(f"{path.name}: expected a mapping with a `config:` mapping of keys to values (Pulumi's stack file format)")
    for key, value in (config or {}).items():
        full = key if ":" in key else f"{name}:{key}"
        merged[full] = _as_cli_string(value)
    return merged


def saved_cluster(config: Mapping[str, str]) -> Optional[dict[str, Any]]:
    """The existing cluster as `aks-gpu:preflight.clusterFile` saved it (`az aks show
    --output json`), for the offline render to answer getManagedCluster with, if the stack
    names one. A file that is not such a description is one line."""
    try:
        preflight = json.loads(config.get(f"{project_name()}:preflight", "{}"))
        existing = json.loads(config.get(f"{project_name()}:existingCluster", "{}"))
    except json.JSONDecodeError:
        return None  # the program's own config check says what is wrong
    name = preflight.get("clusterFile") if isinstance(preflight, dict) else None
    if not name:
        return None
    from components.azure import saved_files

    key, path = f"{project_name()}:preflight.clusterFile", ROOT / name
    holds = "the JSON object `az aks show --resource-group <group> --name <cluster> --output json` prints"
    from components.azure import cluster_facts

    described = saved_files.read_json(key, path, holds)
    problem = cluster_facts.description_problem(described)
    if problem:
        raise saved_files.refused(key, path, f"{problem}; expected {holds}")
    if isinstance(existing, dict) and existing.get("name") not in (None, described["name"]):
        raise saved_files.refused(key, path, f"it describes cluster {described['name']!r}, but {project_name()}:existingCluster.name is {existing['name']!r}")
    return described


def stacks() -> list[str]:
    """The stacks this repository defines (one `Pulumi.<stack>.yaml` each)."""
    return sorted(p.name[len("Pulumi.") : -len(".yaml")] for p in ROOT.glob("Pulumi.*.yaml"))


# --------------------------------------------------------------------------- mocks


def _fake_kubeconfig(cluster: str, exec_format: bool = False) -> str:
    """A user kubeconfig shaped like AKS's: a token for a local-accounts cluster, or the
    kubelogin exec plugin in device-code mode that an Entra ID cluster returns."""
    if exec_format:
        user = (
            "    exec:\n      apiVersion: client.authentication.k8s.io/v1beta1\n      command: kubelogin\n"
            "      args: [get-token, --environment, AzurePublicCloud, --server-id, "
            f"{AKS_ENTRA_SERVER_ID}, --client-id, 80faf920-1908-4b52-b5ef-a8e7bedfc67a, "
            f"--tenant-id, {MOCK_CLIENT['tenantId']}, --login, devicecode]\n"
        )
    else:
        user = f"    token: {MOCK_USER_TOKEN}\n"
    return (
        "apiVersion: v1\nkind: Config\n"
        f"clusters:\n- name: {cluster}\n  cluster:\n    server: https://{cluster}.hcp.mock.azmk8s.io:443\n"
        f"contexts:\n- name: {cluster}\n  context:\n    cluster: {cluster}\n    user: clusterUser_{cluster}\n"
        f"current-context: {cluster}\n"
        f"users:\n- name: clusterUser_{cluster}\n  user:\n{user}"
    )


def existing_cluster(name: str = "team-aks", resource_group: str = "team-rg", location: str = "westeurope", **changes: Any) -> dict[str, Any]:
    """What getManagedCluster answers for a healthy existing cluster, in azure-native's
    spelling: running, Succeeded, Azure CNI Overlay with Cilium, local accounts, a System pool
    of three nodes and no VNet of its own. `changes` replace top-level members
    (`provisioningState="Updating"`, `agentPoolProfiles=[...]`). What the offline render
    assumes of a cluster it cannot read (ASSUMED says so)."""
    cluster = {
        "id": f"/subscriptions/{MOCK_CLIENT['subscriptionId']}/resourceGroups/{resource_group}"
        f"/providers/Microsoft.ContainerService/managedClusters/{name}",
        "name": name,
        "location": location,
        "resourceUID": "0123456789abcdef01234567",
        "provisioningState": "Succeeded",
        "powerState": {"code": "Running"},
        "kubernetesVersion": "1.34",
        "currentKubernetesVersion": "1.34.2",
        "nodeResourceGroup": f"MC_{resource_group}_{name}_{location}",
        "enableRBAC": True,
        "networkProfile": {"networkPlugin": "azure", "networkPluginMode": "overlay", "networkDataplane": "cilium", "networkPolicy": "cilium"},
        "agentPoolProfiles": [
            {"name": "system", "mode": "System", "vmSize": "Standard_D4s_v5", "count": 3, "maxPods": 250, "osType": "Linux"},
        ],
    }
    cluster.update(changes)
    return cluster


class EngineInvokeError(grpc.RpcError):
    """A provider's failed invoke, as the engine hands it to the SDK: a gRPC error whose
    details say "invocation of <token> returned an error: <the provider's error>" (pulumi/pulumi
    pkg/resource/deploy/source_eval.go, ResourceMonitor.Invoke). The SDK raises it from the
    invoke as an Exception (runtime/invoke.py `do_invoke`, settings.py
    `grpc_error_to_exception`), which the program can catch; any other exception out of a
    mock would escape as an unhandled RPC error instead, which no real run shows."""

    def __init__(self, token: str, error: str) -> None:
        super().__init__(error)
        self._details = f"invocation of {token} returned an error: {error}"

    def code(self) -> grpc.StatusCode:
        return grpc.StatusCode.UNKNOWN

    def details(self) -> str:
        return self._details


# What the offline render says when it answers for a cluster it has no description of.
ASSUMED = (
    "offline: cluster {group}/{name} was not read; assumed: in {location}, Succeeded and running, Kubernetes 1.34.2, "
    "Azure CNI Overlay with Cilium, no VNet of its own, local accounts, a System pool of 3 x Standard_D4s_v5 "
    "(set aks-gpu:preflight.clusterFile to a saved `az aks show --output json` to render your cluster)"
)


def read_note(group: str, described: Mapping[str, Any], source: str) -> str:
    """What the offline render says of a cluster it answers for from a saved description."""
    from components.azure import cluster_facts, pool_network

    found = cluster_facts.parse(described, group, source=source)
    own_vnet = any(p.vnet_subnet_id for p in found.pools)
    network = f"{pool_network.model(found)}{' in its own virtual network' if own_vnet else ''}"
    return f"offline: cluster {group}/{found.name} read from {source}: {cluster_facts.summary(found, network)}"


class AzureMocks(pulumi_mocks.Mocks):
    """Echoes inputs back as state, with the computed names azure-native would return.

    `feature_state` is what Azure answers for a subscription feature registration
    (`az feature show`): "Registered" unless a test says otherwise. `cluster` is what
    getManagedCluster answers for an existing cluster (`existing_cluster()`), if any.
    """

    def __init__(
        self, feature_state: str = "Registered", cluster: Optional[Mapping[str, Any]] = None, location: Optional[str] = None
    ) -> None:
        self.feature_state = feature_state
        #: The one cluster that exists; None: any cluster asked for exists, as ASSUMED.
        self.cluster = dict(cluster) if cluster is not None else None
        #: Where an assumed cluster is (None: in the stack's azure-native:location).
        self.location = location
        self.calls: list[str] = []
        #: What the answers assumed (the offline render prints it).
        self.notes: list[str] = []
        #: The existing clusters getManagedCluster answered for.
        self.read: set[str] = set()
        #: The stack's preflight.clusterFile, when `cluster` is what it saved.
        self.cluster_file: Optional[str] = None

    def offline(self, config: Mapping[str, str]) -> None:
        """What the stack's config tells the offline render: the cluster a stack saved
        (preflight.clusterFile), and the region to assume a cluster in."""
        if self.cluster is None:
            self.cluster = saved_cluster(config)
            if self.cluster is not None:
                self.cluster_file = json.loads(config.get(f"{project_name()}:preflight", "{}"))["clusterFile"]
        self.location = self.location or config.get("azure-native:location") or "eastus"

    def described(self, group: str, name: str) -> Optional[dict[str, Any]]:
        """The cluster getManagedCluster finds under these names, if any."""
        if self.cluster is not None:
            if name != self.cluster["name"]:
                return None
            if self.cluster_file is not None:
                self._note(read_note(group, self.cluster, self.cluster_file))
            return dict(self.cluster)
        self._note(ASSUMED.format(group=group, name=name, location=self.location))
        return existing_cluster(name, group, self.location)

    def _note(self, note: str) -> None:
        if note not in self.notes:
            self.notes.append(note)

    def new_resource(self, args: pulumi_mocks.MockResourceArgs) -> tuple[Optional[str], dict]:
        state = dict(args.inputs)
        # What AKS computes for a cluster it creates, known once it exists (so not in a
        # preview): its node resource group, by AKS's default name (azure-aks-docs faq.md).
        if args.typ == "azure-native:containerservice:ManagedCluster" and not settings.is_dry_run():
            group, name, where = state.get("resourceGroupName"), state.get("resourceName"), state.get("location")
            state.setdefault("nodeResourceGroup", f"MC_{group}_{name}_{where}")
        # azure-native exposes the ARM name as the `name` output.
        for name_input in ("resourceName", "resourceGroupName", "agentPoolName"):
            if args.typ.startswith("azure-native:") and name_input in state:
                state["name"] = state[name_input]
                break
        return f"{args.name}-id", state

    def call(self, args: pulumi_mocks.MockCallArgs) -> dict:
        self.calls.append(args.token)
        if args.token == FEATURE_REGISTRATION_TOKEN:
            # ARM answers 200 with a state for any feature, registered or not (azure-native #1722).
            return {"name": args.args["featureName"], "properties": {"state": self.feature_state}}
        if args.token == MANAGED_CLUSTER_TOKEN:
            found = self.described(args.args["resourceGroupName"], args.args["resourceName"])
            if found is None:  # azure-native's error quotes ARM's (ResourceNotFound, 404)
                raise EngineInvokeError(args.token, f"ResourceNotFound: The Resource 'Microsoft.ContainerService/managedClusters/{args.args['resourceName']}' was not found")
            self.read.add(args.args["resourceName"])
            return found
        if args.token == USER_CREDENTIALS_TOKEN:
            # "exec" takes effect only for an Entra ID cluster (the az CLI's --format help): an
            # existing cluster's as described, one this stack creates as the program asks.
            name = args.args["resourceName"]
            entra = name not in self.read or bool((self.cluster or {}).get("aadProfile"))
            exec_format = args.args.get("format") == "exec" and entra
            kubeconfig = _fake_kubeconfig(args.args["resourceName"], exec_format=exec_format)
            return {"kubeconfigs": [{"name": "clusterUser", "value": base64.b64encode(kubeconfig.encode()).decode()}]}
        if args.token == CLIENT_CONFIG_TOKEN:
            return dict(MOCK_CLIENT)
        raise NotImplementedError(f"no mock for invoke {args.token}")


def _unwrap(value: Any) -> Any:
    """Turns the RPC layer's secret wrappers into `Secret` markers, recursively."""
    if isinstance(value, dict):
        if value.get(rpc._special_sig_key) == rpc._special_secret_sig:
            return Secret(_unwrap(value["value"]))
        return {k: _unwrap(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_unwrap(v) for v in value]
    # Protobuf carries every number as a double; counts read better as integers.
    if isinstance(value, float) and value.is_integer():
        return int(value)
    return value


#: The event loops the runs made, on this thread and on the SDK's workers (close_event_loops).
WORKER_LOOPS: "weakref.WeakSet[asyncio.AbstractEventLoop]" = weakref.WeakSet()


def close_event_loops() -> None:
    """Closes the event loops the runs made. Left open, one is collected at the interpreter's
    exit, sometimes after its self-pipe socket, and prints "Exception ignored in
    BaseEventLoop.__del__ ... Invalid file descriptor: -1" (asyncio selector_events.py
    `_close_self_pipe`). For a process's end: later runs in it would find a closed loop."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)  # no running loop: 3.10-3.11 warn
        WORKER_LOOPS.add(asyncio.get_event_loop())  # pulumi/runtime/sync_await.py's, on this thread
    for loop in list(WORKER_LOOPS):
        if not loop.is_closed() and not loop.is_running():
            loop.close()


class RecordingMonitor(pulumi_mocks.MockMonitor):
    """The stock mock monitor, plus a record of each registration request."""

    def __init__(self, mocks: pulumi_mocks.Mocks) -> None:
        super().__init__(mocks)
        self.registrations: list[Registration] = []

    def RegisterResource(self, request):  # noqa: N802 (gRPC method name)
        response = super().RegisterResource(request)
        # The SDK's monitor runs on the SDK's worker threads and gives each an event loop of
        # its own (mocks.py RegisterResource: `_ensure_event_loop()`), which nothing closes.
        # (The stack's own registration returns before it makes one.)
        if request.type != "pulumi:pulumi:Stack":
            WORKER_LOOPS.add(asyncio.get_event_loop())
        if request.type != "pulumi:pulumi:Stack":
            timeouts = request.customTimeouts
            self.registrations.append(
                Registration(
                    urn=response.urn,
                    type=request.type,
                    name=request.name,
                    custom=request.custom,
                    parent=request.parent,
                    # A provider reference is "<urn>::<id>"; URNs contain "::" too.
                    provider=request.provider.rsplit("::", 1)[0] if request.provider else "",
                    dependencies=list(request.dependencies),
                    inputs=_unwrap(rpc.deserialize_properties(request.object)),
                    wire=request.object,
                    options={
                        "protect": bool(request.protect),
                        "customTimeouts": {
                            k: getattr(timeouts, k) for k in ("create", "update", "delete") if getattr(timeouts, k)
                        },
                        "ignoreChanges": list(request.ignoreChanges),
                        "retainOnDelete": bool(request.retainOnDelete),
                        "deleteBeforeReplace": bool(request.deleteBeforeReplace),
                        "replaceOnChanges": list(request.replaceOnChanges),
                        **({"aliases": aliases} if (aliases := alias_urns(request)) else {}),
                    },
                )
            )
        return response


def alias_urns(request: Any) -> list[str]:
    """The URNs a registration's aliases stand for, resolved as the engine resolves them
    (pulumi/pulumi step_generator.go collapseAliasToUrn, deployment.go generateURN): a blank
    name or type is the resource's own; a parent contributes its whole qualified type, the
    root Stack's excepted. (The stock mock monitor builds child URNs from the parent's last
    type alone, which agrees for children of top-level components, as every one here is.)
    Only the program's own: the type aliases every azure-native resource carries for its
    older API versions (a spec with a type and nothing else) are left out."""
    urns = []
    for alias in request.aliases:
        if alias.WhichOneof("alias") == "urn":
            urns.append(alias.urn)
            continue
        spec = alias.spec
        if not spec.name:
            continue
        project, stack = spec.project or pulumi.get_project(), spec.stack or pulumi.get_stack()
        parent = spec.parentUrn if spec.WhichOneof("parent") == "parentUrn" else request.parent
        prefix = ""
        if parent and not spec.noParent:
            parent_type = parent.split("::")[2].removeprefix("pulumi:pulumi:Stack$").removeprefix("pulumi:pulumi:Stack")
            prefix = f"{parent_type}$" if parent_type else ""
        urns.append(f"urn:pulumi:{stack}::{project}::{prefix}{spec.type or request.type}::{spec.name or request.name}")
    return urns


class _WarningCollector(logging.Handler):
    """The program's warnings, and its info lines (what `pulumi preview` prints as `info:`)."""

    def __init__(self) -> None:
        super().__init__(level=logging.INFO)
        self.messages: list[str] = []
        self.infos: list[str] = []

    def emit(self, record: logging.LogRecord) -> None:
        if record.levelno == logging.WARNING:
            self.messages.append(record.getMessage())
        elif record.levelno == logging.INFO:
            self.infos.append(record.getMessage())


# --------------------------------------------------------------------------- run


@contextlib.contextmanager
def _program_on_path() -> Iterator[None]:
    sys.path.insert(0, str(ROOT))
    try:
        yield
    finally:
        sys.path.remove(str(ROOT))


def run_program(
    stack: str = "dev",
    config: Optional[Mapping[str, str]] = None,
    overrides: Optional[Mapping[str, Any]] = None,
    monitor: Optional[RecordingMonitor] = None,
    preview: bool = False,
    stack_file: Optional[Path] = None,
) -> ProgramRun:
    """Runs `__main__.py` for `stack` under mocks and returns what it declared.

    `preview` chooses the run: True is `pulumi preview` (`pulumi.runtime.is_dry_run()`),
    False the update step of `pulumi up`.

    `config` replaces the stack's merged config entirely; `overrides` are applied on top
    (keys without a namespace belong to the project; values are given as in YAML; None
    removes the key).
    Errors the program raises (a `ConfigError`, say) propagate unchanged; pass your own
    `monitor` to see what was registered before one.
    """
    project = project_name()
    merged = dict(config) if config is not None else stack_config(stack, stack_file)
    for key, value in (overrides or {}).items():
        full = key if ":" in key else f"{project}:{key}"
        if value is None:  # not set
            merged.pop(full, None)
        else:
            merged[full] = _as_cli_string(value)

    def program() -> None:
        with _program_on_path():
            runpy.run_path(str(ROOT / "__main__.py"), run_name="__main__")

    monitor = monitor or RecordingMonitor(AzureMocks())
    if isinstance(monitor.mocks, AzureMocks):
        monitor.mocks.offline(merged)
    return run_under_mocks(program, stack=stack, config=merged, monitor=monitor, preview=preview)


def run_under_mocks(
    body: Callable[[], Any],
    stack: str = "test",
    config: Optional[Mapping[str, str]] = None,
    monitor: Optional[RecordingMonitor] = None,
    preview: bool = False,
) -> ProgramRun:
    """Runs `body` (a program, or a test that builds one component) under mocks."""
    project = project_name()
    monitor = monitor or RecordingMonitor(AzureMocks())
    collector = _WarningCollector()
    logger = logging.getLogger(f"aks-gpu.mock.{stack}")
    logger.propagate = False
    logger.handlers = [collector]
    logger.setLevel(logging.INFO)  # the SDK logs each registration at debug: records nobody reads

    settings.ROOT.set(None)  # a fresh root stack for each run in one process
    pulumi_mocks.set_mocks(monitor.mocks, project=project, stack=stack, preview=preview, logger=logger, monitor=monitor)
    pulumi.runtime.set_all_config(dict(config or {}))

    with _program_on_path():
        body()
        _sync_await(wait_for_rpcs())
        outputs = _sync_await(_resolve_outputs(settings.get_root_resource().outputs))  # type: ignore[union-attr]

    return ProgramRun(
        project=project,
        stack=stack,
        preview=preview,
        config=dict(config or {}),
        resources=list(monitor.registrations),
        outputs=outputs,
        warnings=list(collector.messages),
        infos=list(collector.infos),
        notes=list(getattr(monitor.mocks, "notes", [])),
    )


async def _resolve_outputs(exports: Mapping[str, Any]) -> dict[str, StackOutput]:
    resolved: dict[str, StackOutput] = {}
    for name, value in exports.items():
        out = pulumi.Output.from_input(value)
        resolved[name] = StackOutput(value=await out.future(), secret=await out.is_secret())
    await asyncio.sleep(0)
    return resolved
