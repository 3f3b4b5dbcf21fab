"""What every component of the package does with its inputs, one way for all (docs/design/package.md,
docs/design/package-parts.md): the inputs refused where one is an Output, turned into the stack
file's settings (its `aks-gpu:` keys under the same names, `location`, a cluster's resource ID as
existingCluster and its subscription), parsed by the program's own parser (components/stack.py),
planned for the component's parts before it registers itself, what the plan said reported on it,
declared by the program's own code (declare.py), and its outputs set as its attributes.

A component class stays the analyser's: its `__init__` takes `args` annotated with its Args, its
class annotations are its outputs (pulumi 3.272.0 provider/experimental/analyzer.py
`analyze_component`, which walks the class's MRO less ComponentResource), so nothing here is a
class annotation of a base class: `build` is a function each constructor calls.
"""

import os
import re
from collections.abc import Mapping
from typing import Any

import pulumi

from components import stack as config
from components.cluster.cluster_id import cluster_settings
from components.config.cli_values import as_cli_string
from components.config.messages import fail, snake
from components.environment.declare import declare, report
from components.environment.dynamic_host import refusal
from components.environment.kinds import CLUSTER_ID, POOL_NAMES, Kind
from components.environment.sign_in import BOTH, KUBECONFIG, consumers_provider
from components.errors import ConfigError, PreflightError
from components.live_reader import LiveReader
from components.ownership.stack_state import Declarer
from components.plan import IN_KUBERNETES, Mode, Said, build_plan, signed_in
from components.seam.reader import AzureReader

# The stack file's keys that are not `aks-gpu:`'s, under the input's name.
OTHER_KEYS = {"location": config.LOCATION_KEY}
# The key a refusal names first: `aks-gpu:` then a key and its path (gpuPools.t4.vmSize, access.adminGroupObjectIds[0]).
NAMED_KEY = re.compile(rf"(?:{re.escape(config.NAMESPACE)}:|{re.escape(config.LOCATION_KEY)}\b)([A-Za-z0-9_.\[\]-]*)")


class InputRefused(ConfigError):
    """A bad input: the input it names (gpuPool.vmSize), and the program's line (`reason`)."""

    def __init__(self, component: str, name: str, input_name: str, reason: str) -> None:
        super().__init__(f"{component} {name}: input {input_name}: {reason}")
        self.input, self.reason = input_name, str(ConfigError(reason))


def build(
    resource: pulumi.ComponentResource,
    kind: Kind,
    name: str,
    args: Mapping[str, Any],
    opts: pulumi.ResourceOptions | None,
    reader: AzureReader | None,
) -> None:
    """Constructs `resource`, a component of `kind`: parsed, planned, registered, declared, with
    its outputs. `reader`: how Azure and the cluster are read; unset, live, with the deployer's credentials."""
    settings_given, (provider, kubeconfig) = signing_in(kind, name, args, opts)
    cfg = parsed(kind, name, settings_given)  # a bad input stops before anything is registered, this component too
    said = Said()
    # Planned before the component registers itself: where preflight or the cost limit stops a
    # deployment, nothing is registered, as in the program ("nothing was created").
    try:
        mode = Mode.of(pulumi.runtime.is_dry_run())
        project, stack = pulumi.get_project(), pulumi.get_stack()
        # The stack's state holds its children one parent down, and what it adopted in its own outputs.
        by = Declarer(kind.type, name)
        # No dynamic resource: Pulumi would run its provider in the consumer's Python (dynamic_host.py).
        plan = build_plan(
            cfg,
            reader or LiveReader(),
            mode,
            project=project,
            stack=stack,
            environ=os.environ,
            said=said,
            by=by,
            dynamic_resources=False,
            parts=kind.parts,
        )
        if refused := refusal(plan):  # what has no other path: an AKS-managed pool, the deployer's grant's wait
            raise InputRefused(kind.name, name, refused.input, refused.reason)
    except BaseException as error:
        report(said)  # what was said before the stop is said too, as the program says it
        # A setting the plan refuses by its key (a budget no pool carries, a pool the cluster lacks) names its input.
        named = named_input(kind, str(error)) if refuses_a_key(error) else None
        if named is not None:
            raise InputRefused(kind.name, name, named, str(error)) from None
        raise
    pulumi.ComponentResource.__init__(resource, kind.type, name, None, opts)
    report(said, resource)
    if unused := unused_provider(kind, name, opts):
        pulumi.log.warn(unused, resource)
    names = output_names(type(resource))
    declared = declare(signed_in(plan, provider, kubeconfig), parent=resource)
    outputs = {key: value for key, value in declared.items() if snake(key) in names}
    for key, value in outputs.items():
        setattr(resource, snake(key), value)
    resource.register_outputs(outputs)


def signing_in(
    kind: Kind, name: str, args: Mapping[str, Any], opts: pulumi.ResourceOptions | None
) -> tuple[dict[str, Any], tuple[pulumi.ProviderResource | None, Any]]:
    """The inputs less `kubeconfig`, and how the Kubernetes objects sign in where the component
    takes a consumer's way (Kind.signs_in): its provider, or its kubeconfig (an Input: it decides
    nothing, so an Output is fine); both given is refused naming kubeconfig."""
    given = dict(args)
    if not kind.signs_in:
        return given, (None, None)
    kubeconfig, provider = given.pop(KUBECONFIG, None), consumers_provider(opts)
    if provider is not None and kubeconfig is not None:
        raise InputRefused(kind.name, name, KUBECONFIG, BOTH)
    return given, (provider, kubeconfig)


