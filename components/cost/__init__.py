"""What the stack costs: VM prices (the Retail Prices API), the hourly and monthly estimate, the limit, and the budget."""
