"""Tool-output processors: a tool's result reduced before budgeting, deterministically; the original stays readable.

One file per processor; `process` picks one by the tool's configured name, else by the result's content.
"""

from memory.context.processors.base import Processed, Processor, process
from memory.context.processors.html import HtmlText
from memory.context.processors.json_list import JsonList
from memory.context.processors.logs import LogLines
from memory.context.processors.rows import RowSet

__all__ = ["PROCESSORS", "HtmlText", "JsonList", "LogLines", "Processed", "Processor", "RowSet", "process"]

# Tried in this order when no processor is configured for the tool: the first that accepts the text reduces it.
PROCESSORS: tuple[Processor, ...] = (JsonList(), RowSet(), HtmlText(), LogLines())
