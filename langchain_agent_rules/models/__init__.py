"""Chat models: the embedded local model, Ollama, and resolving model strings."""
