"""What a context call decides is state in the store, not process memory: deleted facts stay deleted, an older message
never rolls a fact back, a task's constraints bind it and go with it, two conversations never share a derived task,
a refused turn stores nothing, a restart answers the same; in English and Chinese."""

from __future__ import annotations

import json
from typing import Any

import pytest

from memory.config import Config
from memory.context import ContextRequest
from memory.embedding import Embedder
from memory.errors import ValidationError
from memory.service import Memory
from tests.memory.context.chat import call

RULE = {"en": ("By the way, never book a flight before 9am for me.", "9am"),
        "zh": ("顺便说一下，不要给我订早上9点以前的航班。", "9点以前")}
AGAIN = {"en": "Please never book me a flight before 9am.", "zh": "请别给我订早上9点以前的航班。"}
HELLO = {"en": "hi", "zh": "你好"}


def chat(lang: str, *extra: str) -> list[dict[str, Any]]:
    """A conversation whose first user message states a rule, then the given user messages."""
    out: list[dict[str, Any]] = [{"role": "system", "content": "You book flights."},
                                 {"role": "user", "content": RULE[lang][0]}, {"role": "assistant", "content": "OK."}]
    for said in extra:
        out += [{"role": "user", "content": said}, {"role": "assistant", "content": "Done." if lang == "en" else "好的。"}]
    return [*out, {"role": "user", "content": "Next?" if lang == "en" else "下一步？"}]


def stated(memory: Memory, phrase: str) -> list[Any]:
    return [f for f in memory.facts.list_facts("ns") if phrase in f.text]


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_a_deleted_fact_stays_deleted_across_turns_and_restarts(config: Config, embedder: Embedder,
                                                                lang: str) -> None:
    with Memory(config, embedder=embedder) as memory:
        memory.context(ContextRequest("ns", chat(lang), window=8192, task_id="t1"))
        (fact,) = stated(memory, RULE[lang][1])
        memory.facts.delete("ns", fact.id)
        memory.context(ContextRequest("ns", chat(lang, "more" if lang == "en" else "再来"), window=8192, task_id="t1"))
        assert stated(memory, RULE[lang][1]) == []
    with Memory(config, embedder=embedder) as memory:  # a restart: nothing in process memory
        memory.context(ContextRequest("ns", chat(lang, "more", "again"), window=8192, task_id="t1"))
        assert stated(memory, RULE[lang][1]) == []
        # Said again in other words, it is the user's wish again.
        memory.context(ContextRequest("ns", [*chat(lang, "more", "again")[:-1], {"role": "user", "content": AGAIN[lang]},
                              {"role": "assistant", "content": "OK."}, {"role": "user", "content": "Go."}],
                       window=8192, task_id="t1"))
        assert len(stated(memory, RULE[lang][1])) == 1


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_an_older_message_never_rolls_a_fact_back(memory: Memory, lang: str) -> None:
    said = (["My budget is at most 500 dollars.", "Actually, make that 800 dollars.", "Actually, make that 1000 dollars."]
            if lang == "en" else ["预算不超过500元。", "算了，改成800元。", "算了，改成1000元。"])
    for text in said:
        memory.facts.observe("ns", text)
    before = memory.facts.list_facts("ns")
    assert any("1000" in f.value or "1000" in f.text for f in before)
    history: list[dict[str, Any]] = []
    for text in said:
        history += [{"role": "user", "content": text}, {"role": "assistant", "content": "OK."}]
    history.append({"role": "user", "content": "Plan it." if lang == "en" else "安排吧。"})
    memory.context(ContextRequest("ns", history, window=8192, task_id="t1"))
    after = memory.facts.list_facts("ns")
    assert not [f for f in after if "500" in f.text or "800" in f.text], after
    assert {f.id for f in before} <= {f.id for f in after}


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_a_tasks_constraints_go_with_it_and_do_not_reach_a_new_conversation(memory: Memory, lang: str) -> None:
    german = "For this task: answer only in German." if lang == "en" else "这个任务只用德语回答。"
    first = memory.context(ContextRequest("ns", [{"role": "user", "content": german}, {"role": "assistant", "content": "Ja."},
                                  {"role": "user", "content": HELLO[lang]}], window=8192, task_id="conv"))
    assert first.report.task_id == "conv" and memory.facts.list_facts("ns")
    assert {f.scope for f in memory.facts.list_facts("ns")} == {"session:conv"}
    memory.tasks.end_task("ns", "conv")
    assert memory.facts.list_facts("ns") == []
    again = memory.context(ContextRequest("ns", [{"role": "user", "content": HELLO[lang]}], window=8192, task_id="conv"))
    assert all("German" not in m["content"] and "德语" not in m["content"] for m in again.messages)


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_two_conversations_that_begin_alike_never_share_a_derived_task(memory: Memory, lang: str) -> None:
    system = {"role": "system", "content": "You are helpful."}
    german = "For this task: answer only in German." if lang == "en" else "这个任务只用德语回答。"
    one = [system, {"role": "user", "content": HELLO[lang]}, {"role": "assistant", "content": "Hello!"},
           {"role": "user", "content": german}]
    first = memory.context(ContextRequest("ns", one, window=8192))
    again = memory.context(ContextRequest("ns", [*one, {"role": "assistant", "content": "Ja."},
                                  {"role": "user", "content": "Gut." if lang == "en" else "好。"}], window=8192))
    assert again.report.task_id == first.report.task_id  # one conversation keeps its task
    other = [system, {"role": "user", "content": HELLO[lang]}, {"role": "assistant", "content": "Hello!"},
             {"role": "user", "content": "What is 2 + 2?" if lang == "en" else "2加2等于几？"}]
    second = memory.context(ContextRequest("ns", other, window=8192))
    assert second.report.task_id != first.report.task_id
    text = "\n".join(str(m["content"]) for m in second.messages)
    assert "German" not in text and "德语" not in text


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_a_refused_turn_stores_nothing(memory: Memory, lang: str) -> None:
    result = json.dumps([{"id": f"r-{k}", "text": "x " * 50} for k in range(200)])
    history: list[dict[str, Any]] = [
        {"role": "user", "content": RULE[lang][0]},
        {"role": "assistant", "content": None, "tool_calls": [call("c1", "search")]},
        {"role": "tool", "tool_call_id": "c1", "content": result},
        {"role": "user", "content": "\x00\x00\x00"}]
    with pytest.raises(ValidationError, match=r"messages\[3\] \(user\) has no content"):
        memory.context(ContextRequest("ns", history, window=4096, task_id="t1"))
    pinned = [*history[:3], {"role": "user", "content": ("long " if lang == "en" else "很长") * 3000, "pinned": True},
              {"role": "assistant", "content": "OK."}, {"role": "user", "content": "Go on."}]
    with pytest.raises(ValidationError, match="pinned"):
        memory.context(ContextRequest("ns", pinned, window=4096, task_id="t1"))
    assert memory.facts.list_facts("ns") == [] and memory.store.db.execute("SELECT count(*) FROM task_items").fetchone()[0] == 0
    assert memory.tasks.list_tasks("ns") == []


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_a_restart_answers_the_same(config: Config, embedder: Embedder, lang: str) -> None:
    """Under pressure (tool selection, a compaction) the same turn after a restart gets the same answer."""
    tools = [{"type": "function", "function": {"name": f"tool_{k}", "description": ("does thing " if lang == "en"
                                                                                    else "做某件事") * 40}}
             for k in range(20)]
    history = chat(lang, *(f"step {k}: " + "details " * 200 for k in range(30)))
    with Memory(config, embedder=embedder) as memory:
        first = memory.context(ContextRequest("ns", history, window=8192, task_id="t1", tools=tools, recall=False))
        assert not first.report.as_given and first.report.tools_left_out and first.report.summary is not None
        twice = memory.context(ContextRequest("ns", history, window=8192, task_id="t1", tools=tools, recall=False))
    with Memory(config, embedder=embedder) as memory:
        after = memory.context(ContextRequest("ns", history, window=8192, task_id="t1", tools=tools, recall=False))
    assert after.messages == twice.messages and after.tools == twice.tools
    assert after.report.prefix_hash == twice.report.prefix_hash == first.report.prefix_hash


