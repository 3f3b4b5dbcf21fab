"""The path the managed GPU pool's provider is pickled by, in the state of every stack that
deployed one before the provider moved to `components.resources.managed_gpu_pool`.

Pulumi pickles a dynamic provider by reference (module and class name) into each resource's
`__provider` input, and every later refresh, update and destroy unpickles it in the SDK's
provider host by that name (pulumi sdk/python/lib/pulumi/dynamic/__main__.py
`get_provider`). State written before the move names this module, so it must go on naming
the same class, forever: tests/test_managed_pool_provider_host.py runs an old state's pickle through the
host. State written since names the new path, which is pinned the same way.
"""

from components.resources.managed_gpu_pool import *  # noqa: F403
from components.resources.managed_gpu_pool import ManagedGpuPoolProvider  # noqa: F401
