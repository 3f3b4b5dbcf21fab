"""aks-gpu's code, laid out by what each module does (docs/layout.md):

- `components.config`: the stack's configuration, parsed once into typed objects, one module
  per concept; the only code that knows config keys.
- `components.reading`: what reads, the one seam (`AzureReader`) and Azure's saved answers.
- `components.deciding`: what the program knows and checks before anything is declared, by
  concern (the existing cluster, Azure's facts and quota, cost, the proof). Declares no resource.
- `components.live`: every call out of the process, the live reader.
- `components.resources`: the Pulumi components, each declaring its resources.
- `components.errors`: the one-line errors all three raise.
"""
