"""What of a chat turn is kept (chunks, skips, keys) and how a kept turn reads when injected."""

from __future__ import annotations

from memroute.memory.lines import LineDeduper, injected_line
from memroute.memory.turns import MAX_CHUNK_CHARS, MAX_CHUNKS, chunks, last_user_turn, said_in, turn_key


def test_a_short_turn_is_one_chunk_and_a_trivial_one_none() -> None:
    (only,) = chunks("  We moved to Porto in May.  ")
    assert (only.text, only.index, only.count) == ("We moved to Porto in May.", 0, 1)
    for said in ("ok", "Thanks!!", "lol 😂", "👍", "yes yes", "...", "haha ok thank you so much", ""):
        assert chunks(said) == [], said


def test_a_greeting_that_names_people_is_not_kept_but_a_name_with_news_is() -> None:
    for said in (
        "morning Beatriz",
        "hey Felix!",
        "hi Felix, how are things?",
        "evening Beatriz, how was your day?",
        "Greta!! long time",
        "Hi Caroline and Melanie!",
        "hey, not bad, you?",
        "cheers, you too",
        "Hey Mel! Good to see you! How have you been?",
        "Nice to meet you, Caroline!",
        "Hope you are doing well!",
        "hiii",  # drawn out
        "heyyy Felix!!",
        "yeeah sooo good",
    ):
        assert chunks(said) == [], said
    for said in (
        "hey Felix, I moved to Lisbon",
        "morning! Oscar is 4 now",
        "How are things with Tom?",
        "Lisbon!",  # an answer, not a greeting
        "Paris, yes",
        "hey! Paris, Rome and Vienna",  # more than two names: a list, kept
        "heyy, coool bike",
        "Hey Mel! Good to see you! I went to a support group yesterday.",
    ):
        assert [c.text for c in chunks(said)] == [said], said


def test_long_text_splits_at_paragraphs_then_sentences_then_words() -> None:
    paragraphs = ["First part. " * 70, "Second part. " * 70, "Third part. " * 70]  # ~850 chars each
    pieces = chunks("\n\n".join(p.strip() for p in paragraphs))
    assert all(len(c.text) <= MAX_CHUNK_CHARS for c in pieces)
    assert [c.text.split(".")[0] for c in pieces] == ["First part", "Second part", "Third part"]
    words = chunks("word " * 2000)  # no sentence end at all: cut between words
    assert all(len(c.text) <= MAX_CHUNK_CHARS and not c.text.endswith("wor") for c in words)
    run = chunks("sea-" * 1250)  # one unbroken run: cut into chunk-sized pieces
    assert "".join(c.text for c in run) == "sea-" * 1250 and len(run) == 5


def test_a_huge_text_keeps_its_newest_chunks_only() -> None:
    pieces = chunks("".join(f"Sentence number {n} is here. " for n in range(20_000)))
    assert 0 < len(pieces) <= MAX_CHUNKS
    assert pieces[-1].text.endswith("Sentence number 19999 is here.")
    assert pieces[0].text.startswith("Sentence number")  # the cut drops the broken first sentence


def test_code_blocks_and_blobs_become_placeholders() -> None:
    (kept,) = chunks("Look:\n```js\nconsole.log(1)\n```\n```py\nprint(2)\n```\nand " + "QUJD" * 60)
    assert kept.text == "Look:\n [code] \nand  [data]"
    assert chunks("```\nonly code\n```") == []  # nothing but code: nothing to keep


def test_the_key_ignores_case_and_spacing_only() -> None:
    assert turn_key("I walk the dog.") == turn_key("i  walk the\nDOG.")
    assert turn_key("I walk the dog.") != turn_key("I walk the cat.")
    assert turn_key("x").startswith("turn:") and len(turn_key("x")) == len("turn:") + 16


def test_the_last_user_turn_and_its_speaker() -> None:
    body = {
        "messages": [
            {"role": "user", "content": "older", "name": "Ann"},
            {"role": "assistant", "content": "reply"},
            {"role": "user", "content": [{"type": "text", "text": "newest"}], "name": " Bob\x00 "},
            {"role": "user", "content": [{"type": "image_url", "image_url": {"url": "x"}}]},
        ]
    }
    assert last_user_turn(body) == ("newest", "Bob")
    assert last_user_turn({"messages": [{"role": "user", "content": "hi", "name": "n" * 500}]})[1] == "n" * 64
    assert last_user_turn({"messages": 5}) == ("", "")


def test_said_in_holds_every_message_normalised() -> None:
    said = said_in({"messages": [{"role": "user", "content": "My  Name is Dana"}, {"role": "x"}, "junk"]})
    assert said == "my name is dana"


def test_a_kept_turn_reads_with_its_date_and_speaker() -> None:
    meta = {"category": "turn", "speaker": "Caroline", "learnedAt": "2026-05-08T10:00:00.000Z"}
    assert injected_line("We adopted a dog.", meta) == "[2026-05-08] Caroline: We adopted a dog."
    assert injected_line("Hi.", {"category": "turn", "role": "assistant"}) == "Assistant: Hi."
    assert injected_line("Hi.", {"category": "turn", "learnedAt": 7}) == "User: Hi."
    assert injected_line("prefers tea", {"category": "preference"}) == "prefers tea"


def test_near_duplicate_lines_are_taken_once() -> None:
    lines = LineDeduper()
    assert not lines.repeats("We adopted a dog named Rex last week")
    assert lines.repeats("we adopted a dog named Rex last week!")
    assert not lines.repeats("We adopted a cat named Luna")
    assert not lines.repeats("!!!")  # no words: nothing to compare
