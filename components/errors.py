"""The program's errors, each a `pulumi.RunError`: the Pulumi CLI prints its one-line message
without a stack trace; every check runs before any resource is registered."""

from __future__ import annotations

import re
import unicodedata
from typing import Any

import pulumi

# A value quoted in a message is cut past LONGEST characters to its first KEEP, with its
# length: a 10,000-character pool name, in Azure's answer or a saved file, must not make a
# 10,000-character line.
LONGEST, KEEP = 200, 160


# Characters a message never carries raw: controls (a NUL, a line break, an escape), format
# characters (U+202E turns the rest of a line around), line and paragraph separators, and lone
# surrogates, which UTF-8 cannot encode (the CLI's gRPC log call would fail on them).
UNSAFE = frozenset(("Cc", "Cf", "Zl", "Zp", "Cs"))


def escaped(text: str, keep: str = "") -> str:
    """`text` with every UNSAFE character but those in `keep` written as Python writes it (\\x00, \\n)."""
    if text.isprintable() and text.isascii():
        return text
    return "".join(c if c in keep or unicodedata.category(c) not in UNSAFE else repr(c)[1:-1] for c in text)


# Where a message lists problems, one a line (preflight's): the one line break it keeps.
ITEM = "\n- "


def escaped_lines(text: str) -> str:
    """A message escaped, each of its listed items (ITEM) on a line of its own."""
    return ITEM.join(escaped(part) for part in text.split(ITEM))


def cut(text: str) -> str:
    """`text` as a message quotes it, escaped: whole up to LONGEST characters, else its start and its length."""
    text = escaped(text)
    return text if len(text) <= LONGEST else f"{text[:KEEP]}... ({len(text)} characters)"


def cut_words(message: str) -> str:
    """Every run of more than LONGEST characters without a space or punctuation in `message`, cut:
    the backstop for a value quoted without `cut`."""
    return re.sub(rf"[^\s'\"()\[\]{{}},;:]{{{LONGEST + 1},}}", lambda found: cut(found.group()), message)


# What a message quotes of an error, or of a tool's output: its first SAID characters.
SAID = 300


def one_line(text: object, longest: int | None = SAID) -> str:
    """`text` (an error, what a tool printed) on one line, its first `longest` characters (None: all)."""
    said = escaped(" ".join(str(text).split()))
    return said if longest is None else said[:longest]


def error_line(error: BaseException, longest: int = SAID) -> str:
    """`<type>: <what it said>` on one line: how a message quotes a read that failed."""
    return f"{type(error).__name__}: {one_line(error, longest) or type(error).__name__}"


class OneLine(pulumi.RunError):
    """An error whose message a person reads: no word in it longer than LONGEST characters."""

    def __init__(self, *args: Any) -> None:
        if args and isinstance(args[0], str):
            args = (cut_words(escaped_lines(args[0])), *args[1:])
        super().__init__(*args)


class ConfigError(OneLine):
    """A configuration value that cannot work."""


class PreflightError(OneLine):
    """A fact about the Azure subscription, or the machine, that would make the deployment fail."""


class CostError(OneLine):
    """The stack would cost more per hour than aks-gpu:cost.maxHourly allows."""


class AzureReadError(OneLine):
    """A read of Azure that failed: what was read, what Azure answered, and what to do."""


class ClusterAccessError(OneLine):
    """The deployer may not yet create Kubernetes objects in the cluster, or it could not be asked."""


class ManagedPoolError(OneLine):
    """A failed step of the AKS-managed pool's provider: the step, the pool, and Azure's answer or
    the time limit it ran out of, sent alone to the CLI (components/seam/provider_host_patch.py)."""


class ManagedPoolTimeout(ManagedPoolError, TimeoutError):
    """A step of the AKS-managed pool's provider that ran out of its time limit."""


class ProofWatchFailed(OneLine):
    """The proof cannot train, or did not: the cause in the cluster's words (components/proof/watch_verdict.py)."""
