"""What the stack runs on its pools, as the components declare it, in plain values: the device
plugin's DaemonSet (its spec and annotations, and what its adopting `up` changes), the pods'
security baseline, where a pod lands and what it tolerates. Below both the plan, which says
what the adopting `up` changes from it, and the components, which declare it."""
