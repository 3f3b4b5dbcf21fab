"""aks-gpu's code, laid out by what each module does (docs/layout.md):

- `components.config`: the stack's configuration, parsed once into typed objects, one module
  per concept; the only code that knows config keys.
- `components.azure`: what the program knows and checks about Azure before anything is
  declared (GPU sizes, the existing cluster, quota and offers, prices, cost). Declares no
  resource.
- `components.resources`: the Pulumi components, each declaring its resources.
- `components.errors`: the one-line errors all three raise.
- `components.managed_gpu_pool`: the path every stack's state names the managed pool's
  provider by (it re-exports `components.resources.managed_gpu_pool`).
"""
