"""Programs a machine runs (the standard library and python3-apt only, no Django): the fleet
agent and the crash sender. Nothing in the product imports them."""
