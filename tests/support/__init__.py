"""Helpers the test modules share (docs/design/house.md, "The tests, by behaviour")."""
