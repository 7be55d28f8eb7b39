"""The conversation-recall set (bench/conversations/) is what its generator writes, is big and
varied enough to measure memory on, and the bench's scoring reads provenance as it should.

`python -m bench.conversation_recall` replays the set through the gateway; these checks keep
the data honest and the scoring right without a server."""

from __future__ import annotations

import re
import sys
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:  # `bench` is not an installed package
    sys.path.insert(0, str(ROOT))

from bench.conversation_recall import select  # noqa: E402
from bench.conversations import generate as generator  # noqa: E402
from bench.conversations import load_conversations, load_questions, turns_of  # noqa: E402
from bench.quality import STOP_WORDS  # noqa: E402
from bench.recall_score import memory_turns, score_question, summarise  # noqa: E402

CATEGORIES = {"single-hop", "temporal", "changed-mind", "multi-hop", "who"}
REQUEST_ID = re.compile(r"^[A-Za-z0-9._:-]{1,128}$")
WORD = re.compile(r"[a-z0-9]+")


@pytest.fixture(scope="module")
def conversations() -> list[dict[str, Any]]:
    return load_conversations()


@pytest.fixture(scope="module")
def questions() -> list[dict[str, Any]]:
    return load_questions()


@pytest.fixture(scope="module")
def turns(conversations: list[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    return {t["id"]: {**t, "conversation": c["id"]} for c in conversations for t in turns_of(c)}


def test_the_committed_set_is_what_the_generator_writes(
    conversations: list[dict[str, Any]], questions: list[dict[str, Any]]
) -> None:
    assert generator.generate() == (conversations, questions)


def test_every_conversation_is_long_multi_session_and_between_two_named_people(
    conversations: list[dict[str, Any]],
) -> None:
    assert len(conversations) >= 10
    for c in conversations:
        sessions = c["sessions"]
        assert len(sessions) >= 8, c["id"]
        assert sum(len(s["turns"]) for s in sessions) >= 150, c["id"]
        dates = [s["date"] for s in sessions]
        assert dates == sorted(dates) and len(set(dates)) == len(dates), c["id"]
        assert len(set(c["speakers"])) == 2
        assert {t["speaker"] for t in turns_of(c)} == set(c["speakers"])


def test_turn_ids_are_unique_and_usable_as_request_ids(turns: dict[str, dict[str, Any]]) -> None:
    ids = list(turns)
    assert len(set(ids)) == len(ids)
    assert all(REQUEST_ID.match(i) for i in ids)


def test_questions_cover_every_category_and_point_at_real_turns(
    questions: list[dict[str, Any]], turns: dict[str, dict[str, Any]]
) -> None:
    assert len(questions) >= 300
    counts = Counter(q["category"] for q in questions)
    assert set(counts) == CATEGORIES
    assert all(n >= 20 for n in counts.values()), counts
    for q in questions:
        cited = [*q["evidence"], *q.get("superseded", ())]
        cited += [t for alts in q.get("alternatives", {}).values() for t in alts]
        assert all(turns[t]["conversation"] == q["conversation"] for t in cited), q["id"]
        assert len(q["evidence"]) == (2 if q["category"] == "multi-hop" else 1), q["id"]


def test_a_changed_mind_question_cites_the_later_turn(questions: list[dict[str, Any]]) -> None:
    changed = [q for q in questions if q["category"] == "changed-mind"]
    assert len(changed) >= 20
    for q in changed:
        (new,) = q["evidence"]
        (old,) = q["superseded"]
        assert old < new, q["id"]  # ids sort by session, then turn


def test_the_evidence_is_said_by_the_person_asked_about(
    conversations: list[dict[str, Any]], questions: list[dict[str, Any]], turns: dict[str, dict[str, Any]]
) -> None:
    speakers = {c["id"]: c["speakers"] for c in conversations}
    for q in questions:
        (person,) = {turns[t]["speaker"] for t in q["evidence"]}
        named = [s for s in speakers[q["conversation"]] if s in q["question"]]
        if q["category"] == "who":
            assert q["answer"].removesuffix("'s") == person and not named, q["id"]
        else:  # about the speaker, or about someone of theirs ("Where does Tom live?")
            assert named in ([person], []), q["id"]


def test_most_turns_hold_no_evidence_and_evidence_texts_are_unique(
    conversations: list[dict[str, Any]], questions: list[dict[str, Any]], turns: dict[str, dict[str, Any]]
) -> None:
    cited = {t for q in questions for t in q["evidence"]}
    assert len(cited) / len(turns) < 0.25
    for c in conversations:
        texts = Counter(t["text"].lower() for t in turns_of(c))
        mine = [turns[t]["text"].lower() for t in cited if turns[t]["conversation"] == c["id"]]
        assert all(texts[t] == 1 for t in mine), c["id"]


def _content(text: str, names: set[str]) -> set[str]:
    return {w for w in WORD.findall(text.lower()) if w not in STOP_WORDS and w not in names and len(w) > 2}


def test_many_questions_share_no_word_with_their_evidence_but_names_and_values(
    conversations: list[dict[str, Any]], questions: list[dict[str, Any]], turns: dict[str, dict[str, Any]]
) -> None:
    """A question mostly says its fact in other words ("What pet does X have?" against
    "I have a dog named Rex"), so the set measures more than keyword overlap."""
    names = {n.lower() for c in conversations for n in c["speakers"]}
    paraphrased = 0
    for q in questions:
        values = _content(q["answer"], names)
        asked = _content(q["question"], names) - values
        said = set().union(*(_content(turns[t]["text"], names) for t in q["evidence"])) - values
        paraphrased += not (asked & said)
    assert paraphrased / len(questions) >= 0.5


def test_the_quick_selection_keeps_every_category(
    conversations: list[dict[str, Any]], questions: list[dict[str, Any]]
) -> None:
    convs, chosen = select(conversations, questions, 3, 15)
    assert [c["id"] for c in convs] == ["c01", "c02", "c03"]
    assert len(chosen) == 45
    assert {q["category"] for q in chosen} == CATEGORIES


# -- scoring -----------------------------------------------------------------------------


def test_a_memory_comes_from_its_request_its_sources_and_turns_with_its_text() -> None:
    by_text = {"i have a dog named rex": {"c01-s02-t004", "c01-s05-t010"}}
    fact = {
        "content": "Caroline has a dog named Rex",
        "metadata": {"requestId": "c01-s02-t004", "sources": [{"requestId": "c01-s06-t001"}, "junk", {}]},
    }
    episode = {"content": "I have a  dog named Rex", "metadata": {}}
    assert memory_turns(fact, by_text) == {"c01-s02-t004", "c01-s06-t001"}
    assert memory_turns(episode, by_text) == {"c01-s02-t004", "c01-s05-t010"}
    assert memory_turns({"content": "loves it", "metadata": "not an object"}, by_text) == set()
    assert memory_turns({}, by_text) == set()


def test_a_question_scores_the_rank_of_each_evidence_turn_or_its_alternative() -> None:
    q = {"id": "q1", "category": "multi-hop", "evidence": ["a", "b"], "alternatives": {"b": ["b2"]}}
    ranked = [set(), {"x"}, {"a"}] + [set()] * 4 + [{"b2"}]
    score = score_question(q, ranked, tokens=120)
    assert score.recall == {"5": 0.5, "10": 1.0, "budget": 1.0}
    assert score.rr == pytest.approx(1 / 3)
    missing = score_question({"id": "q2", "category": "who", "evidence": ["z"]}, ranked, tokens=0)
    assert missing.recall == {"5": 0.0, "10": 0.0, "budget": 0.0} and missing.rr == 0.0


def test_a_superseded_turn_injected_first_is_counted_as_stale() -> None:
    q = {"id": "q", "category": "changed-mind", "evidence": ["new"], "superseded": ["old"]}
    stale = score_question(q, [{"old"}, {"new"}], tokens=10)
    fresh = score_question(q, [{"new"}, {"old"}], tokens=10)
    assert stale.stale and not fresh.stale
    summary = summarise([stale, fresh])
    assert summary["stale_first"] == 0.5 and summary["recall@5"] == 1.0 and summary["n"] == 2
