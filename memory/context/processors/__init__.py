"""Tool-output processors: a tool's result reduced to a token room, deterministically; the original stays readable.

One file per processor; `process` picks one by the tool's configured name, else by the result's content.
`back_reference` is not a processor: it replaces the items an agent already sees in earlier results.
"""

from memory.context.processors.backref import back_reference
from memory.context.processors.base import Processed, Processor
from memory.context.processors.html import HtmlText
from memory.context.processors.json_value import JsonValue
from memory.context.processors.logs import LogLines
from memory.context.processors.registry import ALIASES, PROCESSORS, process
from memory.context.processors.rows import RowSet

__all__ = ["ALIASES", "PROCESSORS", "HtmlText", "JsonValue", "LogLines", "Processed", "Processor", "RowSet",
           "back_reference", "process"]
