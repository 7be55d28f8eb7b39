"""Retrieval (SPEC §4, REF §4 and the REF §14 retrieval tests) on real SQLite files.

What a user notices: which memories get injected for a question, in which order,
how many tokens they cost, that nobody else's memories ever show up, and that no
question can make memory fail.
"""

from __future__ import annotations

import math
import uuid
from collections.abc import Iterator
from datetime import timedelta
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from memories import open_memory
from storage import database

from memroute import InvalidInput, Memory
from memroute.clock import to_iso
from memroute.memory.lines import RenderedLines
from memroute.memory.retrieval import VECTOR_WEIGHT, RetrieveParams, VectorSearch, retrieve
from memroute.memory.turns import said_in
from memroute.models.records import MemoryFilter, MemoryRecord, Retrieval, RetrievedItem, estimate_tokens
from memroute.models.wire import to_wire
from memroute.service.turn_queue import ChatTurn
from memroute.vectors import RowAdmission, Vector, VectorHit, VectorIndex

STRATEGIES = ("exact", "semantic", "hybrid")


def _add(mem: Memory, clock: Any, owner: str, content: str, **kwargs: Any) -> MemoryRecord:
    """Store a memory and move the clock on, so the next one is strictly newer."""
    record = mem.add(owner, content, **kwargs)
    clock.tick()
    return record


def _contents(items: list[RetrievedItem]) -> list[str]:
    return [item.memory.content for item in items]


def _ids(items: list[RetrievedItem]) -> list[str]:
    return [item.memory.id for item in items]


# --- FTS safety: no user text can make retrieval fail ---------------------------------------------

REF_QUERIES = {
    '"quoted phrase"': 'Remember the "quoted phrase" from the meeting notes',
    "C++ language": "Writes embedded firmware in the C++ language",
    "Johnson & Johnson": "Works as a contractor for Johnson & Johnson",
    "dash-separated-query": "Names branches in dash-separated-query style",
    "parens(test)": "Wrote a parens(test) helper for the parser",
    "asterisk*wildcard": "Searches logs with asterisk*wildcard globs",
    "single'quote": "Escapes single'quote characters in shell scripts",
}


@pytest.fixture
def mem(db_path: Path, clock: Any) -> Iterator[Memory]:
    """The install's memory with the bundled model off: these tests check what the keyword
    tiers (FTS5, the key's index, its meanings) find and in which order."""
    with open_memory(db_path, clock=clock, workers=True, model=False) as memory:
        yield memory


def _shared(
    tmp_path_factory: pytest.TempPathFactory, *, model: bool
) -> Iterator[tuple[Memory, dict[str, str]]]:
    memory = open_memory(tmp_path_factory.mktemp("retrieval") / "memroute.db", workers=True, model=model)
    ids = {query: memory.add("owner-a", content).id for query, content in REF_QUERIES.items()}
    memory.add("owner-a", "prefers TypeScript for backend services")
    memory.add("owner-b", "secret of owner b: likes Kotlin")
    yield memory, ids
    memory.close()


@pytest.fixture(scope="module")
def shared(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Memory, dict[str, str]]]:
    """One Memory with the install's settings (the bundled model on) for the whole module's
    read-mostly tests (hypothesis runs many examples through every path)."""
    yield from _shared(tmp_path_factory, model=True)


@pytest.fixture(scope="module")
def shared_keywords(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Memory, dict[str, str]]]:
    """The same memories with the bundled model off: what the keyword tiers find."""
    yield from _shared(tmp_path_factory, model=False)


SYNTAX_PIECES = [
    '"',
    "'",
    '""',
    "NEAR",
    "NEAR(",
    "NEAR/2",
    "*",
    "^",
    ":",
    "(",
    ")",
    "AND",
    "OR",
    "NOT",
    "-",
    "+",
    "content:",
    "key:",
    "{content key}:",
    "\u00e9t\u00e9",
    "\u6f22\u5b57",
    "\U0001f600",
    "\u0301",
    "\\",
    "%",
    "_",
    ";",
    "--",
    "/*",
    "\x00",
    "\t",
    "\n",
    "\u200b",
    "\ufeff",
    "\u00b2",
    "\u2167",
    "ß",
    "İ",
]
syntax_soup = st.lists(
    st.one_of(st.sampled_from(SYNTAX_PIECES), st.text(max_size=8)), min_size=1, max_size=30
).map(" ".join) | st.lists(st.sampled_from(SYNTAX_PIECES), min_size=1, max_size=30).map("".join)
long_text = st.tuples(st.sampled_from([*SYNTAX_PIECES, "word", "TypeScript"]), st.integers(500, 6000)).map(
    lambda pair: (pair[0] + " ") * pair[1]
)


def _exercise_every_path(memory: Memory, query: str) -> None:
    for strategy in STRATEGIES:
        items = memory.retrieve("owner-a", query, strategy=strategy, max_tokens=500, record_access=False)
        assert all(item.memory.api_key_id == "owner-a" for item in items)
        preview = memory.retrieve_preview("owner-a", query, strategy=strategy, max_tokens=500)
        assert all(item.memory.api_key_id == "owner-a" for item in preview.items)
        memory.retrieve_preview(None, query, strategy=strategy, max_tokens=500)


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(query=st.text())
def test_any_text_never_raises(shared: tuple[Memory, dict[str, str]], query: str) -> None:
    _exercise_every_path(shared[0], query)


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(query=syntax_soup | long_text)
def test_fts_syntax_soup_never_raises(shared: tuple[Memory, dict[str, str]], query: str) -> None:
    _exercise_every_path(shared[0], query)


@pytest.mark.parametrize("strategy", ["semantic", "hybrid"])
@pytest.mark.parametrize("query", list(REF_QUERIES))
def test_ref_queries_find_the_memory_with_those_words(
    shared_keywords: tuple[Memory, dict[str, str]], query: str, strategy: str
) -> None:
    memory, ids = shared_keywords
    items = memory.retrieve("owner-a", query, strategy=strategy, max_tokens=2000, record_access=False)
    assert items, f"{query!r} found nothing"
    assert items[0].memory.id == ids[query]
    assert items[0].tier == "fts5"


