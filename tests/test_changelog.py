"""CHANGELOG.md says what each release changed for a user, in Keep a Changelog 1.1.0's form
(https://keepachangelog.com/en/1.1.0/): an `## [Unreleased]` section first, then each
release, newest first, as `## [X.Y.Z] - YYYY-MM-DD`. The project's version is its newest."""

from __future__ import annotations

import re
from pathlib import Path

try:
    import tomllib
except ModuleNotFoundError:  # Python 3.10: make lowest
    import tomli as tomllib

ROOT = Path(__file__).resolve().parent.parent
RELEASE = re.compile(r"^## \[(\d+\.\d+\.\d+)\] - (\d{4}-\d{2}-\d{2})$", re.MULTILINE)
SECTION = re.compile(r"^## .*$", re.MULTILINE)


def test_the_project_version_is_the_newest_release_in_the_changelog():
    changelog = (ROOT / "CHANGELOG.md").read_text()
    version = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["version"]
    sections = SECTION.findall(changelog)
    assert sections[0] == "## [Unreleased]", "changes not yet released go first"
    releases = RELEASE.findall(changelog)
    assert [f"## [{v}] - {d}" for v, d in releases] == sections[1:], "every other section is a release"
    assert releases[0][0] == version, f"pyproject.toml's version {version} is not the newest release {releases[0][0]}"
