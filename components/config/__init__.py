"""The shared ground of the settings: the value types every setting is made of (`values.py`),
the one-line refusals and the decoding of structured keys (`messages.py`), and the provider's
own keys (`providers.py`). Each concern's settings live in its package (`<concern>/settings.py`),
and `components/stack.py` parses them all at once into the `StackConfig` the program runs on."""