def test_very_long_query_is_bounded_and_still_matches(shared_keywords: tuple[Memory, dict[str, str]]) -> None:
    memory, _ = shared_keywords
    query = "blah " * 50_000 + "which TypeScript setup"
    items = memory.retrieve("owner-a", query, strategy="semantic", record_access=False)
    # First: the memory with the words asked (related words may match others after it).
    assert _contents(items)[:1] == ["prefers TypeScript for backend services"]


# --- strategies -----------------------------------------------------------------------------------


def test_exact_returns_newest_first_whatever_the_query(mem: Memory, clock: Any) -> None:
    for text in ("prefers TypeScript", "uses vim", "likes green tea"):
        _add(mem, clock, "k", text)
    items = mem.retrieve("k", "TypeScript", strategy="exact")
    assert _contents(items) == ["likes green tea", "uses vim", "prefers TypeScript"]
    assert {item.tier for item in items} == {"recent"}
    assert _contents(mem.retrieve("k", "TypeScript", strategy="recent")) == _contents(items)


def test_semantic_returns_only_keyword_matches(mem: Memory, clock: Any) -> None:
    ts = _add(mem, clock, "k", "prefers TypeScript for the backend")
    _add(mem, clock, "k", "likes green tea")
    _add(mem, clock, "k", "uses vim keybindings")
    items = mem.retrieve("k", "what about typescript?", strategy="semantic")
    assert _ids(items) == [ts.id]
    assert items[0].tier == "fts5"
    assert items[0].score > 0
    assert items[0].fts_score is not None


def test_semantic_falls_back_to_newest_only_when_nothing_matches(mem: Memory, clock: Any) -> None:
    _add(mem, clock, "k", "likes green tea")
    _add(mem, clock, "k", "uses vim keybindings")
    items = mem.retrieve("k", "kubernetes clusters", strategy="semantic")
    assert _contents(items) == ["uses vim keybindings", "likes green tea"]
    assert {item.tier for item in items} == {"recent"}
    preview = mem.retrieve_preview("k", "kubernetes clusters", strategy="semantic")
    assert preview.resolution.fallback_reason
    assert "newest" in preview.resolution.fallback_reason


def test_hybrid_puts_keyword_matches_first_then_newest_fill_the_budget(mem: Memory, clock: Any) -> None:
    _add(mem, clock, "k", "prefers TypeScript for the backend")
    _add(mem, clock, "k", "likes green tea")
    _add(mem, clock, "k", "uses vim keybindings")
    items = mem.retrieve("k", "TypeScript", strategy="hybrid")
    assert _contents(items) == [
        "prefers TypeScript for the backend",
        "uses vim keybindings",
        "likes green tea",
    ]
    assert [item.tier for item in items] == ["fts5", "recent", "recent"]


def test_hybrid_fill_finds_the_facts_behind_thousands_of_newer_kept_turns(mem: Memory, clock: Any) -> None:
    # A long conversation keeps thousands of turns, all newer than the facts; the newest-facts
    # fill must still reach the facts (it stopped after 2,000 turns and injected nothing).
    facts = [_add(mem, clock, "k", text).id for text in ("prefers Go for backend work", "lives in Lisbon")]
    settings = mem.update_settings(enabled=True)
    with mem.transaction():  # queued in one commit
        for i in range(2_100):
            mem.enqueue_turn(
                "k", ChatTurn(f"We walked to market number {i}, bought apples"), settings=settings
            )
    assert mem.wait_for_extraction(120)
    assert mem.stats("k").total == 2_102
    items = mem.retrieve("k", "any thoughts on gardening?", strategy="hybrid", record_access=False)
    assert _ids(items) == facts[::-1]
    assert [item.tier for item in items] == ["recent", "recent"]


def test_an_edited_memory_is_injected_as_edited_even_within_the_same_millisecond(mem: Memory) -> None:
    # Packing remembers how memories read across requests; an edit must never leave the old line.
    fact = mem.add("k", "prefers tea", key="dana/preference:drink", metadata={"speaker": "Dana"})
    assert [i.line for i in mem.retrieve("k", "tea", record_access=False)] == ["Dana prefers tea"]
    mem.update(fact.id, content="prefers green tea")  # the test clock has not moved
    assert [i.line for i in mem.retrieve("k", "tea", record_access=False)] == ["Dana prefers green tea"]
    mem.update(fact.id, metadata={"speaker": "Mia"})
    assert [i.line for i in mem.retrieve("k", "tea", record_access=False)] == ["Mia prefers green tea"]


def test_rendered_lines_stay_within_their_bound() -> None:
    rendered = RenderedLines(max_bytes=20_000)
    records = [
        MemoryRecord(str(i), "k", "", "factual", "", f"fact {i} " + "word " * 20, "2026-01-01", "2026-01-01")
        for i in range(200)
    ]
    assert [rendered.of(r).line for r in records] == [r.content for r in records]
    assert 0 < rendered.size_bytes <= 20_000
    assert 0 < len(rendered) < 200
    assert rendered.of(records[-1]).line == records[-1].content  # the newest are kept


def test_hybrid_injects_a_small_memory_for_a_question_sharing_no_word(mem: Memory, clock: Any) -> None:
    # SPEC §4: "Which language should I use?" still gets "prefers TypeScript".
    stored = mem.remember("k", "I prefer TypeScript.")
    assert [m.content for m in stored] == ["prefers TypeScript"]
    items = mem.retrieve("k", "Which language should I use?")  # settings default: hybrid
    assert _contents(items) == ["prefers TypeScript"]


