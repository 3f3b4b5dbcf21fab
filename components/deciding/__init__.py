"""Decide: what the program knows and checks before it declares anything, one package per
concern (existing/: the existing cluster and what the stack owns in it; azure/: Azure's facts,
quota and preflight; cost/; proof/; workloads/: what the stack runs on its pools, as plain
values), and the checks' entry point (preflight.py). Parses and decides on what a reader
answers; declares no resource and calls nothing out (docs/layout.md)."""