@pytest.mark.parametrize("window", [8192, 16384])
def test_a_session_of_any_length_keeps_answering(memory: Memory, window: int) -> None:
    """120 file reads of 20 KB: every compacted span's text is put aside in parts under the item limit."""
    history: list[dict[str, Any]] = [{"role": "user", "content": "Read every file and tell me what breaks."}]
    for i in range(120):
        text = f"# file {i}\n" + "".join(f"line {j} of src/module_{i}.py: value = compute({j})\n" for j in range(500))
        history += [{"role": "assistant", "content": None,
                     "tool_calls": [call(f"c{i}", "read_file", json.dumps({"path": f"src/module_{i}.py"}))]},
                    {"role": "tool", "tool_call_id": f"c{i}", "content": text[:20_000]}]
    for turn in range(3):
        history += [{"role": "assistant", "content": f"Read {turn}."}, {"role": "user", "content": "Go on."}]
        result = memory.context(ContextRequest("ns", history, window=window, task_id="long", recall=False))
        assert result.report.tokens["total"] <= result.report.budget.available
    assert result.report.summary is not None


GIVEN = {"en": ("My order number is ZX-48213-Q if you need it later; the invoice is at /srv/billing/2026/inv-88.pdf "
                "and the tracking page is https://track.example.com/p/77Q2.", ["ZX-48213-Q", "/srv/billing/2026/inv-88.pdf",
                                                                               "https://track.example.com/p/77Q2"]),
         "zh": ("订单号是 DD20261130-8842，发票在 /srv/billing/2026/inv-88.pdf ，物流页面 https://track.example.com/p/77Q2 。",
                ["DD20261130-8842", "/srv/billing/2026/inv-88.pdf", "https://track.example.com/p/77Q2"])}


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_identifiers_given_in_passing_survive_twenty_compactions(memory: Memory, lang: str) -> None:
    said, ids = GIVEN[lang]
    history: list[dict[str, Any]] = [{"role": "system", "content": "You are a support agent."},
                                     {"role": "user", "content": said}, {"role": "assistant", "content": "Noted."}]
    made, turn = 0, 0
    while made < 20 and turn < 400:
        turn += 1
        history += [{"role": "user", "content": f"Question {turn}: " + ("tell me more about shipping. " * 20
                                                                          if lang == "en" else "再说说运输。" * 30)},
                    {"role": "assistant", "content": ("Shipping takes a few days. " * 25 if lang == "en"
                                                      else "运输需要几天。" * 40)}]
        history.append({"role": "user", "content": "And then?" if lang == "en" else "然后呢？"})
        result = memory.context(ContextRequest("ns", history, window=4096, task_id=f"ids-{lang}", recall=False))
        history.pop()
        made += bool([a for a in result.report.actions if a.kind == "compacted"])
    assert made >= 20
    latest = memory.tasks.summaries("ns", f"ids-{lang}")[-1].text
    sent = "\n".join(str(m["content"]) for m in result.messages)
    for ident in ids:
        assert ident in sent or ident in latest, ident