def test_memory_with_more_matches_ranks_first_by_bm25(mem: Memory, clock: Any) -> None:
    # REF retrieval.test.ts: "TypeScript" → the "TypeScript compiler" memory is on top.
    _add(mem, clock, "k", "Uses TypeScript now and then, mostly for small scripts at home on weekends")
    best = _add(mem, clock, "k", "TypeScript compiler: TypeScript strict mode for every TypeScript project")
    _add(mem, clock, "k", "Writes Python data pipelines")
    items = mem.retrieve("k", "TypeScript", strategy="semantic")
    assert len(items) == 2
    assert items[0].memory.id == best.id
    assert "TypeScript compiler" in items[0].memory.content
    assert items[0].score > items[1].score


def test_a_question_naming_a_person_ranks_what_they_said_above_lines_addressed_to_them(
    mem: Memory, clock: Any
) -> None:
    # Melanie's line names Caroline and holds every word of the question; Caroline's own
    # line holds two of them. Asked about Caroline, her own words come first; asked
    # without a name, the line holding more of the question does.
    own = _add(
        mem, clock, "k", "I researched adoption agencies all weekend", metadata={"speaker": "Caroline"}
    )
    addressed = _add(
        mem, clock, "k", "Caroline, how is the adoption research going?", metadata={"speaker": "Melanie"}
    )
    for text in (
        "the garden needs rain",
        "we painted the fence",
        "the kids loved the lake",
        "pottery class again",
    ):
        _add(mem, clock, "k", text, metadata={"speaker": "Melanie"})
    for _ in range(4):  # the first recalls read SQL, the later ones the key's own index
        named = mem.retrieve("k", "What did Caroline find in her adoption research?", strategy="semantic")
        assert _ids(named)[:2] == [own.id, addressed.id]
        unnamed = mem.retrieve("k", "how is the adoption research going", strategy="semantic")
        assert _ids(unnamed)[:2] == [addressed.id, own.id]


def test_an_episodic_memory_shows_the_day_it_happened_and_questions_about_time_prefer_it(
    mem: Memory, clock: Any
) -> None:
    # The fact holds "Rex" twice and would rank first; asked "when", what happened (with
    # its day) comes first, and its injected line says when.
    for text in ("likes green tea", "works as a nurse", "lives in Porto", "plays the cello"):
        _add(mem, clock, "k", text)
    fact = _add(mem, clock, "k", "adopted Rex; Rex, Rex and Rex again", key="pet:dog")
    event = mem.add("k", "adopted Rex from the shelter", type="episodic", created_at="2026-05-08")
    clock.tick()
    asked = mem.retrieve("k", "When did I adopt Rex?", strategy="semantic")
    assert _ids(asked)[:2] == [event.id, fact.id]
    assert asked[0].line == "[2026-05-08] adopted Rex from the shelter"
    assert asked[1].line == "adopted Rex; Rex, Rex and Rex again"  # a fact: no day
    assert _ids(mem.retrieve("k", "Did I adopt Rex?", strategy="semantic"))[:2] == [fact.id, event.id]
    block = mem.inject({"messages": [{"role": "user", "content": "When did I adopt Rex?"}]}, asked)
    assert "[2026-05-08] adopted Rex from the shelter" in str(block["messages"][0]["content"])


def _long_conversation(*inserted: str) -> dict[str, Any]:
    """A chat of ~120 KB (240 messages) as a client re-sends it, with `inserted` said early on."""
    filler = "We talked about the weather, the trains and the week ahead, nothing to remember. " * 6
    roles = ("user", "assistant")
    messages = [{"role": roles[n % 2], "content": f"{filler}({n})"} for n in range(240)]
    for n, text in enumerate(inserted):
        messages[3 + 2 * n]["content"] = text
    return {"messages": [*messages, {"role": "user", "content": "What do you know about my weekend?"}]}


def test_what_a_long_conversation_already_says_is_not_injected_again(mem: Memory, clock: Any) -> None:
    """Said 200 messages back, in other case and spacing, or in another Unicode form: left
    out. Found only inside longer words of the chat ("Ran" in "Ran a marathons…", "art" in
    "smart"): injected."""
    mem.update_settings(enabled=True, maxTokens=2000)
    said = _add(mem, clock, "k", "Ran a marathon in Lisbon on my weekend")
    accented = _add(mem, clock, "k", "Café au lait every weekend morning")
    cut_end = _add(mem, clock, "k", "Ran a marathon on the weekend")
    cut_start = _add(mem, clock, "k", "art class on the weekend")
    body = _long_conversation(
        "I  RAN a marathon in   lisbon on my WEEKEND, it was great.",
        "Cafe\u0301 au lait every weekend morning!",  # é as e and a combining accent (NFD)
        "Also: ran a marathon on the weekends before, and a smart class on the weekend.",
    )
    said_text = said_in(body)
    assert len(said_text) > 100_000
    items = mem.recall("k", "weekend", settings=mem.settings(), record_access=False, already_said=said_text)
    injected = set(_ids(items))
    assert said.id not in injected and accented.id not in injected
    assert {cut_end.id, cut_start.id} <= injected
    # The chat goes on: the next request re-sends all of it and says one more of them.
    body["messages"].append({"role": "user", "content": "And an ART CLASS on the weekend, too."})
    went_on = said_in(body)
    items = mem.recall("k", "weekend", settings=mem.settings(), record_access=False, already_said=went_on)
    assert set(_ids(items)) == injected - {cut_start.id}


def test_a_memory_said_in_the_future_is_taken_as_said_now(mem: Memory, clock: Any) -> None:
    ahead = mem.add("k", "adopted a dog", type="episodic", created_at="2026-06-10")  # the clock says June 1st
    assert ahead.created_at == to_iso(clock.now)
    with pytest.raises(InvalidInput) as refused:
        mem.add("k", "adopted a cat", type="episodic", created_at="next tuesday")
    assert refused.value.field == "createdAt"
    assert mem.stats("k").total == 1


