"""Read: the one seam to the outside world (reader.py, `AzureReader`), Azure's saved answers and
the stack's saved state as untrusted files, and Azure's facts parsed in one shape, live or saved.
What decides stands on this package; the live reader is components/live/ (docs/layout.md)."""
