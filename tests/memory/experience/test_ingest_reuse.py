"""No chunk text is embedded twice: an edited document re-embeds only its changed chunks, a passage the namespace
holds already is reused (a turn's own embedding, never its mixed one), and add_texts embeds many documents
together, answering for each what add_text would, atomically."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pytest

from memory.config import Config
from memory.embedding import Embedder
from memory.errors import ConflictError, StoreError, ValidationError
from memory.experience import DocumentResult, ExperienceMemory, MemoryTurn
from memory.experience.dense import VectorIndex
from memory.experience.memory import TextInput
from memory.store import Store
from memory.tokens import get_counter
from tests.conftest import ManualClock
from tests.memory.experience.conftest import CHINESE, ENGLISH, CountingEncoder

# Sections under target_tokens: each is one chunk ("heading\ntext"), cut without a model call.
SECTIONS = {
    "en": {"Loader": ENGLISH["loader"], "Deploy": ENGLISH["deploy"], "Cache": ENGLISH["cache"],
           "Garden": ENGLISH["garden"]},
    "zh": {"饺子": CHINESE["dumpling"], "铁路": CHINESE["railway"], "熊猫": CHINESE["panda"], "茶": CHINESE["tea"]},
}
EDITS = {"en": ("Deploy", "Deployments now run on Tuesdays, after the release notes are approved."),
         "zh": ("铁路", "京沪高速铁路最高时速已提高到三百八十公里，每天开行数百列列车。")}

# One section of three paragraphs, over target_tokens: chunking embeds its sentences to find the topic shifts.
LONG = {
    "en": [
        "Tomatoes need six hours of sun a day and deep watering twice a week. Mulch keeps the soil moist and cool. "
        "Pinch out the side shoots so the plant puts its strength into the fruit. Feed it with potash once the "
        "first flowers open. A cane or a cage keeps the heavy stems from snapping in the wind.",
        "The night train from Vienna reaches Venice early in the morning. Sleeper cabins hold two or four berths "
        "and breakfast is served in the cabin. Tickets open six months ahead and the cheapest sell out first. "
        "Border checks happen on board, so passengers can sleep through them. The train crosses the Alps by night.",
        "The embedding cache lives in a SQLite file keyed by model name and text hash. A miss encodes the text and "
        "writes the vector back in the same transaction. Entries of an old model are dropped when the model "
        "changes. The cache is shared by every worker of the service. Its size is capped at a million vectors.",
    ],
    "zh": [
        "西红柿每天需要六个小时的阳光，每周要浇两次透水。在土壤表面铺一层稻草可以保持水分和凉爽。及时摘掉侧芽，"
        "让植株把养分集中到果实上。开花以后每隔两周施一次钾肥。用竹竿或者铁架固定，茎秆就不会被大风吹断。",
        "从北京开往上海的夜班卧铺列车第二天清晨到站。每个包厢有两个或四个铺位，早餐可以送到包厢里。车票提前十五天"
        "开售，便宜的铺位最先卖完。列车员会在上车时检票，乘客夜里可以安心睡觉。列车在夜里穿过山东和江苏。",
        "向量缓存保存在一个SQLite文件里，按模型名称和文本哈希查找。没有命中时先计算向量，再在同一个事务里写回缓存。"
        "换了模型以后，旧模型的缓存条目会被删除。服务的所有进程共用这个缓存。缓存最多保存一百万个向量。",
    ],
}
SMALL = {"target_tokens": 80, "max_tokens": 160, "min_tokens": 20}  # chunks of about a paragraph of LONG
LONG_EDIT = {"en": ("Its size is capped at a million vectors.", "It never holds more than two million vectors."),
             "zh": ("缓存最多保存一百万个向量。", "缓存最多可以保存两百万个向量。")}


def markdown(sections: dict[str, str]) -> str:
    return "\n\n".join(f"# {heading}\n\n{text}" for heading, text in sections.items())


def stored_chunks(store: Store, namespace: str, doc_id: str) -> list[str]:
    rows = store.db.execute("SELECT heading, text FROM chunks WHERE namespace = ? AND doc_id = ? ORDER BY ordinal",
                            [namespace, doc_id]).fetchall()
    return [f"{heading}\n{text}" if heading else text for heading, text in rows]


def stage_totals(calls: Sequence[tuple[str, int, int]]) -> dict[str, int]:
    """Texts embedded per stage of add_text's progress: each call reports (stage, done, texts in the call)."""
    totals: dict[str, int] = {}
    for stage, _, total in calls:
        totals[stage] = max(totals.get(stage, 0), total)
    return totals


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_an_edited_document_re_embeds_only_its_changed_section(
    experience: ExperienceMemory, encoder: CountingEncoder, lang: str
) -> None:
    first = experience.add_text("ns", TextInput(markdown(SECTIONS[lang]), doc_id="notes"))
    assert (first.status, first.chunks) == ("created", 4)
    assert len(encoder.embedded) == 4  # one call, one text per section, no sentence pass
    heading, text = EDITS[lang]
    encoder.embedded.clear()
    again = experience.add_text("ns", TextInput(markdown({**SECTIONS[lang], heading: text}), doc_id="notes"))
    assert (again.status, again.chunks) == ("updated", 4)
    assert encoder.embedded == [f"{heading}\n{text}"]


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_an_edited_long_document_embeds_no_chunk_text_it_held_before(
    store: Store, encoder: CountingEncoder, config: Config, clock: ManualClock, lang: str
) -> None:
    """Its sentences are embedded again to find the topic shifts; of its chunks, only those with new text."""
    experience = ExperienceMemory(store, encoder, get_counter(), config.replace("chunking", **SMALL), clock)
    text = "\n\n".join(LONG[lang])
    experience.add_text("ns", TextInput(text, doc_id="long"))
    before = stored_chunks(store, "ns", "long")
    assert len(before) >= 2
    old, new = LONG_EDIT[lang]
    calls: list[tuple[str, int, int]] = []
    encoder.embedded.clear()
    result = experience.add_text("ns", TextInput(text.replace(old, new), doc_id="long"),
                                 progress=lambda *call: calls.append(call))  # type: ignore[arg-type]
    after = stored_chunks(store, "ns", "long")
    changed = [c for c in after if c not in before]
    assert result.status == "updated" and 1 <= len(changed) < len(after)
    assert stage_totals(calls).get("embedding", 0) == len(changed)
    assert [t for t in encoder.embedded if t in after and t not in before] == changed


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_a_passage_another_document_holds_is_not_embedded_again(
    experience: ExperienceMemory, store: Store, encoder: CountingEncoder, embedder: Embedder, lang: str
) -> None:
    sections = SECTIONS[lang]
    experience.add_text("ns", TextInput(markdown(sections), doc_id="a"))
    heading = next(iter(sections))
    encoder.embedded.clear()
    experience.add_text("ns", TextInput(markdown({heading: sections[heading]}), doc_id="b"))
    assert encoder.embedded == []
    shared = f"{heading}\n{sections[heading]}"
    vector = VectorIndex(store).fetch("ns", [_chunk_id(store, "ns", "b")])
    np.testing.assert_allclose(next(iter(vector.values())), embedder.encode_documents([shared])[0], atol=1e-5)
    experience.add_text("other", TextInput(markdown({heading: sections[heading]}), doc_id="b"))
    assert encoder.embedded == [shared]  # another namespace's vectors are never read