def test_multi_word_query_matches_any_word_not_all(mem: Memory, clock: Any) -> None:
    k8s = _add(mem, clock, "k", "deploys with Kubernetes")
    ts = _add(mem, clock, "k", "prefers TypeScript")
    _add(mem, clock, "k", "likes green tea")
    items = mem.retrieve("k", "Kubernetes TypeScript", strategy="semantic")
    assert set(_ids(items)) == {k8s.id, ts.id}


def test_stop_words_alone_do_not_match_everything(mem: Memory, clock: Any) -> None:
    py = _add(mem, clock, "k", "prefers Python")
    _add(mem, clock, "k", "The sky is blue and the grass is green")
    _add(mem, clock, "k", "The cat is on the mat, and it is what it is")
    items = mem.retrieve("k", "What is the Python to use?", strategy="semantic")
    assert _ids(items) == [py.id]
    # Only stop words: nothing is a keyword match, so hybrid lists the newest as "recent".
    items = mem.retrieve("k", "what is the", strategy="hybrid")
    assert {item.tier for item in items} == {"recent"}


def test_query_matches_the_key_and_word_stems(mem: Memory, clock: Any) -> None:
    db = _add(mem, clock, "k", "runs on the managed cluster", key="database:postgres")
    _add(mem, clock, "k", "likes green tea")
    assert _ids(mem.retrieve("k", "postgres?", strategy="semantic")) == [db.id]
    assert _ids(mem.retrieve("k", "clusters", strategy="semantic")) == [db.id]


def test_unknown_strategy_is_invalid_input(mem: Memory) -> None:
    with pytest.raises(InvalidInput):
        mem.retrieve("k", "x", strategy="fuzzy")
    with pytest.raises(InvalidInput):
        mem.retrieve_preview("k", "x", strategy="fuzzy")


# --- filters on every path ------------------------------------------------------------------------


def _every_path(mem: Memory, owner: str | None, query: str, **kwargs: Any) -> dict[str, list[RetrievedItem]]:
    out = {}
    for strategy in STRATEGIES:
        if owner is not None:
            out[f"retrieve/{strategy}"] = mem.retrieve(
                owner, query, strategy=strategy, max_tokens=4000, record_access=False, **kwargs
            )
        out[f"preview/{strategy}"] = mem.retrieve_preview(
            owner, query, strategy=strategy, max_tokens=4000
        ).items
    return out


def test_a_key_never_sees_another_keys_memories(mem: Memory, clock: Any) -> None:
    mine = _add(mem, clock, "key-a", "prefers TypeScript at work")
    _add(mem, clock, "key-b", "prefers TypeScript too, secret of b")
    _add(mem, clock, "key-b", "likes espresso, secret of b")
    for path, items in _every_path(mem, "key-a", "TypeScript espresso").items():
        assert _ids(items) == [mine.id], path
    for path, items in _every_path(mem, "key-c", "TypeScript espresso").items():
        assert items == [], path


def test_expired_memories_are_never_returned(mem: Memory, clock: Any) -> None:
    later = clock() + timedelta(days=1)
    _add(mem, clock, "k", "temporary: likes TypeScript this sprint", expires_at=later)
    _add(mem, clock, "k", "already gone: TypeScript", expires_at=clock() - timedelta(seconds=1))
    keep = _add(mem, clock, "k", "permanent: prefers TypeScript")
    for path, items in _every_path(mem, "k", "TypeScript").items():
        assert len(items) == 2, path
    clock.advance(days=2)
    for path, items in _every_path(mem, "k", "TypeScript").items():
        assert _ids(items) == [keep.id], path
    for path, items in _every_path(mem, None, "TypeScript").items():
        assert _ids(items) == [keep.id], path


def test_retention_excludes_stale_memories_and_restating_refreshes(mem: Memory, clock: Any) -> None:
    mem.update_settings(retentionDays=30)
    old = _add(mem, clock, "k", "prefers tabs", key="preference:tabs")
    k8s = _add(mem, clock, "k", "uses Kubernetes", key="tool:k8s")
    clock.advance(days=20)
    mem.add("k", "prefers tabs", key="preference:tabs")  # the user says it again
    clock.advance(days=15)  # 35 days after both were created, 15 after the restatement
    for path, items in _every_path(mem, "k", "tabs Kubernetes").items():
        assert _ids(items) == [old.id], path
    assert _ids(mem.retrieve("k", "Kubernetes", strategy="exact", retention_days=60)) == [old.id, k8s.id]


def test_session_scope_returns_only_that_session(mem: Memory, clock: Any) -> None:
    tea = _add(mem, clock, "k", "drinks tea", session_id="session-a")
    coffee = _add(mem, clock, "k", "drinks coffee", session_id="session-b")
    for strategy in STRATEGIES:
        a = mem.retrieve("k", "drinks", strategy=strategy, scope="session", session_id="session-a")
        b = mem.retrieve("k", "drinks", strategy=strategy, scope="session", session_id="session-b")
        assert _ids(a) == [tea.id], strategy
        assert _ids(b) == [coffee.id], strategy
    both = mem.retrieve("k", "drinks", strategy="exact", scope="apiKey", session_id="session-a")
    assert set(_ids(both)) == {tea.id, coffee.id}


def test_global_scope_reads_every_key(mem: Memory, clock: Any) -> None:
    a = _add(mem, clock, "key-a", "prefers TypeScript")
    b = _add(mem, clock, "key-b", "prefers Kotlin")
    for strategy in STRATEGIES:
        items = mem.retrieve("key-a", "prefers", strategy=strategy, scope="global")
        assert set(_ids(items)) == {a.id, b.id}, strategy
    with pytest.raises(InvalidInput):
        mem.retrieve("key-a", "x", scope="everyone")


