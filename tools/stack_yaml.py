"""A stack file read as the Pulumi CLI reads it, and each value YAML readers read otherwise.

`read` parses a file with PyYAML (libyaml where PyYAML has it) and resolves each plain
scalar as Pulumi's CLI does (gopkg.in/yaml.v3: tools/yaml_readers.py, with the sources), so
`make render` and the tests see what the CLI hands the program. It names, for the caller to
refuse, each plain value or key that YAML 1.1 (PyYAML), YAML 1.2 (`make lint`'s
check-jsonschema) and the CLI read differently, each value the CLI cannot load (infinity,
NaN), and each key given twice (yaml.v3 refuses the file; PyYAML keeps the last).
`python -m tools.stack_yaml FILE...` prints one line for each: `make lint` runs it from
.venv-lint, since it needs only PyYAML.
"""

from __future__ import annotations

import base64
import dataclasses
import functools
import json
import math
import sys
from pathlib import Path
from typing import Any, cast

import yaml
from yaml.constructor import ConstructorError
from yaml.nodes import MappingNode, ScalarNode, SequenceNode

from components import files as file_checks
from tools.yaml_readers import LONG_DIGITS, GoTime, disagreement, go_key, go_scalar, json_refusal, long_number

PLAIN = "!pulumi-cli-plain"  # the tag the loader gives a plain scalar, resolved as yaml.v3 does
MERGE = "tag:yaml.org,2002:merge"
_BASE_LOADER = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


class CliLoader(_BASE_LOADER):  # type: ignore[misc, valid-type]
    """PyYAML's SafeLoader (libyaml's parser where PyYAML has it) with yaml.v3's scalars: a
    plain scalar resolves as `go_scalar` says; an explicit tag is read as yaml.v3 reads it."""

    def resolve(self, kind: Any, value: str, implicit: tuple[bool, bool]) -> str:
        if kind is ScalarNode and implicit[0]:
            return MERGE if value == "<<" else PLAIN
        return super().resolve(kind, value, implicit)


def _tagged(kinds: tuple[type, ...], tag: str) -> Any:
    def construct(loader: CliLoader, node: ScalarNode) -> Any:
        value = go_scalar(node.value)
        if isinstance(value, bool) != (bool in kinds) or not isinstance(value, kinds):
            if float in kinds and isinstance(value, int) and not isinstance(value, bool):
                return float(value)
            raise ConstructorError(None, None, f"cannot decode `{node.value}` as a {tag}", node.start_mark)
        return value

    return construct


CliLoader.add_constructor(PLAIN, lambda loader, node: go_scalar(node.value))
CliLoader.add_constructor(MERGE, lambda loader, node: "<<")  # "<<" as a value: the string
for _tag, _kinds in (("int", (int,)), ("float", (float,)), ("bool", (bool,)), ("null", (type(None),)), ("timestamp", (GoTime,))):
    CliLoader.add_constructor(f"tag:yaml.org,2002:{_tag}", _tagged(_kinds, f"!!{_tag}"))
CliLoader.add_constructor(
    "tag:yaml.org,2002:binary", lambda loader, node: base64.b64decode(loader.construct_scalar(node)).decode("utf-8", "replace")
)


@dataclasses.dataclass(frozen=True)
class Problem:
    """A value or key the CLI reads otherwise than another reader, or cannot load."""

    path: tuple[Any, ...]  # from the document's root: mapping keys and list indexes
    text: str  # the value, or the key, as written
    says: str  # what is wrong, and what to write instead
    key: bool = False  # `text` is a mapping key (the last of `path`)

    def line(self, file: str, project: str | None = None) -> str:
        """One line: `<file>: <key path> = <value>: <what>`. With `project`, the path of a
        stack file's config key is the key with its namespace (`aks-gpu:gpuPool.spot`)."""
        where = key_path(self.path, project)
        return f"{file}: {where} (a key): {self.says}" if self.key else f"{file}: {where} = {cut(self.text)}: {self.says}"


