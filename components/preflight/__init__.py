"""The checks before anything is created: sizes, quota and permissions; a preview warns where a deployment stops."""
