"""The GPU stack on the pools: the device plugin, NVIDIA's GPU Operator and DCGM exporter, what the cluster runs already, and the components that declare them."""
