"""Agent rules: the model, the store protocols, the stores and the shared limits."""