def cut(text: str) -> str:
    """components/errors.py `cut`'s rule (200, then 160 and the length), without its pulumi import: make lint runs this in .venv-lint."""
    return text if len(text) <= 200 else f"{text[:160]}... ({len(text)} characters)"


def key_path(path: tuple[Any, ...], project: str | None = None) -> str:
    parts = list(path)
    if project and len(parts) > 1 and parts[0] == "config":
        parts = parts[1:]
        parts[0] = parts[0] if ":" in str(parts[0]) else f"{project}:{parts[0]}"
    text = go_key(parts[0]) if parts else "(the document)"
    return text + "".join(f"[{p}]" if isinstance(p, int) and not isinstance(p, bool) else f".{go_key(p)}" for p in parts[1:])


# The stack schema (`make schema`): what type a config key's value takes, so that the advice
# fits the key (`mode: off` is a word to quote, `spot: yes` a boolean to write as true).
SCHEMA = Path(__file__).resolve().parent.parent / "schema" / "stack.schema.json"


@functools.cache
def _schema() -> dict[str, Any]:
    try:
        found = json.loads(SCHEMA.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return found if isinstance(found, dict) else {}


def _types(node: Any, depth: int = 0) -> frozenset[str]:
    """The JSON types a schema node allows, through $ref and anyOf (the secure-value form aside)."""
    if not isinstance(node, dict) or depth > 8:
        return frozenset()
    if isinstance(ref := node.get("$ref"), str):
        return frozenset() if ref.endswith("/secureValue") else _types(_schema().get("$defs", {}).get(ref.rsplit("/", 1)[-1]), depth + 1)
    kinds = frozenset(node["type"] if isinstance(node.get("type"), list) else [node["type"]]) if "type" in node else frozenset()
    return kinds.union(*(_types(option, depth + 1) for option in node.get("anyOf", [])))


def expects(path: tuple[Any, ...]) -> frozenset[str]:
    """The JSON types the stack schema gives the value at `path` (from the file's root); empty
    where the schema says nothing of it (another file, another namespace's key)."""
    node: Any = _schema()
    for part in path:
        options = [node, *node.get("anyOf", [])] if isinstance(node, dict) else []
        options = [_schema().get("$defs", {}).get(o["$ref"].rsplit("/", 1)[-1], {}) if "$ref" in o else o for o in options]
        step = next((o["properties"][part] for o in options if part in o.get("properties", {})), None)
        step = step or next((o["additionalProperties"] for o in options if isinstance(o.get("additionalProperties"), dict)), None)
        if step is None:
            return frozenset()
        node = step
    return _types(node)


def _problems(node: Any, path: tuple[Any, ...], found: list[Problem], walked: set[int]) -> None:
    if isinstance(node, ScalarNode):
        if node.tag == PLAIN and (digits := long_number(node.value)):
            found.append(Problem(path, node.value, _long(digits)))
        elif node.tag == PLAIN and (says := disagreement(node.value, expects=expects(path))):
            found.append(Problem(path, node.value, says))
        elif node.tag == PLAIN and isinstance(value := go_scalar(node.value), float) and not math.isfinite(value):
            says = f"Pulumi's CLI cannot load this value ({json_refusal(value)}); write a number, or quote it {json.dumps(node.value)}"
            found.append(Problem(path, node.value, says))
        return
    if id(node) in walked:  # an alias of a node already walked
        return
    walked.add(id(node))
    if isinstance(node, SequenceNode):
        for index, item in enumerate(node.value):
            _problems(item, (*path, index), found, walked)
    elif isinstance(node, MappingNode):
        _mapping_problems(node, path, found, walked)


def _long(digits: int) -> str:
    return (
        f"a whole number of {digits} digits, which YAML 1.1 and YAML 1.2 readers cannot read (Python's stop at {LONG_DIGITS:,}) "
        "and Pulumi's CLI reads as a string; no setting takes a number past 64 bits: write one of at most 19 digits, or quote it for a string"
    )


def _mapping_problems(node: MappingNode, path: tuple[Any, ...], found: list[Problem], walked: set[int]) -> None:
    """A mapping's keys (given twice: yaml.v3 compares them as written; read differently) and
    its values. A merge key's mapping is walked at the mapping's own path."""
    lines: dict[str, int] = {}
    for key_node, value_node in node.value:
        if key_node.tag == MERGE or not isinstance(key_node, ScalarNode):
            _problems(value_node, path, found, walked)
            continue
        key = go_scalar(key_node.value) if key_node.tag == PLAIN else key_node.value
        line = key_node.start_mark.line + 1
        if key_node.value in lines:
            twice = f"given twice (lines {lines[key_node.value]} and {line}): Pulumi's CLI refuses the file (mapping key already defined), YAML 1.1 keeps the last; keep one"
            found.append(Problem((*path, key), key_node.value, twice, key=True))
        lines.setdefault(key_node.value, line)
        if key_node.tag == PLAIN and (says := disagreement(key_node.value, key=True)):
            found.append(Problem((*path, key), key_node.value, says, key=True))
        _problems(value_node, (*path, key), found, walked)


# gopkg.in/yaml.v3's decoder, which the CLI reads stack files with, refuses excessive aliasing
# (go-yaml/yaml@f6f7691 decode.go: `allowedAliasRatio`, "document contains excessive
# aliasing"): past 100 aliased decodes and 1,000 in all, at most 99% of a document's decodes
# may come from aliases, falling to 10% between 400,000 and 4,000,000 decodes. And an alias
# inside its own anchor ("anchor '%s' value contains itself", `alias`). PyYAML shares an
# anchored node among its aliases without a limit, so a "billion laughs" file reads in a
# millisecond and then hangs whatever expands it, and a recursive one ends in a RecursionError.
ALIAS_RATIO_LOW, ALIAS_RATIO_HIGH = 400_000, 4_000_000
# yaml.v3 refuses nesting past 10,000 (scannerc.go max_flow_level, max_indents); no stack
# setting is nested more than a few levels, and Python's walks stop near a thousand.
DEPTH = 64


def allowed_alias_ratio(decodes: int) -> float:
    """yaml.v3's `allowedAliasRatio`."""
    if decodes <= ALIAS_RATIO_LOW:
        return 0.99
    if decodes >= ALIAS_RATIO_HIGH:
        return 0.10
    return 0.99 - 0.89 * ((decodes - ALIAS_RATIO_LOW) / (ALIAS_RATIO_HIGH - ALIAS_RATIO_LOW))


class _Decodes:
    """yaml.v3's count of decodes over the composed document, each alias expanded where it
    stands (document order: the first time a node is met is its anchor, each later time an
    alias of it), stopped as yaml.v3 stops."""

    def __init__(self) -> None:
        self.count = self.aliased = 0
        self.anchored: set[int] = set()
        self.open: set[int] = set()  # the nodes being walked, from the root down

    def refuse(self, node: Any, problem: str) -> None:
        raise yaml.MarkedYAMLError(problem=problem, problem_mark=node.start_mark)

    def walk(self, node: Any, aliases: int = 0, depth: int = 0) -> None:
        if id(node) in self.anchored:
            self._decode(node, aliases)  # the alias itself
            if id(node) in self.open:
                self.refuse(node, "an anchor's value contains an alias of itself, which Pulumi's CLI refuses (yaml.v3)")
            aliases += 1
        self._decode(node, aliases)
        self.anchored.add(id(node))
        if isinstance(node, ScalarNode):
            return
        if depth >= DEPTH:  # through aliases: the file itself was measured before it was composed
            self.refuse(node, f"nested more than {DEPTH} levels deep once its aliases are expanded; no stack setting is")
        self.open.add(id(node))
        children = node.value if isinstance(node, SequenceNode) else [n for pair in node.value for n in pair]
        for child in children:
            self.walk(child, aliases, depth + 1)
        self.open.discard(id(node))

    def _decode(self, node: Any, aliases: int) -> None:
        self.count += 1
        self.aliased += 1 if aliases else 0
        if self.aliased > 100 and self.count > 1000 and self.aliased / self.count > allowed_alias_ratio(self.count):
            self.refuse(node, "the document contains excessive aliasing, which Pulumi's CLI refuses (yaml.v3); write the values out")


@dataclasses.dataclass(frozen=True)
class Document:
    data: Any  # the file's contents as the CLI reads them
    problems: tuple[Problem, ...]  # each value or key the readers read differently, in file order


def _nesting(text: str) -> None:
    """Refuses a document nested deeper than DEPTH from its events, before it is composed:
    PyYAML's composer recurses once a level, and crashes the interpreter some 100,000 deep."""
    loader = CliLoader(text)
    try:
        depth = 0
        while loader.check_event():
            event = loader.get_event()
            if isinstance(event, (yaml.MappingStartEvent, yaml.SequenceStartEvent)):
                depth += 1
                if depth > DEPTH:
                    raise yaml.MarkedYAMLError(
                        problem=f"nested more than {DEPTH} levels deep; no stack setting is", problem_mark=cast(Any, event.start_mark)
                    )
            elif isinstance(event, (yaml.MappingEndEvent, yaml.SequenceEndEvent)):
                depth -= 1
    finally:
        loader.dispose()


def read(text: str) -> Document:
    """A YAML file's contents as Pulumi's CLI reads them, and its problems. A file that is not
    YAML, or that the CLI refuses for its aliases or depth, raises yaml.YAMLError, as
    yaml.load does."""
    _nesting(text)
    loader = CliLoader(text)
    try:
        node = loader.get_single_node()
        found: list[Problem] = []
        if node is not None:
            _Decodes().walk(node)
            _problems(node, (), found, set())
        return Document(loader.construct_document(node) if node is not None else None, tuple(found))
    finally:
        loader.dispose()


def _project(stack_file: Path) -> str | None:
    """The project name from the `Pulumi.yaml` beside a stack file (None for `Pulumi.yaml` itself)."""
    project_file = stack_file.parent / "Pulumi.yaml"
    if stack_file.name == "Pulumi.yaml" or not project_file.exists():
        return None
    try:
        data = read(file_checks.read_bytes(project_file).decode("utf-8")).data
    except (yaml.YAMLError, file_checks.Unreadable, UnicodeDecodeError):
        return None
    return data.get("name") if isinstance(data, dict) else None


def main(argv: list[str] | None = None) -> int:
    """`python -m tools.stack_yaml FILE...`: one line per problem on stderr; exit 1 if there is any."""
    lines = []
    files = argv if argv is not None else sys.argv[1:]
    for name in files:
        try:
            document = read(file_checks.read_bytes(name).decode("utf-8"))
        except (file_checks.Unreadable, UnicodeDecodeError) as error:
            lines.append(f"{name}: {error if isinstance(error, file_checks.Unreadable) else 'not UTF-8 text'}")
            continue
        except yaml.YAMLError as error:
            mark = getattr(error, "problem_mark", None)
            where = f" at line {mark.line + 1}, column {mark.column + 1}" if mark else ""
            lines.append(f"{name}: not valid YAML{where}: {getattr(error, 'problem', None) or error}")
            continue
        lines += [problem.line(name, _project(Path(name))) for problem in document.problems]
    for line in lines:
        print(line, file=sys.stderr)
    if not lines:
        print(f"{len(files)} file(s) read alike by YAML 1.1, YAML 1.2 and Pulumi's CLI")
    return 1 if lines else 0


if __name__ == "__main__":
    sys.exit(main())
