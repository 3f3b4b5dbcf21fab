"""The package's GpuEnvironment: the whole environment as one component, from a stack file's
settings given as inputs (args.py), through the program's own parser, plan and declaring code.

Pulumi's component host (package/__main__.py) builds the schema from this class: its inputs are
GpuEnvironmentArgs' fields, its outputs the annotations below, each described by the string
after it (pulumi 3.272.0 provider/experimental/analyzer.py). No annotation here may be a string:
the analyser reads them unevaluated (no `from __future__ import annotations`).
"""

import json
import os
import re
from collections.abc import Mapping
from typing import Any

import pulumi

from components import stack as config
from components.config.messages import snake
from components.config.values import whole_numbers
from components.environment.args import GpuEnvironmentArgs
from components.environment.declare import declare, report
from components.environment.dynamic_host import refusal
from components.environment.package import NAME
from components.errors import ConfigError
from components.live_reader import LiveReader
from components.ownership.stack_state import Declarer
from components.plan import Mode, Said, build_plan
from components.seam.reader import AzureReader

# The type token the host gives it (`<package>:index:<class>`, schema.py generate_schema).
TYPE = f"{NAME}:index:GpuEnvironment"
# The stack file's keys that are not `aks-gpu:`'s, under the input's name.
OTHER_KEYS = {"location": config.LOCATION_KEY}
# The key a refusal names first: `aks-gpu:` then a key and its path (gpuPools.t4.vmSize, access.adminGroupObjectIds[0]).
NAMED_KEY = re.compile(rf"(?:{re.escape(config.NAMESPACE)}:|{re.escape(config.LOCATION_KEY)}\b)([A-Za-z0-9_.\[\]-]*)")


class InputRefused(ConfigError):
    """A bad input: the input it names (gpuPool.vmSize), and the program's line (`reason`)."""

    def __init__(self, name: str, input_name: str, reason: str) -> None:
        super().__init__(f"GpuEnvironment {name}: input {input_name}: {reason}")
        self.input, self.reason = input_name, str(ConfigError(reason))


