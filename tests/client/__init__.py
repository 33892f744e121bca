"""The Python client (memory_client) and its LangChain / LangGraph adapters against the real service."""
