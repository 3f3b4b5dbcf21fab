"""The stack files' JSON schema (schema/stack.schema.json) and its line."""

from __future__ import annotations

import json

import jsonschema
import yaml

from tools import schema

SCHEMA = json.loads(schema.SCHEMA_FILE.read_text())

VALIDATOR = jsonschema.Draft202012Validator(SCHEMA)

# The line that lets an editor (the YAML language server) check a stack file as it is typed.
SCHEMA_LINE = "# yaml-language-server: $schema=schema/stack.schema.json"


def stack_file_problems(path) -> list[str]:
    """What `make lint`'s check-jsonschema would find in a stack file, and a missing schema
    line, said with the line to add."""
    text = path.read_text()
    first = (text.splitlines() or [""])[0]
    line = [] if first == SCHEMA_LINE else [f"{path.name}: add this line as its first line (the editor's schema): {SCHEMA_LINE}"]
    return line + [e.message for e in VALIDATOR.iter_errors(yaml.safe_load(text))]