def test_preview_without_key_covers_all_keys(mem: Memory, clock: Any) -> None:
    a = _add(mem, clock, "key-a", "prefers TypeScript")
    b = _add(mem, clock, "key-b", "prefers Kotlin")
    for strategy in STRATEGIES:
        preview = mem.retrieve_preview(None, "prefers", strategy=strategy)
        assert set(_ids(preview.items)) == {a.id, b.id}, strategy
        assert _ids(mem.retrieve_preview("key-b", "prefers", strategy=strategy).items) == [b.id]


# --- token budget ---------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def budget_mem(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Memory]:
    # The bundled model off: packing is the same whatever ranks, and 60 examples embedding
    # each new memory cost seconds.
    memory = open_memory(tmp_path_factory.mktemp("budget") / "memroute.db", workers=True, model=False)
    yield memory
    memory.close()


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    sizes=st.lists(st.integers(min_value=1, max_value=400), min_size=1, max_size=8),
    max_tokens=st.integers(min_value=1, max_value=120),
    strategy=st.sampled_from(STRATEGIES),
)
def test_budget_is_never_exceeded_and_packing_is_greedy(
    budget_mem: Memory, sizes: list[int], max_tokens: int, strategy: str
) -> None:
    owner = f"budget-{uuid.uuid4().hex}"
    for i, size in enumerate(sizes):
        budget_mem.add(owner, f"m{i} budget " + "x" * size)
    items = budget_mem.retrieve(
        owner, "budget", strategy=strategy, max_tokens=max_tokens, record_access=False
    )
    used = sum(item.tokens for item in items)
    assert used <= max_tokens
    assert items, "something always fits: at worst the best memory is cut to the budget"
    for item in items:
        assert item.tokens == estimate_tokens(item.memory.content)
    if items[0].truncated:
        assert len(items) == 1
        assert items[0].tokens <= max_tokens
    else:
        returned = set(_ids(items))
        stored = budget_mem.list(owner, limit=200).items
        for memory in stored:
            if memory.id not in returned:
                # skipped only because it did not fit in what was left
                assert estimate_tokens(memory.content) > max_tokens - used


def test_smaller_memories_are_packed_after_one_that_does_not_fit(mem: Memory, clock: Any) -> None:
    small_old = _add(mem, clock, "k", "a" * 12)  # 3 tokens
    _add(mem, clock, "k", "b" * 40)  # 10 tokens: does not fit after the newest
    newest = _add(mem, clock, "k", "c" * 24)  # 6 tokens
    items = mem.retrieve("k", None, strategy="exact", max_tokens=10)
    assert _ids(items) == [newest.id, small_old.id]
    assert sum(item.tokens for item in items) == 9


def test_one_memory_larger_than_the_budget_is_cut_to_fit(mem: Memory, clock: Any) -> None:
    big = _add(mem, clock, "k", "word " * 400)  # 500 tokens
    items = mem.retrieve("k", "word", strategy="hybrid", max_tokens=20)
    assert len(items) == 1
    assert items[0].memory.id == big.id
    assert items[0].truncated is True
    assert items[0].tokens <= 20
    assert len(items[0].memory.content) <= 80
    assert big.content.startswith(items[0].memory.content)
    assert mem.get(big.id).content == big.content  # the stored memory is untouched


def test_zero_budget_returns_nothing(mem: Memory, clock: Any) -> None:
    _add(mem, clock, "k", "prefers TypeScript")
    for strategy in STRATEGIES:
        assert mem.retrieve("k", "TypeScript", strategy=strategy, max_tokens=0) == []
    assert mem.get(mem.list("k").items[0].id).access_count == 0


def test_limit_is_respected(mem: Memory, clock: Any) -> None:
    for i in range(12):
        _add(mem, clock, "k", f"fact number {i} about TypeScript")
    for strategy in STRATEGIES:
        assert len(mem.retrieve("k", "TypeScript", strategy=strategy, limit=5)) == 5
    assert len(mem.retrieve_preview("k", "TypeScript", limit=3).items) == 3


def test_ref_max_tokens_20_injects_only_the_newest_that_fits(mem: Memory, clock: Any) -> None:
    # REF memory-pipeline: with maxTokens 20 only "Newest preference should fit first." is injected.
    _add(mem, clock, "k", "Older preference that is much too long to fit in a twenty token budget at all.")
    _add(mem, clock, "k", "Newest preference should fit first.")
    mem.update_settings(enabled=True, maxTokens=20)
    for items in (mem.recall("k", "What do I prefer?"), mem.retrieve("k", None, strategy="exact")):
        assert _contents(items) == ["Newest preference should fit first."]


def test_ten_long_memories_with_small_budget_respect_it(mem: Memory, clock: Any) -> None:
    # REF memory-retrieval-semantic: ten 100-char rows with budget 60 stay within 60.
    for i in range(10):
        _add(mem, clock, "k", f"{i}" + "z" * 99)
    for strategy in STRATEGIES:
        items = mem.retrieve("k", "z", strategy=strategy, max_tokens=60)
        assert 1 <= len(items) <= 2
        assert sum(item.tokens for item in items) <= 60


# --- access bookkeeping ---------------------------------------------------------------------------


def test_retrieve_bumps_access_of_returned_memories_only(mem: Memory, clock: Any) -> None:
    hit = _add(mem, clock, "k", "prefers TypeScript")
    other = _add(mem, clock, "k", "likes green tea")
    clock.advance(hours=1)
    mem.retrieve("k", "TypeScript", strategy="semantic")
    mem.retrieve("k", "TypeScript", strategy="semantic")
    bumped = mem.get(hit.id)
    assert bumped.access_count == 2
    assert bumped.last_accessed_at == to_iso(clock())
    assert bumped.updated_at == hit.updated_at  # reading is not an edit
    untouched = mem.get(other.id)
    assert untouched.access_count == 0
    assert untouched.last_accessed_at is None


