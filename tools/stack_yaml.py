"""A YAML file read as the Pulumi CLI reads it (gopkg.in/yaml.v3 v3.0.1, go-yaml/yaml@f6f7691).

PyYAML parses and constructs; the loader below swaps its YAML 1.1 resolvers for yaml.v3's
rules (YAML 1.2's core schema, resolve.go `resolve`), refuses a key given twice and bounds
aliases as yaml.v3 does. What yaml.v3 reads otherwise than written or than YAML 1.2 (`make
lint`'s check-jsonschema) reads it, or cannot hand over (017, a date, .inf, a number past 64
bits, an explicit tag), is refused in one line that says what to write. Why PyYAML, and each
rule's source: docs/design/yaml-reader.md. `python -m tools.stack_yaml FILE...` prints that
line for each file: `make lint` runs it from .venv-lint, which has PyYAML.
"""

from __future__ import annotations

import json
import math
import re
import sys
from pathlib import Path
from typing import Any, cast

import yaml
from yaml.constructor import ConstructorError, SafeConstructor
from yaml.nodes import MappingNode, Node, ScalarNode, SequenceNode

from components import files as file_checks

MERGE = "tag:yaml.org,2002:merge"
STR, SEQ, MAP = (f"tag:yaml.org,2002:{kind}" for kind in ("str", "seq", "map"))
BOOL, NULL, NUMBER = "!yaml.v3:bool", "!yaml.v3:null", "!yaml.v3:number"  # private: an explicit !!bool is not these
# resolve.go lines 55-58: yaml.v3's only spellings of NaN and infinity.
NAN_INF = {".nan", ".NaN", ".NAN"} | {f"{sign}.{word}" for sign in ("", "+", "-") for word in ("inf", "Inf", "INF")}
# resolve.go line 124 `yamlStyleFloat`, which line 204 matches after line 191 drops every "_".
FLOAT = re.compile(r"[-+]?(\.[0-9]+|[0-9]+(\.[0-9]*)?)([eE][-+]?[0-9]+)?\Z")
# Go's strconv.ParseInt(s, 0, 64) (resolve.go line 192): a sign, then 0x, 0o, 0b (either case) or decimals.
INT = re.compile(r"[-+]?(?:0[xX]([0-9a-fA-F]+)|0[oO]([0-7]+)|0[bB]([01]+)|([0-9]+))\Z")
OCTAL = re.compile(r"[-+]?0+[1-9][0-9]*\Z")  # ParseInt's base 0 reads a leading 0 as octal; YAML 1.2 as decimal
# resolve.go lines 294-325 `parseTimestamp`: Go's time.Parse with these layouts (ranges unchecked here).
TIME = re.compile(
    r"[0-9]{4}-[0-9]{1,2}-[0-9]{1,2}(?:(?:[Tt]|( +))[0-9]{1,2}:[0-9]{1,2}:[0-9]{1,2}(?:[.,][0-9]+)?(?(1)|(?:Z|[-+][0-9]{2}:[0-9]{2})))?\Z"
)


class Refused(ValueError):
    """A value or key that the CLI reads otherwise than written or than YAML 1.2 does, or refuses."""

    def __init__(self, says: str, text: str, path: tuple[str, ...] = (), key: bool = False) -> None:
        super().__init__(says)
        self.says, self.text, self.path, self.key = says, text, path, key

    def under(self, part: str, key: bool = False) -> Refused:
        return Refused(self.says, self.text, (part, *self.path), key or self.key)

    def line(self, file: str, project: str | None = None) -> str:
        """`<file>: <key path> = <value>: <what>`; with `project`, a stack file's config key
        with its namespace (`aks-gpu:gpuPool.spot`), as the CLI names it."""
        parts = list(self.path)
        if project and len(parts) > 1 and parts[0] == "config":
            parts = [parts[1] if ":" in parts[1] else f"{project}:{parts[1]}", *parts[2:]]
        where = "".join(p if p.startswith("[") or i == 0 else f".{p}" for i, p in enumerate(parts)) or "(the document)"
        return f"{file}: {where} (a key): {self.says}" if self.key else f"{file}: {where} = {cut(self.text)}: {self.says}"


def cut(text: str) -> str:
    """components/errors.py `cut`'s rule (200, then 160 and the length), without its pulumi import: make lint runs this in .venv-lint."""
    return text if len(text) <= 200 else f"{text[:160]}... ({len(text)} characters)"