def test_a_document_reuses_a_turns_own_embedding_never_its_mixed_vector(
    store: Store, encoder: CountingEncoder, config: Config, clock: ManualClock, embedder: Embedder
) -> None:
    experience = ExperienceMemory(store, encoder, get_counter(), config.replace("retrieval", turn_context=0.5),
                                  clock)
    talk = [("Anna", "I moved to Berlin last May."), ("Ben", "Did you find a flat near the river?"),
            ("Anna", "Yes, a small one in Kreuzberg.")]
    experience.add_memories("ns", [MemoryTurn(text=t, speaker=s, timestamp=f"2026-05-01T09:00:0{i}Z")
                                   for i, (s, t) in enumerate(talk)])
    encoder.embedded.clear()
    said = "Ben: Did you find a flat near the river?"  # the middle turn's text as it is embedded
    experience.add_text("ns", TextInput(said, doc_id="quote"))
    assert encoder.embedded == []
    found = VectorIndex(store).fetch("ns", [_chunk_id(store, "ns", "quote")])
    np.testing.assert_allclose(next(iter(found.values())), embedder.encode_documents([said])[0], atol=1e-5)


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_add_texts_embeds_every_document_in_one_call_and_answers_as_add_text_would(
    experience: ExperienceMemory, encoder: CountingEncoder, lang: str
) -> None:
    sections = SECTIONS[lang]
    headings = list(sections)
    one, two = markdown(dict(list(sections.items())[:2])), markdown(dict(list(sections.items())[1:3]))
    outcomes = experience.add_texts("ns", [
        TextInput(one, derived_id="one.md"),
        TextInput(two, derived_id="two.md"),  # shares a section with one.md
        TextInput(one, derived_id="copy.md"),  # the same content as one.md: answered by it
        TextInput("  \n", derived_id="blank.md"),
        TextInput(long := "\n\n".join(LONG[lang]), derived_id="long.md"),
    ])
    assert [o.status if isinstance(o, DocumentResult) else type(o) for o in outcomes] == [
        "created", "created", "unchanged", ValidationError, "created"]
    assert isinstance(outcomes[2], DocumentResult) and outcomes[2].doc_id == "one.md"
    chunk_texts = [t for t in encoder.embedded if t.split("\n")[0] in headings]  # the sections' chunks
    assert sorted(chunk_texts) == sorted(f"{h}\n{sections[h]}" for h in headings[:3])
    again = experience.add_texts("ns", [TextInput(one, derived_id="one.md"), TextInput(long, derived_id="long.md"),
                                        TextInput(one + "\n\nmore", derived_id="one.md")])
    assert [o.status if isinstance(o, DocumentResult) else type(o) for o in again] == [
        "unchanged", "unchanged", ConflictError]


def test_a_failed_batch_write_stores_none_of_its_documents(
    experience: ExperienceMemory, store: Store
) -> None:
    experience.add_text("ns", TextInput(markdown(SECTIONS["en"]), doc_id="kept"))
    vectors = experience._writer.vectors
    ids_before = vectors.ids("ns")

    def refuse(namespace: str, ids: Sequence[str], batch: np.ndarray) -> None:
        raise StoreError("Chroma refused the write")

    vectors.add = refuse  # type: ignore[method-assign]
    outcomes = experience.add_texts("ns", [
        TextInput(markdown(SECTIONS["zh"]), doc_id="new"),
        TextInput(markdown({**SECTIONS["en"], "Deploy": EDITS["en"][1]}), doc_id="kept"),
    ])
    assert all(isinstance(o, StoreError) for o in outcomes)
    assert [d.doc_id for d in experience.list_documents("ns")] == ["kept"]
    assert experience.get_document("ns", "kept").version == 1
    assert vectors.ids("ns") == ids_before
    assert store.db.execute("SELECT count(*) FROM chunks WHERE namespace = 'ns'").fetchone()[0] == 4


def _chunk_id(store: Store, namespace: str, doc_id: str) -> str:
    row = store.db.execute("SELECT id FROM chunks WHERE namespace = ? AND doc_id = ?", [namespace, doc_id]).fetchone()
    return str(row[0])
