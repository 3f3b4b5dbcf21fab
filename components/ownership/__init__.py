"""Owned, adopted, used: whose a pool or object is, what the stack's state holds, and what adopting it does."""
