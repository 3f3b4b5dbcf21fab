"""The cluster, created or existing: its settings, what an existing one is and may be, its credentials and access, and the components that declare or read it."""
