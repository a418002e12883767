"""Safe built-in tools and the agent_rule / agent_rule_admin tools."""
