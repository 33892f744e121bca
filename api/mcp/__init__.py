"""The Model Context Protocol skin: the memory tools for agents, over stdio (`memory mcp`) and HTTP (/mcp)."""