def test_preview_does_not_bump_access(mem: Memory, clock: Any) -> None:
    hit = _add(mem, clock, "k", "prefers TypeScript")
    for strategy in STRATEGIES:
        assert mem.retrieve_preview("k", "TypeScript", strategy=strategy).items
        assert mem.retrieve_preview(None, "TypeScript", strategy=strategy).items
    assert mem.get(hit.id).access_count == 0
    assert mem.get(hit.id).last_accessed_at is None
    mem.retrieve("k", "TypeScript", record_access=False)
    assert mem.get(hit.id).access_count == 0


# --- retrieve_preview shape -----------------------------------------------------------------------


def test_preview_shape_for_hybrid_without_vectors(mem: Memory, clock: Any) -> None:
    _add(mem, clock, "k", "prefers TypeScript")
    _add(mem, clock, "k", "likes green tea")
    preview = mem.retrieve_preview("k", "TypeScript", strategy="hybrid", max_tokens=1234, limit=10)
    body = to_wire(preview)
    assert body["resolution"]["strategyUsed"] == "hybrid"
    assert body["resolution"]["fallbackReason"]  # honest: there is no vector tier
    assert body["resolution"]["rerankApplied"] is False
    assert body["resolution"]["vectorStore"] == "none"
    assert body["budgetMaxTokens"] == 1234
    assert body["totalTokensUsed"] == sum(item.tokens for item in preview.items) == preview.total_tokens
    assert [m["content"] for m in body["memories"]] == ["prefers TypeScript", "likes green tea"]
    for item in body["memories"]:
        assert {"score", "tokens", "tier", "vecScore", "ftsScore"} <= set(item)
        assert item["tier"] in ("fts5", "meaning", "vector", "hybrid-rrf", "qdrant", "recent")
    first, second = body["memories"]
    # Found by its word and by its meaning (the key's word vectors: a cosine, no vector store).
    assert first["tier"] == "fts5" and first["ftsScore"] is not None and first["score"] > 0
    assert 0.2 <= first["vecScore"] <= 1.0
    assert "meanings from word vectors" in body["resolution"]["fallbackReason"]
    # Neither its words nor its meaning are near the question: it only fills the budget.
    assert second["tier"] == "recent" and second["ftsScore"] is None and second["vecScore"] is None
    assert first["tokens"] == estimate_tokens("prefers TypeScript")


def test_preview_semantic_without_vectors_reports_fallback(mem: Memory, clock: Any) -> None:
    _add(mem, clock, "k", "prefers TypeScript")
    preview = mem.retrieve_preview("k", "TypeScript", strategy="semantic")
    assert preview.resolution.strategy_used == "semantic"
    assert preview.resolution.fallback_reason
    assert [item.tier for item in preview.items] == ["fts5"]


def test_preview_exact_has_no_fallback_reason(mem: Memory, clock: Any) -> None:
    _add(mem, clock, "k", "prefers TypeScript")
    _add(mem, clock, "k", "likes green tea")
    preview = mem.retrieve_preview("k", "TypeScript", strategy="exact")
    assert preview.resolution.fallback_reason is None
    assert preview.resolution.strategy_used == "exact"
    assert _contents(preview.items) == ["likes green tea", "prefers TypeScript"]


def test_preview_limit_and_budget(mem: Memory, clock: Any) -> None:
    for i in range(8):
        _add(mem, clock, "k", f"fact {i}: " + "y" * 36)  # 11 tokens each
    assert len(mem.retrieve_preview("k", "fact", limit=3).items) == 3
    preview = mem.retrieve_preview("k", "fact", max_tokens=25, limit=20)
    assert len(preview.items) == 2
    assert preview.total_tokens <= 25
    assert preview.budget_max_tokens == 25
    with pytest.raises(InvalidInput):
        mem.retrieve_preview("k", "fact", max_tokens=0)
    with pytest.raises(InvalidInput):
        mem.retrieve_preview("k", "fact", max_tokens=16001)


def test_preview_on_an_empty_database(mem: Memory) -> None:
    for strategy in STRATEGIES:
        for owner in ("k", None):
            preview = mem.retrieve_preview(owner, "anything at all", strategy=strategy)
            assert preview.items == []
            assert to_wire(preview)["totalTokensUsed"] == 0
            assert to_wire(preview)["budgetMaxTokens"] == 2000


# --- vector indexes and RRF fusion (with a VectorIndex protocol fake) ------------------------------

QUERY_VECTOR = np.ones(4, dtype=np.float32)


class FakeIndex:
    """A vector index returning fixed hits (it applies no filter of its own)."""

    def __init__(self, hits: list[tuple[str, float]], *, name: str = "sqlite-vec", fuse: bool = True) -> None:
        self.name = name
        self.fuse_with_keywords = fuse
        self.hits = hits
        self.calls: list[MemoryFilter] = []

    def search(
        self, vector: Vector, flt: MemoryFilter, k: int, admitted: RowAdmission | None = None
    ) -> list[VectorHit]:
        assert vector is QUERY_VECTOR
        self.calls.append(flt)
        return [VectorHit(memory_id, score) for memory_id, score in self.hits]


class BrokenIndex:
    name = "sqlite-vec"
    fuse_with_keywords = True

    def search(
        self, vector: Vector, flt: MemoryFilter, k: int, admitted: RowAdmission | None = None
    ) -> list[VectorHit]:
        raise RuntimeError("vec0 table is corrupt")


def _retrieve(mem: Memory, flt: MemoryFilter, params: RetrieveParams, index: VectorIndex) -> Retrieval:
    """`retrieve` over `mem`'s database with one vector index."""
    with database(mem) as store:
        return retrieve(
            store.memories, flt, params, vector_search=VectorSearch([index], lambda *_: QUERY_VECTOR)
        )


def _flt(clock: Any, owner: str | None = "k") -> MemoryFilter:
    return MemoryFilter(api_key_id=owner, now=to_iso(clock()))


def _params(query: str, strategy: str = "hybrid", **kwargs: Any) -> RetrieveParams:
    return RetrieveParams(query=query, strategy=strategy, max_tokens=kwargs.pop("max_tokens", 2000), **kwargs)


