"""Context turns side by side (issue 36): what only reads (retrieval, the new messages read for facts, the tools'
vectors) runs before the store's writer lock, so turns no longer wait for each other's retrieval; each still gets
what it gets alone, a one-shot item two turns chose is shown by one, and a turn refused after its retrieval stores
nothing; in English and Chinese, on both backends."""

from __future__ import annotations

import json
import threading
from collections.abc import Mapping
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import pytest

from memory import TextInput
from memory.context import Assembler, ContextRequest, ContextResult
from memory.errors import ValidationError
from memory.recall.engine import Recaller
from memory.recall.model import RecallResult
from memory.service import Memory
from tests.memory.context.chat import call

DOCUMENT = {
    "en": ("The La Rance tidal power station in Brittany opened in 1966; its 24 bulb turbines give a peak output of "
           "240 MW, and its barrage carries a road between Saint-Malo and Dinard."),
    "zh": "朗斯潮汐电站于1966年在布列塔尼投入运行，装有24台灯泡式水轮机，峰值功率240兆瓦，大坝上还有一条公路。",
}
QUESTION = {"en": "When did the La Rance tidal power station open?", "zh": "朗斯潮汐电站哪一年投入运行？"}
ONE_SHOT = {"en": "The visitor centre of La Rance is closed today for repairs.", "zh": "朗斯电站的游客中心今天因维修关闭。"}
RULE = {"en": "By the way, never book anything before 9am for me.", "zh": "顺便说一下，不要给我订早上9点以前的任何东西。"}
# The default encoder is English: a Chinese passage alone in its namespace scores low, and the tests ask for less.
FLOOR = {"en": None, "zh": 0.05}


class Recording:
    """The facade's recall for context over the test's Memory, noting each call once it has answered: whether it
    consumed, and the one-shot items it showed. The Assembler takes its recall as an argument: this is that seam."""

    def __init__(self, memory: Memory) -> None:
        self._recaller = Recaller(memory.facts, memory.tasks, memory.experience, memory.counter, memory.config,
                                  memory.clock)
        self.calls: list[tuple[bool, tuple[str, ...]]] = []
        self._changed = threading.Condition()

    def __call__(self, namespace: str, query: str, budget: int, task_id: str | None,
                 filters: Mapping[str, Any] | None, min_score: float | None, *, consume: bool) -> RecallResult:
        result = self._recaller.recall(namespace, query, budget, task_id=task_id, filters=filters,
                                       min_score=min_score, for_context=True, consume=consume)
        with self._changed:
            self.calls.append((consume, result.one_shot))
            self._changed.notify_all()
        return result

    def wait_ahead(self, count: int) -> bool:
        """Whether `count` recalls that consume nothing (the pass before the lock) have answered, within a minute."""
        with self._changed:
            return self._changed.wait_for(lambda: sum(not c for c, _ in self.calls) >= count, timeout=60)


def assembler(memory: Memory, recall: Recording) -> Assembler:
    """An Assembler over the test's Memory, as the facade builds its own, recalling through `recall`."""
    return Assembler(memory.counter, memory.facts, memory.tasks, recall, memory.config, memory.store, None,
                     memory.caches)


def shows(result: ContextResult, text: str) -> bool:
    return any(text in str(m["content"]) for m in result.messages)


def conversation(lang: str, turns: int) -> list[dict[str, Any]]:
    """A rule said in passing, then `turns` rounds of a search and its long result, then the question."""
    out: list[dict[str, Any]] = [{"role": "system", "content": "You plan trips."},
                                 {"role": "user", "content": RULE[lang]}, {"role": "assistant", "content": "OK."}]
    for t in range(turns):
        found = [{"id": f"r-{t}-{k}", "text": DOCUMENT[lang]} for k in range(12)]
        out += [{"role": "user", "content": f"Search {t}." if lang == "en" else f"第{t}次搜索。"},
                {"role": "assistant", "content": None, "tool_calls": [call(f"c{t}", "search", json.dumps({"t": t}))]},
                {"role": "tool", "tool_call_id": f"c{t}", "content": json.dumps(found, ensure_ascii=False)},
                {"role": "assistant", "content": "Found it." if lang == "en" else "找到了。"}]
    return [*out, {"role": "user", "content": QUESTION[lang]}]


def prepared(memory: Memory, namespace: str, lang: str) -> None:
    """The namespace's document and a one-shot item of its task."""
    memory.add_document(namespace, TextInput(DOCUMENT[lang], title="La Rance", doc_id="la-rance"))
    memory.tasks.add(namespace, "t1", "observation", ONE_SHOT[lang], ephemeral=True)


def test_turns_assembled_side_by_side_match_what_each_gets_alone(memory: Memory) -> None:
    recording = Recording(memory)
    turns_of = assembler(memory, recording)

    def turn(namespace: str, lang: str, turns: int) -> ContextResult:
        return turns_of.assemble(ContextRequest(namespace, conversation(lang, turns), window=2048, task_id="t1",
                                                min_score=FLOOR[lang]))

    setups = [(f"{lang}-{n}", lang) for lang in ("en", "zh") for n in range(2)]
    for namespace, lang in setups:
        prepared(memory, f"alone-{namespace}", lang)
        prepared(memory, f"together-{namespace}", lang)
    for turns in (1, 2, 3):  # a growing conversation: offloads, a compaction, the one-shot item taken once
        alone = [turn(f"alone-{namespace}", lang, turns) for namespace, lang in setups]
        start = threading.Barrier(len(setups))

        def together(setup: tuple[str, str], turns: int = turns, start: threading.Barrier = start) -> ContextResult:
            start.wait()
            return turn(f"together-{setup[0]}", setup[1], turns)

        with ThreadPoolExecutor(max_workers=len(setups)) as pool:
            side_by_side = list(pool.map(together, setups))
        for one, other, (_, lang) in zip(alone, side_by_side, setups, strict=True):
            assert other.messages == one.messages and other.tools == one.tools
            assert other.report.tokens == one.report.tokens and other.report.actions == one.report.actions
            assert shows(one, ONE_SHOT[lang]) == (turns == 1) and shows(one, "1966")
    # Every turn retrieved once, before the lock: none had to choose again under it.
    assert len(recording.calls) == 2 * 3 * len(setups) and not any(c for c, _ in recording.calls)