def unused_provider(kind: Kind, name: str, opts: pulumi.ResourceOptions | None) -> str | None:
    """Where a component that declares Kubernetes objects signs them in its own way (the cluster's
    credential), a consumer's Kubernetes provider is said not to be used, never dropped without a word."""
    if kind.signs_in or not kind.parts & IN_KUBERNETES or consumers_provider(opts) is None:
        return None
    return (
        f"{kind.name} {name}: the Kubernetes provider passed in the `providers` resource option is not used: its Kubernetes "
        "objects sign in with the cluster's user kubeconfig, which Azure answers the deployer (GpuStack and GpuProof take one)"
    )


def refuses_a_key(error: BaseException) -> bool:
    """A setting's own refusal (`aks-gpu:<key>...: why`), not a check's report of several."""
    return isinstance(error, (ConfigError, PreflightError)) and str(error).startswith(f"{config.NAMESPACE}:")


def output_names(component: type) -> set[str]:
    """The outputs a component class declares: its annotations, as the analyser reads them."""
    names: set[str] = set()
    for cls in component.__mro__:
        if cls not in (object, pulumi.Resource, pulumi.ComponentResource):
            names.update(k for k in getattr(cls, "__annotations__", {}) if not k.startswith("_"))
    return names


def parsed(kind: Kind, name: str, args: Mapping[str, Any]) -> config.StackConfig:
    """The inputs through the program's own parser; a refusal names the input first."""
    for key, value in args.items():
        if holds_output(value):
            raise InputRefused(
                kind.name,
                name,
                key,
                f"{key} is an output (known only once another resource exists, or a secret): each input decides what is declared, before anything is, so it takes a plain value",
            )
    try:
        return config.parse(flat_config(settings(kind, name, args)), pulumi.get_project(), pulumi.get_stack())
    except InputRefused:
        raise
    except ConfigError as error:
        named = named_input(kind, str(error))
        raise (InputRefused(kind.name, name, named, str(error)) if named else ConfigError(f"{kind.name} {name}: {error}")) from None


def settings(kind: Kind, name: str, args: Mapping[str, Any]) -> dict[str, Any]:
    """The inputs as a stack file's settings, by their full keys (`aks-gpu:gpuPool`), with what the
    component fixes; an input the component does not take is refused naming it (the SDK drops one
    from a typed SDK; a Python caller may pass any)."""
    found = {f"{config.NAMESPACE}:{key}": value for key, value in kind.fixed.items()}
    for key, value in args.items():
        if value is None:
            continue
        if key == CLUSTER_ID and CLUSTER_ID in kind.own:
            try:
                existing, subscription = cluster_settings(key, value)
            except ConfigError as error:
                raise InputRefused(kind.name, name, key, str(error)) from None
            found[f"{config.NAMESPACE}:existingCluster"], found[config.SUBSCRIPTION_KEY] = existing, subscription
        elif key == POOL_NAMES and POOL_NAMES in kind.own:
            found[f"{config.NAMESPACE}:gpuPools"] = used_pools(kind, name, value)
        elif kind.keys is None or key in kind.keys:
            found[OTHER_KEYS.get(key, f"{config.NAMESPACE}:{key}")] = value
        else:
            allowed = ", ".join([*kind.own, *kind.keys])
            raise InputRefused(kind.name, name, key, f"{key} is not an input of {kind.name}; its inputs: {allowed}")
    return found


def holds_output(value: Any) -> bool:
    """Whether an input is, or holds, an Output: the engine hands one where a consumer passed an
    input with dependencies or a secret (pulumi 3.272.0 provider/server.py `_select_value`)."""
    if isinstance(value, pulumi.Output):
        return True
    if isinstance(value, Mapping):
        return any(holds_output(v) for v in value.values())
    return isinstance(value, list) and any(holds_output(v) for v in value)


def flat_config(found: Mapping[str, Any]) -> dict[str, str]:
    """The settings as the Pulumi CLI hands a program its stack's config (components/config/cli_values.py):
    a whole number the engine sent as a double (every number over Construct) is written whole, as Go
    writes float64 2 as `2`."""
    return {key: as_cli_string(value) for key, value in found.items()}


def named_input(kind: Kind, message: str) -> str | None:
    """The input a refusal names first (`aks-gpu:gpuPool.vmSize` is gpuPool.vmSize), if the
    component has it: a key its own input stands for is that input (existingCluster is clusterId)."""
    found = NAMED_KEY.search(message)
    if found is None:
        return None
    key = "location" if found.group(0).startswith(config.LOCATION_KEY) else found.group(1)
    top = re.split(r"[.\[]", key, maxsplit=1)[0]
    if top in kind.stands_for:
        return kind.stands_for[top]
    return key if kind.keys is None or top in kind.keys else None


def used_pools(kind: Kind, name: str, value: Any) -> dict[str, dict[str, str]]:
    """The cluster's own pools, by name, as a stack file's gpuPools entries used as they are; each
    name's rule is the stack file's (a refusal of `gpuPools.<name>` names this input)."""
    if not isinstance(value, list) or not value or not all(isinstance(n, str) for n in value):
        raise InputRefused(kind.name, name, POOL_NAMES, str(fail(POOL_NAMES, value, "expected a list of 1 or more AKS pool names")))
    if len(set(value)) < len(value):
        twice = next(n for n in value if value.count(n) > 1)
        raise InputRefused(kind.name, name, POOL_NAMES, str(fail(POOL_NAMES, value, f"{twice!r} is listed twice; list each pool once")))
    return {pool: {"existing": "use"} for pool in value}
