"""The LangGraph ReAct agent: state, nodes, prompts, the text tool protocol and the builder."""