def question(lang: str) -> ContextRequest:
    """The user's question in task t1 of namespace ns, with the floor that lets the prepared memory answer it."""
    return ContextRequest("ns", [{"role": "user", "content": QUESTION[lang]}], window=8192, task_id="t1",
                          min_score=FLOOR[lang])


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_a_turn_retrieves_while_another_holds_the_writer_lock(memory: Memory, lang: str) -> None:
    prepared(memory, "ns", lang)
    recording = Recording(memory)
    request = question(lang)
    with ThreadPoolExecutor(max_workers=1) as pool:
        with memory.store.transaction():  # another writer holds the store-wide lock
            pending = pool.submit(assembler(memory, recording).assemble, request)
            assert recording.wait_ahead(1), "the turn did not retrieve while another writer held the lock"
            assert not pending.done()  # and waits for the lock to store what it decided
        result = pending.result(timeout=120)
    assert shows(result, "1966") and shows(result, ONE_SHOT[lang])
    ((consumed, chosen),) = recording.calls
    assert not consumed and len(chosen) == 1
    assert memory.tasks.list_items("ns", "t1") == []  # the one-shot item was taken under the lock


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_a_one_shot_item_two_turns_chose_at_once_is_shown_by_one(memory: Memory, lang: str) -> None:
    prepared(memory, "ns", lang)
    recording = Recording(memory)
    request = question(lang)
    turns = assembler(memory, recording)
    with ThreadPoolExecutor(max_workers=2) as pool:
        with memory.store.transaction():  # both turns choose before either may take
            pending = [pool.submit(turns.assemble, request) for _ in range(2)]
            assert recording.wait_ahead(2)
        results = [p.result(timeout=120) for p in pending]
    assert sorted(shows(r, ONE_SHOT[lang]) for r in results) == [False, True]
    assert all(shows(r, "1966") for r in results)  # the turn that lost the item chose again, the rest still there
    assert [c for c, shown in recording.calls] == [False, False, True] and recording.calls[0][1]
    assert memory.tasks.list_items("ns", "t1") == []


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_a_turn_whose_own_message_changes_its_plan_retrieves_again_under_the_lock(memory: Memory, lang: str) -> None:
    """The pass before the lock plans with the facts as stored: a pinned budget in the constraints block. The turn's
    message sets the task's own budget, which replaces it there, so the room differs and the turn retrieves again."""
    prepared(memory, "ns", lang)
    (item,) = memory.tasks.list_items("ns", "t1")
    memory.facts.observe("ns", "My budget is at most 500 dollars." if lang == "en" else "预算不超过500元。")
    said = (f"My budget is at most 800 dollars. {QUESTION[lang]}" if lang == "en"
            else f"预算不超过800元。{QUESTION[lang]}")
    recording = Recording(memory)
    result = assembler(memory, recording).assemble(ContextRequest("ns", [{"role": "user", "content": said}],
                                                                  window=8192, task_id="t1", min_score=FLOOR[lang]))
    assert recording.calls == [(False, (item.key,)), (True, (item.key,))]
    assert shows(result, ONE_SHOT[lang]) and not shows(result, "500")
    assert result.report.tokens["constraints"] == 0 and memory.tasks.list_items("ns", "t1") == []


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_a_turn_refused_after_its_retrieval_stores_nothing(memory: Memory, lang: str) -> None:
    """The history's pinned messages do not fit: the turn is refused in its last step, under the lock, after it
    read its facts, took its one-shot item, offloaded a result and compacted; all of it is rolled back."""
    prepared(memory, "ns", lang)
    (item,) = memory.tasks.list_items("ns", "t1")
    recording = Recording(memory)
    history = conversation(lang, 3)
    pinned = {"role": "user", "content": ("long " if lang == "en" else "很长") * 1500, "pinned": True}
    refused = [*history[:-1], pinned, {"role": "assistant", "content": "OK."}, history[-1]]
    with pytest.raises(ValidationError, match="pinned messages need"):
        assembler(memory, recording).assemble(ContextRequest("ns", refused, window=2048, task_id="t1",
                                                             min_score=FLOOR[lang]))
    assert recording.calls == [(False, (item.key,))]  # the item was chosen, and taken under the lock
    assert [i.key for i in memory.tasks.list_items("ns", "t1")] == [item.key]  # no offload, the item back
    assert memory.facts.list_facts("ns") == [] and memory.tasks.summaries("ns", "t1") == []
    assert memory.store.db.execute("SELECT count(*) FROM facts_observed").fetchone()[0] == 0
    accepted = memory.context(ContextRequest("ns", history, window=2048, task_id="t1", min_score=FLOOR[lang]))
    assert shows(accepted, ONE_SHOT[lang]) and memory.facts.list_facts("ns")
