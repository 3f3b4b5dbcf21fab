"""Helpers the test modules share (docs/layout.md, "The tests, by behaviour")."""
