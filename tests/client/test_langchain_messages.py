"""LangChain messages to the OpenAI chat messages /v1/context takes, and back, with the real langchain-core classes:
tool calls keep their ids and arguments, the service's flags travel in additional_kwargs, non-text content is named."""

from __future__ import annotations

import pytest
from langchain_core.messages import AIMessage, FunctionMessage, HumanMessage, SystemMessage, ToolMessage
from langchain_core.tools import tool

from memory_client.langchain import from_openai_messages, task_of, to_openai_messages, tool_schemas

TURN = [
    SystemMessage("You are a research assistant."),
    HumanMessage("以后不要用Python 2的语法。Find papers on tidal power.", additional_kwargs={"pinned": True}),
    AIMessage("", tool_calls=[{"name": "search_papers", "args": {"q": "潮汐", "limit": 3}, "id": "c1"}]),
    ToolMessage('[{"id": 1}]', tool_call_id="c1", name="search_papers"),
    AIMessage("Paper 1 is about Brittany.", name="agent"),
    HumanMessage("Thanks!", additional_kwargs={"ephemeral": True}),
]
OPENAI = [
    {"role": "system", "content": "You are a research assistant."},
    {"role": "user", "content": "以后不要用Python 2的语法。Find papers on tidal power.", "pinned": True},
    {"role": "assistant", "content": None, "tool_calls": [
        {"id": "c1", "type": "function", "function": {"name": "search_papers",
                                                      "arguments": '{"q": "潮汐", "limit": 3}'}}]},
    {"role": "tool", "content": '[{"id": 1}]', "tool_call_id": "c1"},
    {"role": "assistant", "content": "Paper 1 is about Brittany.", "name": "agent"},
    {"role": "user", "content": "Thanks!", "ephemeral": True},
]


def test_langchain_messages_become_openai_messages() -> None:
    assert to_openai_messages(TURN) == OPENAI


def test_openai_messages_become_langchain_messages() -> None:
    back = from_openai_messages(OPENAI)
    assert [type(m) for m in back] == [SystemMessage, HumanMessage, AIMessage, ToolMessage, AIMessage, HumanMessage]
    assert [m.content for m in back] == [m.content for m in TURN]
    assert back[2].tool_calls == [{"name": "search_papers", "args": {"q": "潮汐", "limit": 3}, "id": "c1",
                                   "type": "tool_call"}]
    assert back[3].tool_call_id == "c1" and back[4].name == "agent"


def test_unreadable_tool_arguments_become_an_invalid_tool_call() -> None:
    [message] = from_openai_messages([{"role": "assistant", "content": None, "tool_calls": [
        {"id": "c2", "type": "function", "function": {"name": "search", "arguments": "{not json"}}]}])
    assert isinstance(message, AIMessage) and message.tool_calls == []
    assert [(c["id"], c["args"]) for c in message.invalid_tool_calls] == [("c2", "{not json")]


def test_text_blocks_become_text_parts_and_other_blocks_pass_on() -> None:
    mixed = HumanMessage(content=[{"type": "text", "text": "潮汐"}, "tidal"])
    assert to_openai_messages([mixed])[0]["content"] == [{"type": "text", "text": "潮汐"},
                                                         {"type": "text", "text": "tidal"}]
    thinking = AIMessage(content=[{"type": "thinking", "thinking": "..."}, {"type": "text", "text": "Done."}])
    assert to_openai_messages([thinking])[0]["content"] == [{"type": "text", "text": "Done."}]
    image = HumanMessage(content=[{"type": "image_url", "image_url": {"url": "data:image/png;base64,AA=="}}])
    assert to_openai_messages([SystemMessage("s"), image])[1]["content"] == image.content  # the service counts it


def test_unknown_roles_are_refused_in_both_directions() -> None:
    with pytest.raises(ValueError, match="role 'robot'"):
        from_openai_messages([{"role": "robot", "content": "x"}])
    assert isinstance(from_openai_messages([{"role": "developer", "content": "x"}])[0], SystemMessage)
    with pytest.raises(ValueError, match=r"messages\[0\] is a FunctionMessage"):
        to_openai_messages([FunctionMessage("42", name="answer")])


def test_tools_become_function_schemas() -> None:
    @tool
    def search_papers(q: str) -> str:
        """Search papers on a topic."""
        return q

    [schema] = tool_schemas([search_papers], pinned=True)
    assert schema["function"]["name"] == "search_papers" and schema["pinned"] is True
    assert schema["function"]["parameters"]["properties"]["q"]["type"] == "string"


@pytest.mark.parametrize(("config", "task"), [
    ({"configurable": {"thread_id": "thread-1"}}, "thread-1"),
    ({"configurable": {"thread_id": "a thread with spaces"}}, None),
    ({}, None), (None, None)])
def test_a_valid_thread_id_is_the_task(config: dict[str, dict[str, str]] | None, task: str | None) -> None:
    assert task_of(config) == task  # type: ignore[arg-type]