def number(text: str) -> Any:
    """A plain scalar that starts as a number does, as resolve.go lines 173-209 read it: an int,
    a float or a string; refused where the CLI's answer is not what was written."""
    if text in NAN_INF:
        value = "NaN" if "a" in text.lower() else ("-Inf" if text[0] == "-" else "+Inf")
        raise Refused(
            f"Pulumi's CLI cannot load this value (json: unsupported value: {value}); write a number, or quote it {json.dumps(text)}", text
        )
    if not text.isascii():  # Python's int() and float() read other scripts' digits; Go's do not
        return text
    if text[0] == ".":  # line 175 ParseFloat(in): Python's float() places "_" as Go's does (between digits)
        return _finite(text, _float(text))
    if TIME.match(text):
        raise Refused(f"Pulumi's CLI reads this as a time and hands the program Go's text for it; quote it {json.dumps(text)}", text)
    plain = text.replace("_", "")  # line 191
    if OCTAL.match(plain):
        raise Refused(
            f"a leading 0 makes this octal for Pulumi's CLI and decimal for YAML 1.2; write it without the 0 (0o17 for octal), or quote it {json.dumps(text)}",
            text,
        )
    if found := INT.match(plain):
        return _int(text, plain, next(group for group in found.groups() if group))
    return _finite(text, float(plain)) if FLOAT.match(plain) else text


def _float(text: str) -> float | None:
    try:
        return float(text)
    except ValueError:
        return None


def _finite(text: str, value: float | None) -> float | str:
    """Go's ParseFloat fails past its range (ErrRange), and yaml.v3 keeps the text; YAML 1.2 reads infinity."""
    if value is None:
        return text
    if not math.isfinite(value):
        raise Refused(
            f"past the largest number Pulumi's CLI reads (Go's float64), which it reads as a string; write a smaller number, or quote it {json.dumps(cut(text))}",
            text,
        )
    return value


def _int(text: str, plain: str, digits: str) -> int | str:
    """ParseInt(plain, 0, 64), else ParseUint (lines 192-203): the range of Go's int64 or, unsigned, uint64."""
    past = len(digits.lstrip("0")) > 64  # no 64-bit number has more digits (Python's int() stops at 4,300)
    value = 0 if past else int(plain, 0)  # Python's base 0 takes Go's prefixes and signs; OCTAL is refused before
    if past or not (-(2**63) <= value < 2 ** (63 if plain[0] in "+-" else 64)):
        raise Refused(
            "a whole number past 64 bits, which Pulumi's CLI reads as a float or a string (yaml.v3); no setting takes one: "
            "write one of at most 19 digits, or quote it for a string",
            text,
        )
    return value


def _refuse_explicit_tag(loader: CliLoader, node: Node) -> Any:
    raise Refused(
        f"an explicit tag ({node.tag.replace('tag:yaml.org,2002:', '!!')}), which YAML readers apply differently; write the value without it, quoted for a string",
        str(node.value) if isinstance(node, ScalarNode) else node.tag,
    )


def _once(node: MappingNode) -> None:
    """decode.go lines 769-781: a key written twice (compared as written) refuses the file; a
    merged mapping's keys too (its merge unmarshals the mapping); PyYAML would keep the last."""
    lines: dict[str, int] = {}
    for key_node, value_node in node.value:
        if key_node.tag == MERGE:
            for merged in value_node.value if isinstance(value_node, SequenceNode) else [value_node]:
                if isinstance(merged, MappingNode):
                    _once(merged)
        if not isinstance(key_node, ScalarNode):
            continue
        if key_node.value in lines:
            says = f"given twice (lines {lines[key_node.value]} and {key_node.start_mark.line + 1}): Pulumi's CLI refuses the file (mapping key already defined); keep one"
            raise Refused(says, key_node.value, (key_node.value,), key=True)
        lines[key_node.value] = key_node.start_mark.line + 1


class CliLoader(getattr(yaml, "CSafeLoader", yaml.SafeLoader)):  # type: ignore[misc]
    """PyYAML's SafeLoader (libyaml's parser where PyYAML has it) with yaml.v3's answers."""

    yaml_implicit_resolvers: dict[Any, list[tuple[str, re.Pattern[str]]]] = {}  # none of YAML 1.1's
    yaml_constructors: dict[Any, Any] = {}  # str, seq, map and the private tags alone; any other tag is refused

    def construct_mapping(self, node: MappingNode, deep: bool = False) -> dict[Any, Any]:  # type: ignore[override]
        """Each value's refusal named by its key; merge keys (`<<`) as PyYAML and yaml.v3 both
        merge them (decode.go `merge`: the mapping's own keys win, then the first merged)."""
        _once(node)
        self.flatten_mapping(node)
        mapping: dict[Any, Any] = {}
        for key_node, value_node in node.value:
            where = key_node.value if isinstance(key_node, ScalarNode) else "(a key)"
            try:
                key = self.construct_object(key_node, deep=True)
            except Refused as refused:
                raise refused.under(where, key=True) from None
            if isinstance(key, (dict, list)):
                raise ConstructorError(
                    None, None, "a mapping or a list as a key, which Pulumi's CLI refuses (invalid map key)", key_node.start_mark
                )
            try:
                mapping[key] = self.construct_object(value_node, deep=True)
            except Refused as refused:
                raise refused.under(where) from None
        return mapping

    def construct_sequence(self, node: SequenceNode, deep: bool = False) -> list[Any]:  # type: ignore[override]
        items = []
        for index, child in enumerate(node.value):
            try:
                items.append(self.construct_object(child, deep=True))
            except Refused as refused:
                raise refused.under(f"[{index}]") from None
        return items


