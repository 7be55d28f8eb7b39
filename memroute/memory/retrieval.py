"""Retrieval: rank a key's memories for a query and pack them into a token budget.

Tiers, best first: the vector indexes (when one is configured: Qdrant, then
sqlite-vec), FTS5 keyword matches, then the newest memories. Every tier reads through
the same `MemoryFilter` (owner per scope, not expired, within retention), so no tier
can leak another key's or an expired memory. Retrieval never embeds text: the query
vector comes from the caller's `VectorSearch`.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Callable, Collection, Iterable, Iterator, Sequence
from dataclasses import dataclass, replace
from typing import Protocol

from memroute.errors import MemrouteError
from memroute.memory.lines import LineDeduper, Rendered, RenderedLines, render
from memroute.memory.said import AlreadySaid
from memroute.models.owners import owner_for_logs
from memroute.models.records import (
    MemoryFilter,
    MemoryRecord,
    Resolution,
    Retrieval,
    RetrievedItem,
)
from memroute.store.fts import query_tokens
from memroute.vectors import RowAdmission, Vector, VectorIndex

log = logging.getLogger("memroute.memory.retrieval")

MAX_BUDGET_TOKENS = 16_000
DEFAULT_LIMIT = 100
KEYWORD_CANDIDATES = 100
MEANING_CANDIDATES = 50  # the nearest memories by meaning fused with the keyword matches
RECENT_FIRST_BATCH = 20
RECENT_MAX_BATCH = 200
RECENT_SCAN_CAP = 2_000
MAX_MISFITS = 50
VECTOR_WEIGHT = 0.65  # hybrid: a sentence model's share of a memory's score (see `_fused`)
WEAK_SOURCE_WEIGHTS = {"static": 0.25, "hashing": 0.1}  # ... of a source that ranks like keywords or worse
STRANGE_NAME_WEIGHT = 0.5  # ... at most, of the raw cosine, for a question naming a stranger (`_fused`)
STRANGE_NAME_HEAD = 2  # ... when each side's best two lead
MEANING_WEIGHT = 0.5  # the meanings' share, fused with the keyword matches (see `_matched`)
HEAD_PER_TIER = 3  # keywords and meanings: each one's best lead their fused ranking (see `_fuse`)
NAMED_SPEAKER_WEIGHT = 2.0  # keyword: bm25 × this for a named person's own memories
NAMED_COSINE_WEIGHT = 1.2  # vectors, meanings: cosine × this for a named person's own memories
DATED_WEIGHT = 1.5  # keyword: bm25 × this for episodic memories when the question is about time
# Words that make a question one about time ("may" and "date" are left out: too often not).
_TIME_WORDS = re.compile(
    r"\b(?:when|ago|yesterday|today|tonight|last|since|until|how long|recently|earlier|year|years"
    r"|month|months|week|weeks|weekend|january|february|march|april|june|july|august|september"
    r"|october|november|december|monday|tuesday|wednesday|thursday|friday|saturday|sunday)\b"
)
KEYWORDS_ONLY = " — keyword search (FTS5) only"
NO_VECTOR_REASON = "no embedding source configured" + KEYWORDS_ONLY
# What a reason ending in `KEYWORDS_ONLY` says instead when the key's word vectors found
# memories by meaning too (store/key_meanings.py).
WITH_MEANINGS = " — keyword search (FTS5) and meanings from word vectors"


class MemoryReader(Protocol):
    def recent(
        self, flt: MemoryFilter, *, limit: int, offset: int = 0, without_turns: bool = False
    ) -> list[MemoryRecord]: ...

    def keyword_search(
        self, flt: MemoryFilter, query: str | None, *, limit: int
    ) -> list[tuple[MemoryRecord, float]]: ...

    def get_many(self, ids: Sequence[str]) -> dict[str, MemoryRecord]: ...

    def meaning_search(
        self, flt: MemoryFilter, query: str | None, *, limit: int, leave_out: Collection[str] = ()
    ) -> list[tuple[MemoryRecord, float]]:
        """The memories nearest to `query` by meaning without an embedding model (the
        key's word vectors, store/key_meanings.py), with their cosine, nearest first, the
        words of `leave_out` (case-folded) not counted; empty where the reader has none."""
        ...

    def speakers(self, flt: MemoryFilter) -> Collection[str]:
        """The first word (case-folded) of each speaker `flt`'s key has memories of
        (`metadata.speaker`); empty where the reader does not know them."""
        ...

    def keyword_weight(self, flt: MemoryFilter, query: str | None) -> float | None:
        """The bm25 a memory would score by holding every term of `query` once (the sum of
        their idf in `flt`'s key), or None when the statistics are not the key's own.
        Asked right after `keyword_search` with the same key and query."""
        ...

    def row_admission(self, flt: MemoryFilter) -> RowAdmission | None:
        """How a vector index can tell which of its rows `flt` admits from what this reader
        already holds (None: the index reads the rows itself)."""
        ...


#: (query, documents) → [(document index, relevance score)], best first; raises on failure.
Reranker = Callable[[str, Sequence[str]], list[tuple[int, float]]]


@dataclass(frozen=True, slots=True)
class VectorSearch:
    """The vector indexes to ask for one query, best first, and the query as each expects it.

    `query_vector(index, flt, text)` gives `text` (the query as retrieval asks it: see
    `Asked`) embedded with the source `index` was filled with (the service embeds it once
    per source), after `index` has taken in the latest writes of `flt`'s key, so a memory
    added a moment ago is found. It raises when that fails; retrieval then says so and
    asks the next index."""

    indexes: Sequence[VectorIndex]
    query_vector: Callable[[VectorIndex, MemoryFilter, str], Vector]


@dataclass(slots=True)
class RetrieveParams:
    query: str | None
    strategy: str = "hybrid"  # exact | semantic | hybrid (already validated)
    max_tokens: int = 2000
    limit: int = DEFAULT_LIMIT
    min_score: float | None = None
    vector_weight: float = VECTOR_WEIGHT  # hybrid: the embedding model's share of the fused score
    vector_k: int = KEYWORD_CANDIDATES  # nearest neighbours asked of the vector tier
    # The request's own messages, normalised, never injected again (an `AlreadySaid` that
    # knows what an earlier request of the conversation held: see memroute/memory/said.py).
    already_said: str | AlreadySaid = ""


@dataclass(slots=True)
class _Candidate:
    memory: MemoryRecord
    score: float
    tier: str
    vec_score: float | None = None
    fts_score: float | None = None


@dataclass(frozen=True, slots=True)
class Asked:
    """A query as the tiers ask it: `names` are its words that name a speaker of the key,
    `topic` the query without them, what vectors and meanings compare. A name says whose
    memory answers, not what it says: in "Where is Greta from?" it would pull in the
    lines that greet Greta, while Greta's own words rarely hold her name."""

    text: str
    names: frozenset[str]
    topic: str

    @property
    def left_out(self) -> frozenset[str]:
        """The names the topic leaves out (none when the query is nothing but names)."""
        return self.names if self.topic != self.text else frozenset()


def asked_of(reader: MemoryReader, flt: MemoryFilter, query: str) -> Asked:
    """`query` as the tiers ask it in `flt`'s key (`Asked`)."""
    tokens = query_tokens(query)
    speakers = reader.speakers(flt) if tokens else ()
    names = frozenset(t for t in tokens if t in speakers)
    if not names or len(names) == len(tokens):
        return Asked(query, names, query)
    pattern = r"\b(?:" + "|".join(re.escape(n) for n in sorted(names)) + r")(?:['’]s)?\b"
    return Asked(query, names, " ".join(re.sub(pattern, " ", query, flags=re.IGNORECASE).split()))


_WORD = re.compile(r"[^\W\d_][\w'’-]*")
_SENTENCE_START = frozenset('.!?:;"“(')
_POSSESSIVE = re.compile(r"['’]s$")


def _holds_strange_name(query: str, names: frozenset[str]) -> bool:
    """Whether `query` holds a capitalised word that starts no sentence, is neither "I" nor
    an acronym, and is not the name of one of the key's speakers (`names`): a person or a
    place the key does not know as a speaker, which the sentence vector embeds with it."""
    for match in _WORD.finditer(query):
        word = match.group()
        if not word[0].isupper() or word.isupper() or word[:2] in ("I'", "I’"):
            continue
        before = match.start() - 1
        while before >= 0 and query[before].isspace():
            before -= 1
        if before < 0 or query[before] in _SENTENCE_START:
            continue
        if _POSSESSIVE.sub("", word).casefold() not in names:
            return True
    return False


def vector_weight_of(source: str | None) -> float:
    """Hybrid's share for the cosine of an embedding source: `VECTOR_WEIGHT` for a sentence
    model (the bundled MiniLM, a provider's), less for the static and hashing sources,
    whose nearest memories are worth less than the keyword matches on conversations."""
    return WEAK_SOURCE_WEIGHTS.get(source or "", VECTOR_WEIGHT)


def clamp_budget(max_tokens: int) -> int:
    return min(max(max_tokens, 1), MAX_BUDGET_TOKENS)


def pack(
    candidates: Iterable[_Candidate],
    max_tokens: int,
    limit: int,
    already_said: str | AlreadySaid = "",
    rendered: RenderedLines | None = None,
) -> list[RetrievedItem]:
    """Walk the ranking and take every memory that still fits the budget.

    Smaller memories further down fill the space a large one left. The budget counts
    each memory as it is injected (a kept turn with its date and speaker) and is never
    exceeded: a best memory larger than the whole budget is cut to fit and marked
    truncated. A memory whose text `already_said` holds (the request's own messages,
    normalised) is skipped, and so is a near duplicate of a memory already taken. The
    walk stops at `limit`, at a full budget, or after `MAX_MISFITS` memories in a row
    that did not fit (the budget is as good as full; reading further only costs time).
    `rendered` remembers how memories read across calls (each is rendered here without it).
    """
    of = rendered.of if rendered is not None else render
    out: list[RetrievedItem] = []
    used = 0
    misfits = 0
    seen: set[str] = set()
    lines = LineDeduper()
    said = already_said if isinstance(already_said, AlreadySaid) else AlreadySaid(already_said)
    for cand in candidates:
        memory = cand.memory
        if memory.id in seen:
            continue
        seen.add(memory.id)
        form = of(memory)
        if not out and form.tokens > max_tokens:
            if _unwanted(memory.content, form, said, lines):
                continue
            room = max(1, max_tokens * 4 - (len(form.line) - len(memory.content)))
            cut = replace(memory, content=memory.content[:room])
            cut_form = render(cut)
            out.append(_item(cand, cut, cut_form, min(max_tokens, cut_form.tokens), truncated=True))
            break
        if used + form.tokens > max_tokens:
            misfits += 1
            if misfits >= MAX_MISFITS:
                break
            continue
        if _unwanted(memory.content, form, said, lines):
            continue
        out.append(_item(cand, memory, form, form.tokens))
        used += form.tokens
        misfits = 0
        if len(out) >= limit or used >= max_tokens:
            break
    return out


def _unwanted(content: str, form: Rendered, said: AlreadySaid, lines: LineDeduper) -> bool:
    """Whether the request already holds `content` (rendered as `form`) or it repeats a
    line taken (else taken)."""
    return said.holds(form.normal) or lines.repeats(content, form.words)


def _item(
    cand: _Candidate, memory: MemoryRecord, form: Rendered, tokens: int, truncated: bool = False
) -> RetrievedItem:
    return RetrievedItem(
        memory=memory,
        line=form.line,
        framed=form.framed,
        score=cand.score,
        tokens=tokens,
        tier=cand.tier,
        vec_score=cand.vec_score,
        fts_score=cand.fts_score,
        truncated=truncated,
    )


def _recent(reader: MemoryReader, flt: MemoryFilter, *, without_turns: bool = False) -> Iterator[_Candidate]:
    """Newest first (kept turns left out with `without_turns`), fetched lazily in batches:
    a small one first (after the keyword matches a few memories often fill the budget),
    then each twice the last, up to `RECENT_MAX_BATCH` (never more than about twice what
    the budget takes is read)."""
    offset, size = 0, RECENT_FIRST_BATCH
    while offset < RECENT_SCAN_CAP:
        batch = reader.recent(flt, limit=size, offset=offset, without_turns=without_turns)
        for memory in batch:
            yield _Candidate(memory, 0.0, "recent")
        if len(batch) < size:
            return
        offset, size = offset + size, min(size * 2, RECENT_MAX_BATCH)


def _keyword(reader: MemoryReader, flt: MemoryFilter, query: str | None) -> list[_Candidate]:
    if not query:
        return []
    rows = weigh_for_question(reader.keyword_search(flt, query, limit=KEYWORD_CANDIDATES), query)
    return [_Candidate(memory, -rank, "fts5", fts_score=rank) for memory, rank in rows]


def weigh_for_question(
    rows: Sequence[tuple[MemoryRecord, float]], query: str
) -> Sequence[tuple[MemoryRecord, float]]:
    """Keyword matches (memory, bm25 rank: lower is better) weighed by what the question
    asks, re-sorted (ties keep their order):

    - what a person the question names said (`metadata.speaker`: "What did Caroline
      research?") counts `NAMED_SPEAKER_WEIGHT` times: a question about someone is mostly
      answered by their own words, not by the lines that merely address them by name;
    - a question about time ("when", "last week", "in May", "how long ago") counts
      episodic memories (what happened, with its date) `DATED_WEIGHT` times, when the
      matches are not all episodic (a uniform weight would only tip hybrid's balance)."""
    named = set(query_tokens(query))
    by_named = [bool(named) and memory.speaker_word() in named for memory, _rank in rows]
    dated = (
        _TIME_WORDS.search(query.casefold()) is not None
        and len({m.type == "episodic" for m, _r in rows}) == 2
    )
    if not any(by_named) and not dated:
        return rows
    weighted = [
        (
            memory,
            rank
            * (NAMED_SPEAKER_WEIGHT if named_speaker else 1.0)
            * (DATED_WEIGHT if dated and memory.type == "episodic" else 1.0),
        )
        for (memory, rank), named_speaker in zip(rows, by_named, strict=True)
    ]
    weighted.sort(key=lambda row: row[1])
    return weighted


def _vector_candidates(
    reader: MemoryReader,
    search: VectorSearch,
    index: VectorIndex,
    flt: MemoryFilter,
    params: RetrieveParams,
    asked: Asked,
) -> list[_Candidate]:
    hits = index.search(
        search.query_vector(index, flt, asked.topic), flt, params.vector_k, reader.row_admission(flt)
    )
    if params.min_score is not None:
        hits = [h for h in hits if h.score >= params.min_score]
    # The index should filter already; checking again means a stale index entry can never leak
    # another key's or an expired memory. Hits the index read whole are not read again.
    read = {h.memory_id: h.memory for h in hits if h.memory is not None}
    unread = [h.memory_id for h in hits if h.memory is None]
    if unread:
        read.update(reader.get_many(unread))
    found = {i: m for i, m in read.items() if flt.admits(m)}
    label = "qdrant" if index.name == "qdrant" else "vector"
    candidates = [
        _Candidate(found[h.memory_id], h.score, label, vec_score=h.score)
        for h in hits
        if h.memory_id in found
    ]
    return _weigh_named(candidates, asked)


def _weigh_named(candidates: list[_Candidate], asked: Asked) -> list[_Candidate]:
    """Candidates by cosine, a named person's own memories weighing `NAMED_COSINE_WEIGHT`
    times theirs (re-sorted; ties keep their order)."""
    names = asked.names
    if not names:
        return candidates
    for c in candidates:
        if c.memory.speaker_word() in names:
            c.score *= NAMED_COSINE_WEIGHT
    candidates.sort(key=lambda c: c.score, reverse=True)
    return candidates


def _fused(
    reader: MemoryReader, flt: MemoryFilter, params: RetrieveParams, asked: Asked, vector: list[_Candidate]
) -> list[_Candidate]:
    """The vector tier's candidates fused with the ranking without a model (keyword matches,
    fused with the matches by meaning where the key's index has them: `_matched`):
    `params.vector_weight` × the cosine spread over the candidates (`_spread`) + the rest ×
    the other ranking's score, by score alone. A question that names a stranger (`_holds_strange_name`)
    is embedded with the name, which can outweigh the rest of a short question: there the
    cosine counts as it is, at most `STRANGE_NAME_WEIGHT`, and each side's best
    `STRANGE_NAME_HEAD` lead, so the keyword matches of the name keep their say."""
    keyword = _keyword(reader, flt, params.query)
    meaning = _meaning(reader, flt, asked)
    cosine: Callable[[_Candidate], float]
    if _holds_strange_name(asked.text, asked.names):
        cosine, weight, head = _score, min(params.vector_weight, STRANGE_NAME_WEIGHT), STRANGE_NAME_HEAD
    else:
        cosine, weight, head = _spread(vector), params.vector_weight, 0
    if meaning:
        matched = _matched(reader, flt, params.query, keyword, meaning)
        return _fuse(vector, matched, weight, _score, head=head, tier="hybrid-rrf", first_score=cosine)
    share = _keyword_share(keyword, reader.keyword_weight(flt, params.query))
    return _fuse(vector, keyword, weight, share, head=head, tier="hybrid-rrf", first_score=cosine)


def _spread(candidates: Sequence[_Candidate]) -> Callable[[_Candidate], float]:
    """A candidate's score mapped onto [0, 1] over `candidates`, the farthest 0 and the
    nearest 1 (1 when they are all equal). A model's cosines crowd together (most of a
    key's lines are 0.1–0.4 from any question), so the raw cosine says little beside a
    keyword share; how much nearer a memory is than the rest of the key's candidates says
    more."""
    low = min((c.score for c in candidates), default=0.0)
    span = max((c.score for c in candidates), default=0.0) - low
    if span <= 0.0:
        return lambda _c: 1.0
    return lambda c: (c.score - low) / span


def _matched(
    reader: MemoryReader,
    flt: MemoryFilter,
    query: str | None,
    keyword: Sequence[_Candidate],
    meaning: Sequence[_Candidate],
) -> list[_Candidate]:
    """The keyword matches fused with the matches by meaning (`_fuse`, `MEANING_WEIGHT`)."""
    share = _keyword_share(keyword, reader.keyword_weight(flt, query))
    return _fuse(meaning, keyword, MEANING_WEIGHT, share)


def _keyword_share(
    keyword: Sequence[_Candidate], query_weight: float | None
) -> Callable[[_Candidate], float]:
    """A keyword match's share of the query: its bm25 over `query_weight` (the sum of the
    query's idf in the key: how much of the query it matches), or over the best match's
    bm25 when the key's statistics are unknown."""
    scale = query_weight or max((-(c.fts_score or 0.0) for c in keyword), default=0.0)
    factor = 1.0 / scale if scale > 0.0 else 0.0
    return lambda c: factor * -(c.fts_score or 0.0)


def _score(candidate: _Candidate) -> float:
    return candidate.score


def _fuse(
    first: Sequence[_Candidate],
    second: Sequence[_Candidate],
    weight: float,
    second_score: Callable[[_Candidate], float],
    *,
    head: int = HEAD_PER_TIER,
    tier: str | None = None,
    first_score: Callable[[_Candidate], float] = _score,
) -> list[_Candidate]:
    """Every candidate of both lists scored `weight` × its `first_score` in `first` + (1 −
    `weight`) × its `second_score` in `second` (0 in a list that did not find it). Best
    first (equal scores newer first), except that each list's first `head` lead: a
    question that names two things matches each answer with half its words, and a strong
    match of one tier must not sink below the other's near misses. Each is labelled
    `tier`, or else with the tier that found it (`second`'s when both did); it keeps the
    cosine of `first` (else of `second`) and the keyword score. The candidates given are
    scored in place (each list is made for one ranking)."""
    merged: dict[str, _Candidate] = {}
    for c in first:
        c.score = weight * first_score(c)
        c.tier = tier or c.tier
        merged[c.memory.id] = c
    rest = 1.0 - weight
    for c in second:
        part = rest * second_score(c)
        found = merged.get(c.memory.id)
        if found is None:
            c.score = part
            c.tier = tier or c.tier
            merged[c.memory.id] = c
        else:
            found.score += part
            if c.fts_score is not None:
                found.fts_score = c.fts_score
            found.tier = tier or c.tier
    leading = {c.memory.id for c in [*first[:head], *second[:head]]}
    ranked = list(merged.values())
    ranked.sort(key=lambda c: (c.memory.id in leading, c.score, c.memory.updated_at), reverse=True)
    return ranked


def _meaning(reader: MemoryReader, flt: MemoryFilter, asked: Asked | None) -> list[_Candidate]:
    if asked is None:
        return []
    rows = reader.meaning_search(flt, asked.text, limit=MEANING_CANDIDATES, leave_out=asked.left_out)
    candidates = [_Candidate(memory, cosine, "meaning", vec_score=cosine) for memory, cosine in rows]
    return _weigh_named(candidates, asked)


@dataclass(slots=True)
class _Outcome:
    """What one retrieval found so far, and why it fell back where it did."""

    vector_store: str
    ranked: Iterable[_Candidate] = ()
    answered: bool = False
    reranked: bool = False
    reason: str | None = None

    def note(self, reason: str) -> None:
        self.reason = join_reasons(self.reason, reason)


def retrieve(
    reader: MemoryReader,
    flt: MemoryFilter,
    params: RetrieveParams,
    *,
    vector_search: VectorSearch | None = None,
    vector_unavailable_reason: str = NO_VECTOR_REASON,
    reranker: Reranker | None = None,
    rendered: RenderedLines | None = None,
) -> Retrieval:
    """Rank and pack. Never raises for a vector-index or rerank failure: it degrades and says why.

    The indexes of `vector_search` are tried in order (Qdrant, then sqlite-vec): the first
    with a match answers; the last falls back to FTS5. `reranker` (optional) reorders the
    vector index's candidates (never the SQL-only paths). `rendered`: see `pack`."""
    indexes = vector_search.indexes if vector_search is not None else ()
    outcome = _Outcome(vector_store=indexes[0].name if indexes else "none")
    asked = asked_of(reader, flt, params.query) if params.strategy != "exact" and params.query else None
    if asked is not None and vector_search is not None and indexes:
        _ask_indexes(reader, vector_search, flt, params, asked, outcome, reranker)
    elif params.strategy != "exact":
        outcome.reason = vector_unavailable_reason if params.query else "no query — newest memories"
    if not outcome.answered:
        _without_vectors(reader, flt, params, asked, outcome)
    items = pack(outcome.ranked, clamp_budget(params.max_tokens), params.limit, params.already_said, rendered)
    log.debug(
        "memory.retrieval.complete apiKeyId=%s count=%d strategy=%s",
        None if flt.api_key_id is None else owner_for_logs(flt.api_key_id),
        len(items),
        params.strategy,
    )
    resolution = Resolution(
        embedding_source=None,
        embedding_model=None,
        vector_store=outcome.vector_store,
        strategy_used=params.strategy,
        rerank_applied=outcome.reranked,
        fallback_reason=outcome.reason,
    )
    return Retrieval(items=items, resolution=resolution, budget_max_tokens=params.max_tokens)


def _ask_indexes(
    reader: MemoryReader,
    search: VectorSearch,
    flt: MemoryFilter,
    params: RetrieveParams,
    asked: Asked,
    outcome: _Outcome,
    reranker: Reranker | None,
) -> None:
    """Ask each index in turn until one has a match; note why each one before it did not."""
    indexes = search.indexes
    for position, index in enumerate(indexes):
        outcome.vector_store = index.name
        last = position == len(indexes) - 1
        then = "degraded to FTS5" if last else f"falling back to {indexes[position + 1].name}"
        hybrid = params.strategy == "hybrid" and index.fuse_with_keywords
        # Hybrid asks the vector tier as deep as the keyword tier.
        depth = max(params.vector_k, KEYWORD_CANDIDATES) if hybrid else params.vector_k
        try:
            vector = _vector_candidates(reader, search, index, flt, replace(params, vector_k=depth), asked)
            found = _fused(reader, flt, params, asked, vector) if hybrid else vector
        except Exception as exc:  # a vector index must never break retrieval
            log.warning("memory.retrieval.vector.fail tier=%s error=%s", index.name, exc)
            detail = exc.message if isinstance(exc, MemrouteError) else type(exc).__name__
            outcome.note(f"{index.name} failed ({detail}) — {then}")
            continue
        if not found:
            outcome.note(f"{index.name} returned no match" + ("" if last else f" — {then}"))
            continue
        outcome.ranked, outcome.answered = found, True
        if reranker is not None and params.query:
            outcome.ranked, outcome.reranked = _rerank(reranker, params.query, found)
            if not outcome.reranked:
                outcome.note("rerank failed — vector order kept")
        return


def _without_vectors(
    reader: MemoryReader, flt: MemoryFilter, params: RetrieveParams, asked: Asked | None, outcome: _Outcome
) -> None:
    """The SQL-only ranking: the newest (exact), keyword matches else the newest (semantic),
    or keyword matches followed by the newest facts to fill the rest of the budget (hybrid)."""
    if params.strategy == "exact":
        outcome.ranked = _recent(reader, flt)
    elif params.strategy == "semantic":
        keyword = _keyword(reader, flt, params.query)
        if keyword:
            outcome.ranked = keyword
        else:
            outcome.ranked = _recent(reader, flt)
            if params.query:
                outcome.note("no keyword match — newest memories instead")
    else:
        # Keyword matches, fused with the memories nearest by meaning where the key's index
        # has word vectors; the newest memories fill what they leave of the budget, but not
        # kept turns: they are the conversation itself, worth injecting only when they match.
        keyword = _keyword(reader, flt, params.query)
        meaning = _meaning(reader, flt, asked)
        matched: Sequence[_Candidate] = keyword
        if meaning:
            matched = _matched(reader, flt, params.query, keyword, meaning)
            if outcome.reason is not None and outcome.reason.endswith(KEYWORDS_ONLY):
                outcome.reason = outcome.reason[: -len(KEYWORDS_ONLY)] + WITH_MEANINGS
        outcome.ranked = _chain(matched, _recent(reader, flt, without_turns=True))


RERANK_CANDIDATES = 100


def _rerank(reranker: Reranker, query: str, found: list[_Candidate]) -> tuple[list[_Candidate], bool]:
    """The candidates in the reranker's order with its scores (unmentioned ones after, in
    their order), and whether it worked; on any failure the original order."""
    head = found[:RERANK_CANDIDATES]
    try:
        order = reranker(query, [c.memory.content for c in head])
    except Exception as exc:  # fail-open: rerank is an improvement, never a requirement
        log.warning("memory.rerank.failed error=%s", exc)
        return found, False
    if not order:
        return found, False
    placed: list[_Candidate] = []
    seen: set[int] = set()
    for index, score in order:
        if index not in seen:
            seen.add(index)
            placed.append(replace(head[index], score=score))
    rest = [c for i, c in enumerate(head) if i not in seen]
    return [*placed, *rest, *found[RERANK_CANDIDATES:]], True


def _chain(first: Iterable[_Candidate], rest: Iterable[_Candidate]) -> Iterator[_Candidate]:
    yield from first
    yield from rest


def join_reasons(*reasons: str | None) -> str | None:
    """The given reasons in order, joined by "; " (None when there is none)."""
    return "; ".join(r for r in reasons if r) or None