def test_hybrid_ranks_a_memory_found_by_both_tiers_first(mem: Memory, clock: Any) -> None:
    ts1 = _add(mem, clock, "k", "prefers TypeScript")
    ts2 = _add(mem, clock, "k", "writes TypeScript services at work every day of the week")
    dogs = _add(mem, clock, "k", "likes dogs")
    hiking = _add(mem, clock, "k", "enjoys hiking")
    _add(mem, clock, "k", "collects stamps")
    with database(mem) as store:
        bm25 = {
            m.id: -rank for m, rank in store.memories.keyword_search(_flt(clock), "TypeScript", limit=100)
        }
        weight = store.memories.keyword_weight(_flt(clock), "TypeScript")
    assert set(bm25) == {ts1.id, ts2.id}
    assert weight is not None and weight > 0.0
    tier = FakeIndex([(dogs.id, 0.9), (ts2.id, 0.8), (hiking.id, 0.4)])
    result = _retrieve(mem, _flt(clock), _params("TypeScript"), tier)
    assert result.items[0].memory.id == ts2.id
    assert {item.tier for item in result.items} == {"hybrid-rrf"}
    assert result.resolution.fallback_reason is None
    assert result.resolution.vector_store == "sqlite-vec"
    scores = {item.memory.id: item.score for item in result.items}
    # The cosines spread over the candidates (0.4 → 0, 0.9 → 1); read from SQL, a keyword
    # share is over the query's weight in the key.
    w = VECTOR_WEIGHT
    assert scores[ts2.id] == pytest.approx(w * 0.8 + (1 - w) * bm25[ts2.id] / weight)
    assert scores[dogs.id] == pytest.approx(w)
    assert scores[ts1.id] == pytest.approx((1 - w) * bm25[ts1.id] / weight)
    assert scores[hiking.id] == pytest.approx(0.0)
    assert set(scores) == {ts1.id, ts2.id, dogs.id, hiking.id}  # "collects stamps" is in neither list
    assert [item.score for item in result.items] == sorted(scores.values(), reverse=True)


def test_hybrid_item_found_by_both_tiers_shows_both_scores(mem: Memory, clock: Any) -> None:
    ts = _add(mem, clock, "k", "prefers TypeScript")
    dogs = _add(mem, clock, "k", "likes dogs")
    tier = FakeIndex([(ts.id, 0.7), (dogs.id, 0.5)])
    result = _retrieve(mem, _flt(clock), _params("TypeScript"), tier)
    by_id = {item.memory.id: item for item in result.items}
    assert by_id[ts.id].vec_score == pytest.approx(0.7)
    assert by_id[ts.id].fts_score is not None  # the Playground shows why it ranked first
    assert by_id[dogs.id].vec_score == pytest.approx(0.5)
    assert by_id[dogs.id].fts_score is None


def test_hybrid_ties_are_broken_newer_first(mem: Memory, clock: Any) -> None:
    older = _add(mem, clock, "k", "prefers TypeScript")
    newer = _add(mem, clock, "k", "likes dogs")
    tier = FakeIndex([(newer.id, 0.7)])  # the nearest candidate = the best keyword match's share
    result = _retrieve(mem, _flt(clock), _params("TypeScript", vector_weight=0.5), tier)
    assert _ids(result.items) == [newer.id, older.id]
    assert result.items[0].score == result.items[1].score == pytest.approx(0.5)


def test_the_model_s_clear_favourite_beats_a_match_on_a_common_word(mem: Memory, clock: Any) -> None:
    """A sentence model's cosines crowd together: the answer is only a little nearer than
    the rest. Spread over the candidates, that little decides; a memory sharing one common
    word of the question comes next, ahead of the model's far candidates."""
    answer = _add(mem, clock, "k", "Neovim is all I ever needed, with a handful of plugins")
    common = _add(mem, clock, "k", "the new laptop for work arrived on Monday")
    crowd = [_add(mem, clock, "k", f"talked about the weather, day {n}") for n in range(8)]
    tier = FakeIndex([(answer.id, 0.33)] + [(m.id, 0.30 - 0.01 * n) for n, m in enumerate(crowd)])
    result = _retrieve(mem, _flt(clock), _params("which editor do you use for work"), tier)
    ranked = _ids(result.items)
    assert ranked[0] == answer.id
    assert ranked.index(common.id) < ranked.index(crowd[-1].id)
    by_id = {item.memory.id: item for item in result.items}
    assert by_id[answer.id].vec_score == pytest.approx(0.33)  # the cosine shown is the model's own


def test_a_question_naming_a_stranger_keeps_the_keyword_match_of_the_name_ahead(
    mem: Memory, clock: Any
) -> None:
    """Embedded with the name, a short question is near every line that greets Mei; no
    speaker of the key is called Mei, so the name stays in the question's vector. The
    cosine then counts as it is, and the memory that matches the whole question leads."""
    answer = _add(mem, clock, "k", "Mei's favourite town is Tampere")
    greetings = [_add(mem, clock, "k", f"hi Mei, how was day {n}?") for n in range(8)]
    tier = FakeIndex([(m.id, 0.40 - 0.01 * n) for n, m in enumerate(greetings)] + [(answer.id, 0.30)])
    named = _retrieve(mem, _flt(clock), _params("What is Mei's favourite town?"), tier)
    assert _ids(named.items)[0] == answer.id


def test_the_vector_weight_comes_from_params(mem: Memory, clock: Any) -> None:
    ts = _add(mem, clock, "k", "prefers TypeScript")
    dogs = _add(mem, clock, "k", "likes dogs")
    tier = FakeIndex([(dogs.id, 0.95), (ts.id, 0.3)])
    keyword_heavy = _retrieve(mem, _flt(clock), _params("TypeScript", vector_weight=0.2), tier)
    assert _ids(keyword_heavy.items) == [ts.id, dogs.id]
    assert keyword_heavy.items[0].score == pytest.approx(0.8)  # the farthest candidate's spread is 0
    assert keyword_heavy.items[1].score == pytest.approx(0.2)
    vector_only = _retrieve(mem, _flt(clock), _params("TypeScript", vector_weight=1.0), tier)
    assert _ids(vector_only.items) == [dogs.id, ts.id]


