"""The component package's folder (PulumiPlugin.yaml); a package, so its __main__.py is not the program's to the type checker."""
