"""Azure's facts, quota and preflight: a cluster's description, sizes and quota, the deployer's
permissions, what an AKS-managed pool needs, the cluster's way out, its kubeconfig."""
