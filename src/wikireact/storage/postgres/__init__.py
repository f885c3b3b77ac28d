"""Threads in PostgreSQL: LangGraph's PostgresSaver, the registry, advisory locks."""
