"""Context assembly (issue 18, in progress): an agent's whole turn fitted into its window.

So far: the chat messages an agent holds, checked and grouped so that a tool call and its answers move together
(memory.context.messages).
"""

from memory.context.messages import Message, ToolCall, Unit, count_tokens, group, message_tokens, parse_messages

__all__ = ["Message", "ToolCall", "Unit", "count_tokens", "group", "message_tokens", "parse_messages"]
