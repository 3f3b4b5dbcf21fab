"""Knowledge of Azure: the GPU size catalog, the facts read from Azure or saved files, the
existing cluster, pool networks, prices, the cost estimate and the preflight checks. Modules
here reason about Azure and may read it; none declares a Pulumi resource."""
