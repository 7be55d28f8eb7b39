"""Recall by meaning without an embedding model (memroute/store/key_meanings.py): hybrid
recall finds a memory that shares no word with the question ("hobby" → "board games")
from the key's own memories only, follows edits and deletes from any process, honours the
recall's filters, and is switched off by MEMROUTE_MEANINGS=0."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest
from gateways import Gateway
from memories import open_configured
from small_talk import FILLER

from memroute import Memory
from memroute.models.records import RetrievedItem
from memroute.store.key_meanings import KeyMeanings

HOBBY = "I've gotten really into board games lately"
QUESTION = "What hobby have I taken up?"


@pytest.fixture
def mem(tmp_path: Path) -> Iterator[Memory]:
    with open_configured(tmp_path / "m.db", model=False) as memory:  # the keyword tiers are checked
        yield memory


def _recall(mem: Memory, owner: str, question: str = QUESTION, **kwargs: object) -> list[RetrievedItem]:
    return mem.retrieve(owner, question, strategy="hybrid", record_access=False, **kwargs)  # type: ignore[arg-type]


def _matched(items: list[RetrievedItem]) -> list[str]:
    """What the question matched (the newest memories that only fill the budget left out)."""
    return [i.memory.content for i in items if i.tier != "recent"]


def test_a_question_finds_what_answers_it_in_no_word_it_shares(mem: Memory) -> None:
    for line in [HOBBY, *FILLER]:
        mem.add("k", line)
    first = _recall(mem, "k")[0]
    assert (first.memory.content, first.tier) == (HOBBY, "meaning")
    assert first.fts_score is None and first.vec_score is not None and 0.2 <= first.vec_score <= 1.0
    preview = mem.retrieve_preview("k", QUESTION, strategy="hybrid")
    assert "meanings from word vectors" in (preview.resolution.fallback_reason or "")


def test_switched_off_the_question_matches_nothing(tmp_path: Path) -> None:
    with open_configured(tmp_path / "m.db", meanings=False, model=False) as mem:
        for line in [HOBBY, *FILLER]:
            mem.add("k", line)
        assert _matched(_recall(mem, "k")) == []
        assert mem.engine_status().keyword.meanings == "off"


def test_meanings_come_from_the_keys_own_memories_only(mem: Memory) -> None:
    for line in FILLER:
        mem.add("a", line)
    mem.add("b", HOBBY)
    mem.add("user:alice", HOBBY)
    assert HOBBY not in [i.memory.content for i in _recall(mem, "a")]
    assert _matched(_recall(mem, "b")) == [HOBBY]


def test_an_edited_memory_is_found_by_its_new_meaning_and_a_deleted_one_never(mem: Memory) -> None:
    for line in FILLER:
        mem.add("k", line)
    bus = mem.add("k", "the bus was packed, everyone commutes at the same time")
    assert HOBBY not in _matched(_recall(mem, "k"))
    mem.update(bus.id, content=HOBBY)
    assert _matched(_recall(mem, "k"))[0] == HOBBY
    mem.delete(bus.id)
    assert HOBBY not in [i.memory.content for i in _recall(mem, "k")]


def test_what_another_process_adds_is_found_by_meaning_at_once(tmp_path: Path) -> None:
    with (
        open_configured(tmp_path / "m.db", model=False) as reader,
        open_configured(tmp_path / "m.db") as writer,
    ):
        for line in FILLER:
            reader.add("k", line)
        assert _matched(_recall(reader, "k")) == []
        hobby = writer.add("k", HOBBY)
        assert _matched(_recall(reader, "k")) == [HOBBY]
        writer.delete(hobby.id)
        assert _matched(_recall(reader, "k")) == []


def test_a_memory_outside_the_recalls_session_is_not_found_by_meaning(mem: Memory) -> None:
    for line in FILLER:
        mem.add("k", line, session_id="s1")
    mem.add("k", HOBBY, session_id="s2")
    assert HOBBY not in [i.memory.content for i in _recall(mem, "k", scope="session", session_id="s1")]
    assert _matched(_recall(mem, "k", scope="session", session_id="s2")) == [HOBBY]


def test_a_memory_keeps_its_meaning_when_others_are_dropped_around_it() -> None:
    """Dropping a memory moves the last row into its place: every row left must still be
    the vector of its own memory, as if the key had been made from scratch."""
    rng = np.random.default_rng(7)
    words = rng.normal(size=(40, 16)).astype(np.float32)
    words /= np.linalg.norm(words, axis=1, keepdims=True)
    terms = {rowid: {f"w{i}": 1 for i in rng.choice(40, size=4, replace=False)} for rowid in range(1, 31)}

    def made(rowids: list[int]) -> KeyMeanings:
        meanings = KeyMeanings()
        for rowid in rowids:
            meanings.add(rowid, len(terms[rowid]))
        meanings.make(lambda r: terms[r], lambda stem: int(stem[1:]), words, lambda stem: 1)
        return meanings

    kept = list(terms)
    changed = made(kept)
    for rowid in (1, 30, 15, 2, 29):
        changed.drop(rowid)
        kept.remove(rowid)
    fresh = made(kept)
    for rowid in kept:
        query = words[int(next(iter(terms[rowid]))[1:])]
        assert dict(changed.nearest(query, 30)).get(rowid) == pytest.approx(
            dict(fresh.nearest(query, 30)).get(rowid)
        )


def test_through_the_gateway_what_answers_in_other_words_is_injected(gateway: Gateway) -> None:
    client = gateway.client()
    for line in [HOBBY, *FILLER[:3]]:
        client.chat.completions.create(model="echo-1", messages=[{"role": "user", "content": line}])
    assert gateway.memory.wait_for_extraction(10)
    gateway.wait_for(lambda: gateway.memory.extraction_queue().pending == 0)
    raw = client.chat.completions.with_raw_response.create(
        model="echo-1",
        messages=[{"role": "user", "content": QUESTION}],
        extra_headers={"x-memroute-debug": "true"},
    )
    first = raw.headers["x-memroute-memory-ids"].split(",")[0]
    assert HOBBY in gateway.memory.get(first).content


@pytest.mark.parametrize("meanings", [True, False])
def test_with_an_embedding_model_hybrid_weighs_meanings_too(tmp_path: Path, meanings: bool) -> None:
    # The hashing source (character trigrams) sees nothing of "hobby" in "board games".
    with open_configured(tmp_path / "m.db", meanings=meanings, model=False) as mem:
        for line in [HOBBY, *FILLER]:
            mem.add("k", line)
        mem.update_settings(enabled=True, embedding_source="hashing")
        assert mem.reindex(force=True, wait=True).errors == 0
        items = _recall(mem, "k", limit=3)
        assert {i.tier for i in items} == {"hybrid-rrf"}
        assert (items[0].memory.content == HOBBY) is meanings


def test_a_configured_vector_weight_holds_for_every_source(tmp_path: Path) -> None:
    # The hashing source's cosine counts 0.1 of hybrid's score unless told otherwise
    # (MEMORY_HYBRID_VECTOR_WEIGHT): weighed 0.9, its favourite leads, not the meaning.
    with open_configured(tmp_path / "m.db", hybrid_vector_weight=0.9) as mem:
        for line in [HOBBY, *FILLER]:
            mem.add("k", line)
        mem.update_settings(enabled=True, embedding_source="hashing")
        assert mem.reindex(force=True, wait=True).errors == 0
        items = _recall(mem, "k", limit=3)
        assert items[0].memory.content != HOBBY
        assert items[0].vec_score == max(i.vec_score or 0.0 for i in items)
