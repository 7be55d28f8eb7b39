"""What a chat request already says (memroute/memory/said.py): a memory whose text the
request holds is not injected again, and a conversation that goes on (the same messages
and more, as clients re-send them) is searched only where it grew, with the same answers
as a search of the whole request."""

from __future__ import annotations

from typing import Any

from memroute.memory.lines import normalised
from memroute.memory.said import AlreadySaid, SaidSearches
from memroute.memory.turns import said_in

FILLER = "We talked about the weather, the trains and the week ahead, nothing to remember. " * 6


def _messages(count: int, *said: str) -> list[dict[str, str]]:
    """A conversation of `count` messages (~0.5 KB each), then `said` as the last ones."""
    roles = ("user", "assistant")
    earlier = [{"role": roles[n % 2], "content": f"{FILLER}({n})"} for n in range(count)]
    return [*earlier, *({"role": "user", "content": text} for text in said)]


def _text(messages: list[dict[str, str]]) -> str:
    return said_in({"messages": messages})


def _holds(searches: SaidSearches, owner: str, text: str, memories: list[str]) -> dict[str, bool]:
    """Which of `memories` the request holds, as recall asks; the searches kept after."""
    said = searches.said(owner, text)
    held = {memory: said.holds(normalised(memory)) for memory in memories}
    searches.keep(owner, said)
    return held


def _alone(text: str, memories: list[str]) -> dict[str, bool]:
    said = AlreadySaid(text)
    return {memory: said.holds(normalised(memory)) for memory in memories}


MEMORIES = [
    "Ran a marathon in Lisbon on my weekend",
    "Adopted a dog called Biscuit",
    "art class on the weekend",
    "Moved to Porto last spring",
    "We talked about the weather",
]


def test_a_conversation_that_goes_on_is_answered_as_a_search_of_the_whole_request() -> None:
    searches = SaidSearches()
    messages = _messages(60, "I ran a marathon in Lisbon on my WEEKEND.", "We adopted a dog")
    first = _text(messages)
    assert len(first) > 16 * 1024
    assert _holds(searches, "key-1", first, MEMORIES) == _alone(first, MEMORIES)
    assert _holds(searches, "key-1", first, MEMORIES)["Ran a marathon in Lisbon on my weekend"]
    # The next request re-sends all of it and a new message, which the memory spans.
    messages.append({"role": "user", "content": "called biscuit, and a smart class on the weekend."})
    second = _text(messages)
    held = _holds(searches, "key-1", second, MEMORIES)
    assert held == _alone(second, MEMORIES)
    assert held == {
        "Ran a marathon in Lisbon on my weekend": True,  # said before, still said
        "Adopted a dog called Biscuit": True,  # begun before, ended in what the request added
        "art class on the weekend": False,  # only inside "smart"
        "Moved to Porto last spring": False,
        "We talked about the weather": True,
    }


def test_a_request_that_does_not_go_on_from_the_last_is_searched_whole() -> None:
    searches = SaidSearches()
    first = _text(_messages(60, "Tell me about Porto.", "I ran"))
    assert _holds(searches, "key-1", first, ["I ran"]) == {"I ran": True}  # at the very end
    # The last message edited: "I ran" now cuts the word "rant", though the text starts the same.
    edited = _text(_messages(60, "Tell me about Porto.", "I rant about trains"))
    assert _holds(searches, "key-1", edited, ["I ran", "Moved to Porto last spring"]) == {
        "I ran": False,
        "Moved to Porto last spring": False,
    }
    # History rewritten in the middle: the same start, another text as long, then more.
    searched = "tell me about porto. i rant about trains"
    rewritten = "moved to porto last spring. i ran a lot!"
    assert edited.endswith(searched) and len(rewritten) == len(searched)
    other = edited[: -len(searched)] + rewritten + " then more."
    assert other[len(edited)] == " "  # it could have gone on from the last request there
    porto = "Moved to Porto last spring"
    assert _holds(searches, "key-1", other, [porto]) == {porto: True}


def test_one_keys_searches_never_answer_for_another_key() -> None:
    searches = SaidSearches()
    base = _messages(60)
    said_by_one = _text([*base, {"role": "user", "content": "I adopted a dog called Biscuit."}])
    assert _holds(searches, "key-1", said_by_one, MEMORIES)["Adopted a dog called Biscuit"]
    # Another key's conversation starts the same and goes on without it.
    other: list[dict[str, Any]] = [*base, {"role": "user", "content": "Nothing about pets here."}]
    assert not _holds(searches, "key-2", _text(other), MEMORIES)["Adopted a dog called Biscuit"]


def test_short_requests_are_not_remembered_and_the_conversations_kept_are_bounded() -> None:
    searches = SaidSearches(conversations=2)
    _holds(searches, "key-1", _text(_messages(4, "I adopted a dog called Biscuit.")), MEMORIES)
    assert len(searches) == 0  # ~2 KB: searched at once, nothing kept
    for n in range(4):
        _holds(searches, f"key-{n}", _text(_messages(60, f"Conversation {n}")), MEMORIES)
    assert len(searches) == 2


def test_sessions_that_start_alike_each_go_on_from_their_own_last_request() -> None:
    """One system prompt begins many sessions of a key: each is remembered, and each next
    request is answered as a search of the whole of it would answer."""
    searches = SaidSearches()
    base = _messages(60)
    one = [*base, {"role": "user", "content": "I adopted a dog called Biscuit."}]
    two = [*base, {"role": "user", "content": "Tell me about Porto."}]
    for messages in (one, two):
        _holds(searches, "key-1", _text(messages), MEMORIES)
    assert len(searches) == 2
    one.append({"role": "user", "content": "Also, I moved to Porto last spring."})
    two.append({"role": "user", "content": "I ran a marathon in Lisbon on my weekend."})
    for messages in (one, two):
        text = _text(messages)
        assert _holds(searches, "key-1", text, MEMORIES) == _alone(text, MEMORIES)
    assert len(searches) == 2  # each went on from its own: superseded, not added


def test_what_is_remembered_in_all_is_bounded() -> None:
    searches = SaidSearches(memories_kept=12)  # five memory texts per conversation here
    for n in range(5):
        _holds(searches, f"key-{n}", _text(_messages(60, f"Conversation {n}")), MEMORIES)
    assert len(searches) == 2
