"""The package's provider: Pulumi's component provider (the one `component_provider_host` serves),
with a refusal said the way Pulumi says a bad input, not as a Python traceback.

pulumi 3.272.0 provider/experimental/component.py `ComponentProvider.construct` wraps any exception a
component's constructor raises in `ComponentInitError`, and provider/server.py `Construct` answers
that with the message and the constructor's traceback (several lines). An `InputPropertyError` or
`InputPropertiesError` it answers with an INVALID_ARGUMENT status instead, which the engine prints
as the message and, for each property, "property <path> with value '<value>' has a problem:
<reason>" (pulumi/pulumi 1b594989 pkg/resource/deploy/source_eval.go `errorToMessage`).
"""

import sys
from collections.abc import Callable
from typing import Any, cast

from pulumi import ComponentResource, Inputs
from pulumi.errors import InputPropertiesError, InputPropertyError, RunError
from pulumi.provider import main
from pulumi.provider.experimental.component import ComponentProvider
from pulumi.provider.provider import ConstructResult
from pulumi.provider.server import ComponentInitError
from pulumi.resource import ResourceOptions

from components.environment.component import InputRefused
from components.environment.gpu_environment import GpuEnvironment
from components.environment.gpu_pools import GpuPools
from components.environment.gpu_proof import GpuProof
from components.environment.gpu_stack import GpuStack
from components.environment.package import NAME, NAMESPACE, project_version
from components.live_reader import LiveReader
from components.seam.reader import AzureReader

COMPONENTS: list[type[ComponentResource]] = [GpuEnvironment, GpuPools, GpuStack, GpuProof]


class PackageProvider(ComponentProvider):
    """The components, their schema inferred from their Args (analyzer.py); a refusal in one line.

    `reader` makes the reader of Azure and the cluster each Construct's component is handed: a
    LiveReader, with the deployer's credentials, as the CLI serves the package (`serve`); the
    tests' fake Azure where a test serves it (tests/support/package_host.py)."""

    def __init__(
        self,
        components: list[type[ComponentResource]],
        name: str,
        namespace: str,
        version: str,
        reader: Callable[[], AzureReader] = LiveReader,
    ) -> None:
        super().__init__(components, name, namespace, version)
        # The SDK builds a component as `self._components[<class name>](name, args, options)`
        # (pulumi 3.272.0 provider/experimental/component.py ComponentProvider.construct).
        built = {key: reading(component, reader) for key, component in self._components.items()}
        self._components = cast(dict[str, type[ComponentResource]], built)

    def construct(self, name: str, resource_type: str, inputs: Inputs, options: ResourceOptions | None = None) -> ConstructResult:
        try:
            return super().construct(name, resource_type, inputs, options)
        except ComponentInitError as error:
            refusal = error.inner
            if isinstance(refusal, InputRefused):  # the input it names, and the program's line
                raise InputPropertyError(refusal.input, refusal.reason) from None
            if isinstance(refusal, RunError):  # preflight, the cost limit, Azure's answer: the one line
                # errors=[]: with None, server.py's status has no trailing_metadata and aborting fails (AttributeError).
                raise InputPropertiesError(str(refusal), errors=[]) from None
            raise  # anything else is a fault of the code: its traceback helps


def reading(component: Callable[..., ComponentResource], reader: Callable[[], AzureReader]) -> Callable[..., ComponentResource]:
    """`component`'s constructor, each call handed a reader of its own (GpuEnvironment's `reader`)."""

    def build(name: str, args: Any, options: ResourceOptions | None = None) -> ComponentResource:
        return component(name, args, options, reader=reader())

    return build


def serve() -> None:
    """What `component_provider_host` does (host.py: `main(ComponentProvider(...), args)`), with this provider."""
    main(PackageProvider(COMPONENTS, NAME, NAMESPACE, project_version()), sys.argv[1:])
