"""A clock a test moves by hand: what a wait slept, with no wall-clock time."""

from __future__ import annotations


class Clock:
    def __init__(self) -> None:
        self.now, self.slept = 0.0, []

    def sleep(self, seconds: float) -> None:
        self.slept.append(seconds)
        self.now += seconds
