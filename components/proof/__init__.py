"""The proof: the training Job on each pool, where its image runs, how long it may take, and its watch (decisions, live looks, the dynamic resource)."""
