"""Read, live: every call the program makes out of its process, before it registers anything:
azure-native's invokes, the Azure SDK, urllib to the cluster's API server and to the Retail Prices
API, kubelogin's runs. The live reader (reader.py) and what only it calls; it parses what it
reads with what components/deciding/ knows, so it stands above it (docs/layout.md)."""
