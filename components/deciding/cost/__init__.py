"""What the stack costs before anything is created, and the VM prices it is priced by."""
