"""Keyword search with related words (memroute/store/related_words.py): a question finds
the memory that answers it in other words ("instrument" → "banjo"), from the key's own
words only, kept up to date whoever writes, and switched off by MEMROUTE_RELATED_WORDS=0."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest
from gateways import Gateway
from memories import open_configured
from small_talk import FILLER

from memroute import Memory
from memroute.embeddings.word_vectors import WordVectors, machine_cache_dir
from memroute.store.key_index import ADMIT_AFTER

SAID = {
    "banjo": "practising the banjo every evening, the neighbours love me",
    "dog": "we adopted a dog last year, the name is Biscuit",
    "phone": "my iPhone 12 battery lasts about an hour",
    "bedroom": "yesterday I painted the spare bedroom green",
}
QUESTIONS = {
    "Which instrument do I play?": "banjo",
    "What pet do I have?": "dog",
    "Which mobile do I use?": "phone",
    "Which room did I redecorate?": "bedroom",
}


@pytest.fixture
def mem(tmp_path: Path) -> Iterator[Memory]:
    with open_configured(tmp_path / "m.db", model=False) as memory:  # the keyword tiers are checked
        yield memory


def _seed(mem: Memory, owner: str, lines: list[str]) -> None:
    for line in lines:
        mem.add(owner, line)
    for _ in range(ADMIT_AFTER):  # held in process from now on (the recalls before read SQL)
        mem.retrieve_preview(owner, "anything", strategy="semantic")


def _keyword_matches(mem: Memory, owner: str, question: str) -> list[str]:
    found = mem.retrieve_preview(owner, question, strategy="semantic", limit=10)
    return [i.memory.content for i in found.items if i.fts_score is not None]


def test_a_question_finds_the_memory_that_answers_it_in_other_words(mem: Memory) -> None:
    _seed(mem, "k", [*SAID.values(), *FILLER])
    for question, answer in QUESTIONS.items():
        matches = _keyword_matches(mem, "k", question)
        assert matches and matches[0] == SAID[answer], (question, matches)


def test_the_words_asked_still_rank_above_related_ones(mem: Memory) -> None:
    _seed(mem, "k", ["my guitar needs new strings", "the instrument shop closes at six", *FILLER])
    assert (
        _keyword_matches(mem, "k", "Where is the instrument shop?")[0] == "the instrument shop closes at six"
    )


def test_a_person_who_chats_slowly_gets_related_words_from_the_first_question(mem: Memory) -> None:
    for line in [SAID["banjo"], *FILLER]:
        mem.add("slow", line)
    assert _keyword_matches(mem, "slow", "Which instrument do I play?")[0] == SAID["banjo"]


def test_related_words_come_from_the_keys_own_memories_only(mem: Memory) -> None:
    _seed(mem, "a", FILLER)
    _seed(mem, "b", [SAID["banjo"], *FILLER])
    assert _keyword_matches(mem, "a", "Which instrument do I play?") == []
    assert _keyword_matches(mem, "b", "Which instrument do I play?")[0] == SAID["banjo"]


def test_switched_off_only_the_words_asked_match(tmp_path: Path) -> None:
    with open_configured(tmp_path / "m.db", related_words=False, model=False) as mem:
        _seed(mem, "k", [*SAID.values(), *FILLER])
        assert _keyword_matches(mem, "k", "Which instrument do I play?") == []


def test_what_another_process_adds_is_related_at_once(tmp_path: Path) -> None:
    with (
        open_configured(tmp_path / "m.db", model=False) as reader,
        open_configured(tmp_path / "m.db") as writer,
    ):
        _seed(reader, "k", FILLER)
        assert _keyword_matches(reader, "k", "Which instrument do I play?") == []
        cello = writer.add("k", "so I bought a second-hand cello")
        assert _keyword_matches(reader, "k", "Which instrument do I play?") == [cello.content]
        writer.delete(cello.id)
        assert _keyword_matches(reader, "k", "Which instrument do I play?") == []


def test_a_question_asked_again_finds_what_a_fresh_start_finds(tmp_path: Path) -> None:
    # A running process remembers the words' vectors and each question word's near words;
    # as the key learns new words, asking again must find what a process started afresh
    # (nothing remembered) finds.
    questions = [*QUESTIONS, "Which instrument and which pet do I have?"]
    with open_configured(tmp_path / "m.db", model=False) as running:
        _seed(running, "k", FILLER)
        for question in questions:
            assert _keyword_matches(running, "k", question) == []
        cello = "so I bought a second-hand cello"
        for said in [*SAID.values(), cello, "our cat sleeps on the phone charger"]:
            running.add("k", said)
            asked = {question: _keyword_matches(running, "k", question) for question in questions}
            with open_configured(tmp_path / "m.db", model=False) as fresh:
                for _ in range(ADMIT_AFTER):
                    fresh.retrieve_preview("k", "anything", strategy="semantic")
                assert {question: _keyword_matches(fresh, "k", question) for question in questions} == asked
        assert set(asked["Which instrument do I play?"][:2]) == {SAID["banjo"], cello}


def test_word_vectors_are_the_same_whatever_is_remembered() -> None:
    words = ["banjo", "cello", "dog", "banjo", "zzqx", "iphone", "dog", "cello", "pet"]
    plain = WordVectors([machine_cache_dir()], kept=len(words)).vectors(words)
    assert plain is not None and plain.shape[0] == len(words)
    small = WordVectors([machine_cache_dir()], kept=2)  # rows replaced all the time
    for start in range(len(words)):
        rows = small.vectors(words[start:] + words[:start])
        assert rows is not None
        assert np.array_equal(rows, np.roll(plain, -start, axis=0))


def test_through_the_gateway_what_was_said_in_other_words_is_injected_first(gateway: Gateway) -> None:
    client = gateway.client()
    for line in [SAID["banjo"], *FILLER[:3]]:
        client.chat.completions.create(model="echo-1", messages=[{"role": "user", "content": line}])
    assert gateway.memory.wait_for_extraction(10)
    gateway.wait_for(lambda: gateway.memory.extraction_queue().pending == 0)
    for _ in range(ADMIT_AFTER + 1):
        raw = client.chat.completions.with_raw_response.create(
            model="echo-1",
            messages=[{"role": "user", "content": "Which instrument do I play?"}],
            extra_headers={"x-memroute-debug": "true"},
        )
    first = raw.headers["x-memroute-memory-ids"].split(",")[0]
    assert gateway.memory.get(first).content == SAID["banjo"]