for _tag, _pattern, _first in (
    (BOOL, r"(?:true|True|TRUE|false|False|FALSE)\Z", "tTfF"),  # resolve.go lines 52-53: YAML 1.2's, no yes/no/on/off
    (NULL, r"(?:~|null|Null|NULL|)\Z", ["~", "n", "N", ""]),  # line 54
    (MERGE, r"<<\Z", "<"),  # a plain "<<": decode.go lines 240-243
    (NUMBER, r"[-+.0-9]", "-+.0123456789"),  # lines 37-45: the hints that lines 173-209 read as a number, or not
):
    CliLoader.add_implicit_resolver(_tag, re.compile(_pattern), list(_first))
CliLoader.add_constructor(STR, SafeConstructor.construct_yaml_str)
CliLoader.add_constructor(SEQ, SafeConstructor.construct_yaml_seq)
CliLoader.add_constructor(MAP, SafeConstructor.construct_yaml_map)
CliLoader.add_constructor(BOOL, lambda loader, node: node.value.lower() == "true")
CliLoader.add_constructor(NULL, lambda loader, node: None)
CliLoader.add_constructor(NUMBER, lambda loader, node: number(node.value))
CliLoader.add_constructor(MERGE, lambda loader, node: "<<")  # "<<" as a value: the string
CliLoader.add_constructor(None, _refuse_explicit_tag)


# No library bounds aliases as yaml.v3 does (decode.go lines 468-491 `allowedAliasRatio`,
# "document contains excessive aliasing"; line 536 "anchor '%s' value contains itself"): past
# 100 aliased decodes and 1,000 in all, at most 99% of a document's decodes may come from
# aliases, falling to 10% between 400,000 and 4,000,000 decodes. PyYAML shares an anchored node
# among its aliases, so a "billion laughs" file reads in a millisecond and then hangs whatever
# expands it, and one that holds itself builds a recursive list.
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


def read(text: str) -> Any:
    """A YAML file's contents as Pulumi's CLI reads them. A value or key it reads otherwise
    raises Refused; a file that is not YAML, that holds a second document (which yaml.v3's
    Unmarshal would drop), or that the CLI refuses for its aliases or depth, yaml.YAMLError."""
    _nesting(text)
    loader = CliLoader(text)
    try:
        try:
            node = loader.get_single_node()
        except yaml.composer.ComposerError as error:
            if error.problem != "but found another document":
                raise
            raise yaml.MarkedYAMLError(
                problem="a second document, which Pulumi's CLI would drop; keep one", problem_mark=error.problem_mark
            ) from None
        if node is None:
            return None
        _Decodes().walk(node)
        return loader.construct_document(node)
    finally:
        loader.dispose()


def not_yaml(name: str, error: yaml.YAMLError) -> str:
    """The one line for a file that is not YAML as the CLI reads it."""
    mark = getattr(error, "problem_mark", None)
    where = f" at line {mark.line + 1}, column {mark.column + 1}" if mark else ""
    return f"{name}: not valid YAML{where}: {getattr(error, 'problem', None) or error}"


def _project(stack_file: Path) -> str | None:
    """The project name from the `Pulumi.yaml` beside a stack file (None for `Pulumi.yaml` itself)."""
    project_file = stack_file.parent / "Pulumi.yaml"
    if stack_file.name == "Pulumi.yaml" or not project_file.exists():
        return None
    try:
        data = read(file_checks.read_bytes(project_file).decode("utf-8"))
    except (yaml.YAMLError, Refused, file_checks.Unreadable, UnicodeDecodeError):
        return None
    return data.get("name") if isinstance(data, dict) else None


def main(argv: list[str] | None = None) -> int:
    """`python -m tools.stack_yaml FILE...`: one line per refused file on stderr; exit 1 if there is any."""
    lines = []
    files = argv if argv is not None else sys.argv[1:]
    for name in files:
        try:
            read(file_checks.read_bytes(name).decode("utf-8"))
        except (file_checks.Unreadable, UnicodeDecodeError) as error:
            lines.append(f"{name}: {error if isinstance(error, file_checks.Unreadable) else 'not UTF-8 text'}")
        except yaml.YAMLError as error:
            lines.append(not_yaml(name, error))
        except Refused as refused:
            lines.append(refused.line(name, _project(Path(name))))
    for line in lines:
        print(line, file=sys.stderr)
    if not lines:
        print(f"{len(files)} file(s) read as Pulumi's CLI reads them")
    return 1 if lines else 0


if __name__ == "__main__":
    sys.exit(main())
