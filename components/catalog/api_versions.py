"""The AKS (Microsoft.ContainerService) API versions the program calls, each written here
alone and imported wherever a call names one, so a new version lands in one place.

STABLE carries `gpuProfile.nvidia.managementMode`; `migStrategy`, which a managed MIG pool
needs, exists in preview versions only, so such a pool uses MIG_PREVIEW and a preview says so
(docs/design/managed-pool-provider.md, "API versions", has the sources)."""

STABLE = "2026-08-01"
MIG_PREVIEW = "2026-01-02-preview"