def test_a_failing_vector_tier_degrades_to_keywords_and_says_so(mem: Memory, clock: Any) -> None:
    ts = _add(mem, clock, "k", "prefers TypeScript")
    tea = _add(mem, clock, "k", "likes green tea")
    for strategy in ("hybrid", "semantic"):
        result = _retrieve(mem, _flt(clock), _params("TypeScript", strategy), BrokenIndex())
        assert result.items[0].memory.id == ts.id
        assert result.items[0].tier == "fts5"
        assert result.resolution.fallback_reason
        assert "fail" in result.resolution.fallback_reason
    hybrid = _retrieve(mem, _flt(clock), _params("TypeScript"), BrokenIndex())
    assert _ids(hybrid.items) == [ts.id, tea.id]


@pytest.mark.parametrize(
    ("name", "fuse", "tier"),
    [("qdrant", False, "qdrant"), ("sqlite-vec", False, "vector"), ("sqlite-vec", True, "vector")],
)
def test_semantic_with_a_vector_tier_uses_vector_order(
    mem: Memory, clock: Any, name: str, fuse: bool, tier: str
) -> None:
    ts = _add(mem, clock, "k", "prefers TypeScript")
    dogs = _add(mem, clock, "k", "likes dogs")
    fake = FakeIndex([(dogs.id, 0.9), (ts.id, 0.4)], name=name, fuse=fuse)
    result = _retrieve(mem, _flt(clock), _params("pets", "semantic"), fake)
    assert _ids(result.items) == [dogs.id, ts.id]
    assert {item.tier for item in result.items} == {tier}
    assert [item.vec_score for item in result.items] == [pytest.approx(0.9), pytest.approx(0.4)]
    assert result.resolution.fallback_reason is None


def test_hybrid_with_a_non_fusing_tier_answers_from_that_tier(mem: Memory, clock: Any) -> None:
    ts = _add(mem, clock, "k", "prefers TypeScript")
    dogs = _add(mem, clock, "k", "likes dogs")
    fake = FakeIndex([(dogs.id, 0.9)], name="qdrant", fuse=False)
    result = _retrieve(mem, _flt(clock), _params("TypeScript"), fake)
    assert _ids(result.items) == [dogs.id]
    assert result.items[0].tier == "qdrant"
    assert ts.id not in _ids(result.items)


def test_min_score_drops_weak_vector_hits(mem: Memory, clock: Any) -> None:
    ts = _add(mem, clock, "k", "prefers TypeScript")
    dogs = _add(mem, clock, "k", "likes dogs")
    fake = FakeIndex([(dogs.id, 0.9), (ts.id, 0.2)])
    result = _retrieve(mem, _flt(clock), _params("pets", "semantic", min_score=0.5), fake)
    assert _ids(result.items) == [dogs.id]
    hybrid = _retrieve(mem, _flt(clock), _params("pets", min_score=0.5), fake)
    assert _ids(hybrid.items) == [dogs.id]


def test_vector_tier_receives_the_base_filter(mem: Memory, clock: Any) -> None:
    _add(mem, clock, "k", "prefers TypeScript")
    fake = FakeIndex([])
    flt = MemoryFilter(
        api_key_id="k", now=to_iso(clock()), session_id="s1", updated_since="2026-01-01T00:00:00.000Z"
    )
    result = _retrieve(mem, flt, _params("TypeScript", "semantic"), fake)
    assert fake.calls == [flt]
    assert result.resolution.fallback_reason  # the tier found nothing: say so


def test_vector_hits_outside_the_filter_are_never_returned(mem: Memory, clock: Any) -> None:
    # SPEC §4 / REF §17.7: every tier applies the same filter. A vector index can hold
    # stale entries (another key, expired, out of retention); they must not be injected.
    mine = _add(mem, clock, "k", "prefers TypeScript")
    theirs = _add(mem, clock, "other", "secret: prefers Kotlin")
    expired = _add(mem, clock, "k", "expired TypeScript note", expires_at=clock() + timedelta(minutes=1))
    clock.advance(minutes=5)
    fake = FakeIndex([(theirs.id, 0.99), (expired.id, 0.98), (mine.id, 0.5)])
    for strategy in ("semantic", "hybrid"):
        result = _retrieve(mem, _flt(clock), _params("TypeScript", strategy), fake)
        assert _ids(result.items) == [mine.id], strategy


def test_vector_hits_for_deleted_memories_are_dropped(mem: Memory, clock: Any) -> None:
    ts = _add(mem, clock, "k", "prefers TypeScript")
    gone = _add(mem, clock, "k", "likes dogs")
    mem.delete(gone.id)
    fake = FakeIndex([(gone.id, 0.9), (ts.id, 0.8)])
    result = _retrieve(mem, _flt(clock), _params("pets", "semantic"), fake)
    assert _ids(result.items) == [ts.id]


def test_estimate_tokens_matches_ref() -> None:
    assert [estimate_tokens(t) for t in ("", "abcd", "abcde", "x" * 100, None)] == [0, 1, 2, 25, 0]
    assert math.ceil(len("prefers TypeScript") / 4) == estimate_tokens("prefers TypeScript")


def test_retrieval_reads_a_second_process_writes(db_path: Path, mem: Memory, clock: Any) -> None:
    other = open_memory(db_path, clock=clock)
    try:
        written = other.add("k", "prefers TypeScript")
    finally:
        other.close()
    assert _ids(mem.retrieve("k", "TypeScript", strategy="semantic")) == [written.id]
