"""The GPU pools and capacity groups: each pool's settings, its one specification in ARM's names, how Azure changes it, what a running pool is, and the components that declare it."""
