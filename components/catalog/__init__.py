"""The floor under configuration and knowledge: facts of GPUs, of Azure's GPU VM sizes, of the
proof images and of the cluster autoscaler AKS runs, and the proof objects' names with
Kubernetes' limits on them, each with its source. components/config/, reading/ and deciding/
stand on it; it imports nothing of components, decides nothing and declares nothing."""
