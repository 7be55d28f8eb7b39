"""Reading where a memory came from out of its metadata, and the line every surface shows."""

from __future__ import annotations

from typing import Any

import pytest

from memroute.models.provenance import MAX_SOURCES, Provenance, describe, provenance_of


def line(metadata: Any) -> str | None:
    found = provenance_of(metadata)
    return None if found is None else found.summary


def test_a_learned_turn_names_request_time_speaker_and_session() -> None:
    metadata = {
        "category": "turn",
        "source": "user_message",
        "role": "user",
        "speaker": "Caroline",
        "requestId": "req_5f0c",
        "sessionId": "s1",
        "learnedAt": "2026-05-08T14:03:59.999Z",
    }
    assert line(metadata) == "learned from request req_5f0c at 2026-05-08 14:03 UTC (Caroline, session s1)"
    without_speaker = {**metadata, "speaker": None, "sessionId": ""}
    assert line(without_speaker) == "learned from request req_5f0c at 2026-05-08 14:03 UTC (user)"
    reply = {"source": "llm_response", "role": "assistant", "requestId": "req_9", "learnedAt": "2026-05-08"}
    assert line(reply) == "learned from request req_9 at 2026-05-08 00:00 UTC (assistant)"


def test_facts_from_before_request_ids_still_say_what_they_were_learned_from() -> None:
    old_fact = {"category": "preference", "source": "user_message", "extractedAt": "2026-01-02T03:04:05.000Z"}
    assert line(old_fact) == "learned from a user message at 2026-01-02 03:04 UTC"
    assert line({"source": "llm_response"}) == "learned from an assistant reply"


def test_added_by_hand_or_imported_and_nothing_when_the_metadata_does_not_say() -> None:
    assert line({"source": "manual"}) == "added by hand"
    assert (
        line({"source": "import", "learnedAt": "2026-03-01T10:00:00Z"}) == "imported at 2026-03-01 10:00 UTC"
    )
    for silent in ({}, {"source": "dashboard", "tags": ["x"]}, {"sessionId": "s1"}, None, [], "text", 7):
        assert provenance_of(silent) is None, silent


def test_a_fact_learned_again_lists_its_earlier_requests_oldest_first() -> None:
    sources = [
        {"requestId": f"req_{i}", "learnedAt": f"2026-05-0{i}T08:00:00Z", "role": "user"} for i in range(1, 4)
    ]
    metadata = {"requestId": "req_3", "learnedAt": "2026-05-03T08:00:00Z", "role": "user", "sources": sources}
    found = provenance_of(metadata)
    assert found is not None
    assert [s.request_id for s in found.earlier] == ["req_1", "req_2"]  # the newest is the memory's own
    assert found.summary.endswith("; also learned from 2 earlier requests since 2026-05-01 08:00 UTC")
    once = provenance_of({**metadata, "sources": sources[1:]})
    assert once is not None
    assert once.summary.endswith("; also learned from request req_2 at 2026-05-02 08:00 UTC")


@pytest.mark.parametrize(
    "odd",
    [
        {
            "source": "user_message",
            "requestId": 42,
            "learnedAt": 20260508,
            "role": "admin",
            "speaker": ["x"],
            "sources": "many",
        },
        {"requestId": None, "learnedAt": "yesterday", "role": "user", "sources": [1, None, "x", [], {}]},
        {"learnedAt": "9999-12-31T23:59:59-05:00", "role": "user"},  # past year 9999 in UTC
        {"learnedAt": "2026-05-08T16:03:00+02:00", "role": "user", "sources": [{"learnedAt": {"a": 1}}]},
        {"role": "user", "sources": [{"requestId": "r", "learnedAt": "2026-01-01"}] * 100_000},
    ],
)
def test_odd_metadata_never_fails_and_stays_bounded(odd: dict[str, Any]) -> None:
    found = provenance_of(odd)
    assert found is not None and found.role == "user"
    assert len(found.earlier) <= MAX_SOURCES
    assert len({(s.request_id, s.learned_at) for s in found.earlier}) == len(found.earlier)  # no repeats
    assert found.summary.startswith("learned from a user message")
    assert len(found.summary) < 500


def test_times_are_shown_in_utc_and_text_is_cleaned_and_cut() -> None:
    metadata = {
        "role": "user",
        "learnedAt": "2026-05-08T16:03:00+02:00",
        "requestId": "r" * 1000,
        "speaker": "Caro\x1b[31mline\u202e\n  Smith",
        "sessionId": "s\x00 1",
    }
    found = provenance_of(metadata)
    assert found is not None
    assert found.learned_at == "2026-05-08T14:03:00.000Z"
    assert found.request_id is not None and len(found.request_id) == 128 and found.request_id.endswith("…")
    assert found.speaker == "Caro[31mline Smith"  # no escape, no bidi override, one line
    assert found.session_id == "s 1"
    assert "\x1b" not in found.summary and "\n" not in found.summary


def test_the_line_leaves_out_what_is_not_known() -> None:
    bare = Provenance("chat", "req_1", None, None, None, None)
    assert describe(bare) == "learned from request req_1"