class GpuEnvironment(pulumi.ComponentResource):
    # One line: the analyser takes __doc__ as it is, indentation and all (analyze_component), for every SDK's docs.
    """GPU-ready AKS, as the aks-gpu program declares it: a cluster (created, or an existing one named by existingCluster), its GPU pools, the GPU stack (the NVIDIA device plugin or NVIDIA's GPU Operator) with GPU metrics, and one MNIST training Job per pool that `pulumi up` waits for until it completes or fails. Its inputs are the stack file's `aks-gpu:` settings under the same names; preflight and the cost limit run while it is constructed, with the deployer's Azure credentials. What Pulumi would run in your program's own Python, where its code is not installed, it leaves out: the proof's watch (a Job whose pod cannot start fails only at its deadline, and no servedBy or result command is set: one info line says so), and it refuses management aks-managed and, with Entra ID, a deployerType other than none."""

    resource_group_name: pulumi.Output[str]
    """The resource group of the cluster (created, or the existing cluster's)."""
    cluster_name: pulumi.Output[str]
    """The AKS cluster's name."""
    gpu_pools: pulumi.Output[dict[str, Any]]
    """Each GPU pool by name: its VM size, generation, GPUs per node, who manages its GPU stack, the command that lists its nodes, and its proof Job."""
    gpu_groups: pulumi.Output[dict[str, Any]] | None
    """Each capacity group (gpuGroups) by name: its pools, first choice first, and its one proof Job; unset without capacity groups."""
    estimated_cost: pulumi.Output[dict[str, Any]] | None
    """What the environment costs per hour at its pools' largest sizes, as estimated before anything was created; unset when not estimated."""
    gpu_metrics: pulumi.Output[str]
    """Where the GPU metrics are: the DCGM exporter's URL inside the cluster, or what serves them."""
    device_plugin_namespace: pulumi.Output[str] | None
    """The NVIDIA device plugin's namespace; unset where nothing installs it."""
    adopted: pulumi.Output[dict[str, Any]] | None
    """What the environment adopted from the cluster's owner; unset when nothing was adopted."""
    kubeconfig: pulumi.Output[str]
    """The cluster's kubeconfig (a secret)."""
    get_credentials_command: pulumi.Output[str]
    """The `az aks get-credentials` command for the cluster."""
    mnist_job_name: pulumi.Output[str] | None
    """The proof Job's name (gpuPool's one pool only)."""
    mnist_job_namespace: pulumi.Output[str] | None
    """The proof Job's namespace (gpuPool's one pool only)."""
    job_logs_command: pulumi.Output[str] | None
    """The command that prints the proof Job's log (gpuPool's one pool only)."""
    job_result_command: pulumi.Output[str] | None
    """The command that prints the last proof's line, kept by its watch (gpuPool's one pool only); unset here, where the proof has no watch."""
    mnist_job_urn: pulumi.Output[str] | None
    """The proof Job's URN (gpuPool's one pool only)."""

    def __init__(
        self, name: str, args: GpuEnvironmentArgs, opts: pulumi.ResourceOptions | None = None, *, reader: AzureReader | None = None
    ) -> None:
        """`reader`: how Azure and the cluster are read; unset, live, with the deployer's credentials
        (a test hands its own, as the program's tests do)."""
        cfg = parsed(name, args)  # a bad input stops before anything is registered, this component too
        said = Said()
        # Planned before the component registers itself: where preflight or the cost limit stops a
        # deployment, nothing is registered, as in the program ("nothing was created").
        try:
            mode = Mode.of(pulumi.runtime.is_dry_run())
            project, stack = pulumi.get_project(), pulumi.get_stack()
            # The stack's state holds its children one parent down, and what it adopted in its own outputs.
            by = Declarer(TYPE, name)
            # No dynamic resource: Pulumi would run its provider in the consumer's Python (dynamic_host.py).
            reading = reader or LiveReader()
            plan = build_plan(
                cfg, reading, mode, project=project, stack=stack, environ=os.environ, said=said, by=by, dynamic_resources=False
            )
            if refused := refusal(plan):  # what has no other path: an AKS-managed pool, the deployer's grant's wait
                raise InputRefused(name, refused.input, refused.reason)
        except BaseException:
            report(said)  # what was said before the stop is said too, as the program says it
            raise
        super().__init__(TYPE, name, None, opts)
        report(said, self)
        outputs = declare(plan, parent=self)
        for key, value in outputs.items():
            setattr(self, snake(key), value)
        self.register_outputs(outputs)


def parsed(name: str, args: Mapping[str, Any]) -> config.StackConfig:
    """The inputs through the program's own parser; a refusal names the input first."""
    for key, value in args.items():
        if holds_output(value):
            raise InputRefused(
                name,
                key,
                f"{key} is an output (known only once another resource exists, or a secret): each input decides what is declared, before anything is, so it takes a plain value",
            )
    try:
        return config.parse(flat_config(args), pulumi.get_project(), pulumi.get_stack())
    except ConfigError as error:
        named = named_input(str(error))
        raise (InputRefused(name, named, str(error)) if named else ConfigError(f"GpuEnvironment {name}: {error}")) from None


def holds_output(value: Any) -> bool:
    """Whether an input is, or holds, an Output: the engine hands one where a consumer passed an
    input with dependencies or a secret (pulumi 3.272.0 provider/server.py `_select_value`)."""
    if isinstance(value, pulumi.Output):
        return True
    if isinstance(value, Mapping):
        return any(holds_output(v) for v in value.values())
    return isinstance(value, list) and any(holds_output(v) for v in value)


def flat_config(args: Mapping[str, Any]) -> dict[str, str]:
    """The inputs as the Pulumi CLI hands a program its stack's config: `namespace:key` -> a
    string as it is, a boolean or number as YAML writes it, an object or a list as JSON."""
    flat = {}
    for key, value in args.items():
        if value is None:
            continue
        full_key = OTHER_KEYS.get(key, f"{config.NAMESPACE}:{key}")
        flat[full_key] = value if isinstance(value, str) else json.dumps(whole_numbers(value))
    return flat


def named_input(message: str) -> str | None:
    """The input a refusal names first (`aks-gpu:gpuPool.vmSize` is gpuPool.vmSize), if any."""
    found = NAMED_KEY.search(message)
    if found is None:
        return None
    return "location" if found.group(0).startswith(config.LOCATION_KEY) else found.group(1)
