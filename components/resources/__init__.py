"""The Pulumi components: each module declares one component's resources (and hardening.py
and outputs.py, the NetworkPolicy and stack outputs the components share)."""
