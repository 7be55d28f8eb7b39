"""The threads set (bench/threads/) is what its generator writes for its seed, and its
questions point at turns that hold their answers, and at no turn that holds them by accident.

`python -m bench.quality_run --sets threads` measures retrieval on it; these checks keep the
data honest without a database."""

from __future__ import annotations

import sys
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:  # `bench` is not an installed package
    sys.path.insert(0, str(ROOT))

from bench.conversations import load_conversations, load_questions, turns_of  # noqa: E402
from bench.threads import CONVERSATIONS, QUESTIONS  # noqa: E402
from bench.threads import generate as generator  # noqa: E402
from bench.threads.checks import contains, shares_word  # noqa: E402
from bench.threads.model import problems  # noqa: E402
from bench.threads.themes import THEMES  # noqa: E402

CATEGORIES = {"detail", "temporal", "multi-hop", "who", "paraphrase"}


@pytest.fixture(scope="module")
def conversations() -> list[dict[str, Any]]:
    return load_conversations(CONVERSATIONS)


@pytest.fixture(scope="module")
def questions() -> list[dict[str, Any]]:
    return load_questions(QUESTIONS)


@pytest.fixture(scope="module")
def turns(conversations: list[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    return {t["id"]: {**t, "conversation": c["id"]} for c in conversations for t in turns_of(c)}


def test_the_committed_set_is_what_the_generator_writes_for_its_seed(
    conversations: list[dict[str, Any]], questions: list[dict[str, Any]]
) -> None:
    assert generator.generate() == (conversations, questions)
    assert generator.generate(7, 1) != generator.generate(8, 1)


def test_every_theme_is_well_formed() -> None:
    assert len(THEMES) >= 15
    assert [p for t in THEMES for p in problems(t)] == []


def test_conversations_are_long_dated_and_between_two_people(conversations: list[dict[str, Any]]) -> None:
    assert len(conversations) == generator.CONVERSATIONS
    for c in conversations:
        dates = [s["date"] for s in c["sessions"]]
        assert 18 <= len(dates) <= 30 and dates == sorted(dates), c["id"]
        assert 400 <= len(turns_of(c)) <= 650, c["id"]
        assert {t["speaker"] for t in turns_of(c)} == set(c["speakers"])


def test_questions_cite_real_turns_of_their_conversation(
    questions: list[dict[str, Any]], turns: dict[str, dict[str, Any]]
) -> None:
    counts = Counter(q["category"] for q in questions)
    assert len(questions) >= 400 and set(counts) == CATEGORIES, counts
    assert 0.15 <= counts["paraphrase"] / len(questions) <= 0.25
    for q in questions:
        cited = [*q["evidence"], *(t for alts in q.get("alternatives", {}).values() for t in alts)]
        assert all(t in turns and turns[t]["conversation"] == q["conversation"] for t in cited), q["id"]
        assert len(q["evidence"]) == (2 if q["category"] == "multi-hop" else 1), q["id"]


def test_an_answer_is_in_its_evidence_and_in_no_other_turn_of_that_person(
    conversations: list[dict[str, Any]], questions: list[dict[str, Any]], turns: dict[str, dict[str, Any]]
) -> None:
    by_speaker: dict[tuple[str, str], list[str]] = {}
    for c in conversations:
        for t in turns_of(c):
            by_speaker.setdefault((c["id"], t["speaker"]), []).append(t["id"])
    for q in (q for q in questions if q["category"] in ("detail", "paraphrase")):
        (evidence,) = q["evidence"]
        assert contains(turns[evidence]["text"], q["answer"]), q["id"]
        allowed = {evidence, *q.get("alternatives", {}).get(evidence, ())}
        mine = by_speaker[q["conversation"], turns[evidence]["speaker"]]
        elsewhere = [t for t in mine if t not in allowed and contains(turns[t]["text"], q["answer"])]
        assert not elsewhere, (q["id"], elsewhere)


def test_a_paraphrase_shares_no_content_word_with_its_evidence(
    conversations: list[dict[str, Any]], questions: list[dict[str, Any]], turns: dict[str, dict[str, Any]]
) -> None:
    names = {n.lower() for c in conversations for n in c["speakers"]}
    for q in (q for q in questions if q["category"] == "paraphrase"):
        assert not shares_word(q["question"], [turns[t]["text"] for t in q["evidence"]], names), q["id"]
