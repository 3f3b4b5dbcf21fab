"""Every call the program makes out of its process, before it registers anything: azure-native's
invokes, the Azure SDK, urllib to the cluster's API server and to the Retail Prices API,
kubelogin's runs. The live reader (reader.py) and what only it calls; the modules beside this
package only parse and decide (docs/layout.md)."""
