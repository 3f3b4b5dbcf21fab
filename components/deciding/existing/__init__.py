"""The existing cluster and what the stack owns in it: ownership, adoption, the stack's state,
what Kubernetes runs there, used and adopted pools, and a pool's network fitted to the cluster's."""
