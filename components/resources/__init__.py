"""The Pulumi components: each module declares one component's resources (and hardening.py
and outputs.py, the pod security settings and stack outputs the components share)."""
