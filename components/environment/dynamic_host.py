"""What the package cannot declare: the program's three dynamic resources, whose providers Pulumi
runs in the consumer's program, where this package's code is not (docs/design/package-dynamic.md).

The AKS-managed pool, the deployer's grant's wait and the proof's watch are `pulumi.dynamic`
resources: each provider is pickled into the state by its module path (pulumi 3.272.0
dynamic/dynamic.py `serialize_provider`: dill, a class its module holds by reference), and the
engine runs it in `pulumi-resource-pulumi-python` (`python -u -m pulumi.dynamic`), started in the
consumer's project directory with the consumer's project runtime options (pulumi/pulumi 1b594989
sdk/go/common/resource/plugin/provider_plugin.go `NewProvider`: `PULUMI_RUNTIME_<option>`, then
`newPlugin(ctx, ctx.Pwd, ...)`; sdk/python/dist/pulumi-resource-pulumi-python). There the host's
`dill.loads` cannot import `components` (pulumi/dynamic/__main__.py `get_provider`), nor, in a
TypeScript or YAML consumer's plain `python3`, Pulumi itself: pulumi/pulumi issue 5455, open.

The proof needs no watch to be awaited: the package plans it without one (build_plan's
`dynamic_resources`), and pulumi-kubernetes awaits each Job alone. The other two have no such
path, so the component refuses, before anything is registered, each input that would declare one.
"""

from dataclasses import dataclass

from components.cluster.cluster import GpuClusterArgs
from components.plan import Plan
from components.pools.existing_pool import UsedPool
from components.pools.settings import GpuPoolConfig

# Why each refusal: the same for the three, said once.
WHY = "a Pulumi dynamic resource, whose provider Pulumi runs in your program's own Python, where this package's code is not installed"


@dataclass(frozen=True)
class Refusal:
    """The input that would declare a dynamic resource (gpuPools.t4.management), and the line that says so."""

    input: str
    reason: str


def refusal(plan: Plan) -> Refusal | None:
    """The first input of `plan`'s that declares a dynamic resource, if any: a pool, then the grant
    (a plan told `dynamic_resources=False` declares no proof watch)."""
    return next((r for r in (_managed_pool(plan), _access_wait(plan)) if r is not None), None)


def _managed_pool(plan: Plan) -> Refusal | None:
    """GpuPool declares a ManagedGpuPool for a pool AKS manages (gpu_pool.py: `pool.managed`)."""
    pool = next((a.pool for a in plan.gpu_pools if not isinstance(a, UsedPool) and a.pool.managed), None)
    if pool is None:
        return None
    member, value, allowed = _managed_member(pool)
    name = f"{plan.pools.key(pool).partition(':')[2]}.{member}"
    return Refusal(name, f"{name} = {value}: the AKS-managed GPU pool is {WHY}; allowed under the package: {allowed}")


def _managed_member(pool: GpuPoolConfig) -> tuple[str, str, str]:
    """The pool's member that asked AKS to manage it (settings.py `managed_key`), its value and what the package allows."""
    if pool.dedicated_vhd:
        return "dedicatedVhd", "true", "false, with management device-plugin or gpu-operator"
    return "management", "aks-managed", "device-plugin or gpu-operator"


def _access_wait(plan: Plan) -> Refusal | None:
    """GpuCluster waits for the deployer's grant with an AccessWait where it grants one and knows
    the subscription (cluster.py `GpuCluster.__init__`)."""
    cluster = plan.cluster
    if not (isinstance(cluster, GpuClusterArgs) and cluster.access.grants_deployer and cluster.subscription_id):
        return None
    name = "access.deployerType"
    return Refusal(
        name,
        f"{name} = {cluster.access.deployer_type}: the wait until the deployer's cluster-admin grant takes is {WHY}; "
        "allowed under the package: none, with access.adminGroupObjectIds naming a group the deployer is in",
    )
