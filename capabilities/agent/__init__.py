"""The ``agent`` capability: a model that calls Flora's executable capabilities as tools, one
call at a time, until it can answer (docs/agent.md)."""
