"""The proof's decisions: where its image runs (proof_fit.py), and what the watch makes of a
look at the Job (proof_watch.py, proof_signals.py); the watch itself is components/live/."""
