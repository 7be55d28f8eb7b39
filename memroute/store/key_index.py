"""Keys' memories held in process for recall, ranked with each key's own term statistics.

A `KeyIndex` holds one key's memories, their FTS tokens (the FTS table's own tokenizer)
and its posting lists, so keyword search is bm25 over that key alone (its own document
count, frequencies and lengths, not every tenant's) without a SQL statement, a
question's words also match their related words among the key's own
(`store/related_words.py`, with word vectors the service passes in), and the
newest-first fill reads from a sorted list. Before each use it catches up with what any
connection or process changed, from the store's change log (`ChangeFeed`, see
store/contract.py); an index older than the log's pruned part is rebuilt.

`KeyIndexes` keeps indexes of the keys being recalled, up to a number of memories in
all. A key of up to `INLINE_BUILD_MAX` memories is indexed at its first recall while
that much room is free (a few ms, once: a person who chats slowly gets the index, and
its related words, from the first question). Otherwise a key is indexed once it is
recalled `ADMIT_AFTER` times within `BUSY_S` seconds (once per `MEMORIES_PER_RECALL` of
its memories for a key big enough to be built in the background; a chat's key is
recalled at every turn; a key asked once in a while is cheaper to read from SQL than to
index) and fits, displacing keys idle for `BUSY_S`; when the room is taken by keys
recalled in the last `BUSY_S` seconds, the key is read from SQL instead (indexing keys
in turn would cost more than it saves).
"""

from __future__ import annotations

import bisect
import gc
import logging
import math
import threading
import time
from collections import Counter, OrderedDict
from collections.abc import Callable, Collection, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

import apsw
import numpy as np

from memroute.errors import WouldBlock
from memroute.lru import RecentCounts
from memroute.models.records import TURN_KEY_PREFIX, MemoryFilter, MemoryRecord
from memroute.store.contract import ChangeFeed, MemoryStore
from memroute.store.db import BRIEF_WAIT_S
from memroute.store.fts import query_words
from memroute.store.key_meanings import KeyMeanings
from memroute.store.key_rank import K1, B
from memroute.store.memory_sql import row_to_memory
from memroute.store.related_words import KeyVocabulary, Related, WordVectorsFn, asked_words
from memroute.store.related_words import related as related_words

log = logging.getLogger("memroute.store.key_index")

# The FTS table's tokenizer (migration 0001): the same tokens, stems and folding.
TOKENIZER = "porter"
TOKENIZER_ARGS = ["unicode61", "remove_diacritics", "2"]
# A key with more memories than this is indexed by a background thread (~16–25 ms per
# 1,000), its recalls reading SQL meanwhile; a smaller one on the recall that admits it
# (a few ms, once: more would show in the tail of recall's latency).
INLINE_BUILD_MAX = 200
# A build lets other threads run after each this many memories (~1 ms): a build on the
# request path for the time it takes them to ask, a background build for
# `BACKGROUND_PAUSE_S` (while it holds the interpreter, a recall waits up to 5 ms at each
# of its SQL statements).
YIELD_EVERY = 10
BACKGROUND_PAUSE_S = 0.001
# After each background build the builder rests this many times as long as the build
# took, so builds take at most a fifth of a core (with 1,000 keys recalled at random,
# building each key that fits at its first recall without rest tripled recall's p99).
BUILD_REST = 4.0
# A key recalled this recently keeps its index even when another key needs the room.
BUSY_S = 30.0
# Recalls of a key within `BUSY_S` before it is indexed (the earlier ones read SQL).
ADMIT_AFTER = 3
# A key too big to index on a recall is indexed in the background at its first recall
# while it fits in the room left; to displace idle keys' indexes it must be recalled within
# `BUSY_S` once per this many of its memories (1,000 memories: 15 recalls): its build costs
# ~16–25 ms of CPU per 1,000 memories and slows every recall of the process meanwhile,
# while a recall from SQL costs only ~1.5 ms more than from the index, so displacing pays
# only for a busy key (with 1,000 keys recalled at random, admitting at the third recall
# tripled recall's p99).
MEMORIES_PER_RECALL = 64
# Keys whose recent recalls are counted towards `ADMIT_AFTER`, at most.
COUNTED_KEYS = 10_000
# A recall that must not work long (`KeyIndexes.reader(light=True)`, the gateway's event
# loop) reads a held index of at most this many memories (recall ~2–3 ms at 10,000) that
# has at most `LIGHT_CATCH_UP` changes to take in first.
LIGHT_MEMORIES = 10_000
LIGHT_CATCH_UP = 64

_Order = tuple[str, int]  # (updated_at, rowid): the newest-first order, reversed
Word = tuple[str, ...]  # a query word's stemmed forms: a memory holding any of them holds the word


@dataclass(frozen=True, slots=True)
class Question:
    """A question as searching one key needs it: its `terms` (with their `related` stems),
    the stem of each word worth a vector (`asked`) with those vectors (`rows`: None
    without word vectors)."""

    text: str | None
    terms: list[Word]
    related: list[Related]
    asked: list[str]
    rows: np.ndarray | None
    asked_as_typed: list[str]


class _Doc:
    __slots__ = ("fact", "length", "memory", "order", "speaker", "terms")

    def __init__(self, memory: MemoryRecord, terms: dict[str, int], length: int, rowid: int) -> None:
        self.memory = memory
        self.terms = terms
        self.length = length
        self.order: _Order = (memory.updated_at, rowid)
        self.fact = not memory.key.startswith(TURN_KEY_PREFIX)
        self.speaker = memory.speaker_word()  # read once here; every copy of the record keeps it


class KeyIndex:
    """One key's memories with their postings and newest-first order. Callers hold `lock`."""

    def __init__(self, owner: str) -> None:
        self.owner = owner
        self.lock = threading.Lock()
        self.used = time.monotonic()
        self.clear()

    def __len__(self) -> int:
        return len(self._docs)

    @contextmanager
    def locked(self, brief: bool = False) -> Iterator[None]:
        """Hold `lock`; with `brief`, another thread's hold is waited for `BRIEF_WAIT_S` at
        most (its searches are short), else WouldBlock."""
        if not self.lock.acquire(timeout=BRIEF_WAIT_S if brief else -1):
            raise WouldBlock("another thread is using the key's index")
        try:
            yield
        finally:
            self.lock.release()

    def put(
        self, rowid: int, memory: MemoryRecord, terms: dict[str, int], length: int, spellings: dict[str, str]
    ) -> None:
        """Hold a memory with its stems' counts, its length and each stem's spelling (a
        memory held before keeps its meaning when its words did not change: recording
        that it was recalled changes only its counts)."""
        held = self._docs.get(rowid)
        same_words = held is not None and held.terms == terms
        self.drop(rowid, keep_meaning=same_words)
        if not same_words:
            vocabulary = self.vocabulary
            for stem, spelling in spellings.items():
                vocabulary.add(stem, spelling)
            self.meanings.add(rowid, sum(count for stem, count in terms.items() if vocabulary.knows(stem)))
        doc = _Doc(memory, terms, length, rowid)
        self._docs[rowid] = doc
        if doc.speaker:
            self._speakers[doc.speaker] += 1
        self._rowids[memory.id] = rowid
        self._lengths[rowid] = length
        for term, count in terms.items():
            self._postings.setdefault(term, {})[rowid] = count
        self._total_length += length
        bisect.insort(self._newest, doc.order)
        if doc.fact:
            bisect.insort(self._newest_facts, doc.order)

    def clear(self) -> None:
        """Hold nothing, as before the first build."""
        self.seq = -1  # the change log's last seq this index has taken in (-1: not built)
        self._docs: dict[int, _Doc] = {}
        self._rowids: dict[str, int] = {}  # memory id → rowid
        self._postings: dict[str, dict[int, int]] = {}
        self._lengths: dict[int, int] = {}
        self._total_length = 0
        self._newest: list[_Order] = []
        self._newest_facts: list[_Order] = []
        self._speakers: Counter[str] = Counter()
        self.vocabulary = KeyVocabulary()
        self.meanings = KeyMeanings()

    def drop(self, rowid: int, *, keep_meaning: bool = False) -> None:
        doc = self._docs.pop(rowid, None)
        if doc is None:
            return
        del self._lengths[rowid]
        self._rowids.pop(doc.memory.id, None)
        if doc.speaker:
            left = self._speakers[doc.speaker] - 1
            if left:
                self._speakers[doc.speaker] = left
            else:
                del self._speakers[doc.speaker]
        if not keep_meaning:
            self.meanings.drop(rowid)
        for term in doc.terms:
            posting = self._postings[term]
            del posting[rowid]
            if not posting:
                del self._postings[term]
        self._total_length -= doc.length
        _remove(self._newest, doc.order)
        if doc.fact:
            _remove(self._newest_facts, doc.order)

    def search(
        self, flt: MemoryFilter, terms: Sequence[Word], limit: int, related: Sequence[Related] = ()
    ) -> tuple[list[tuple[MemoryRecord, float]], float]:
        """The key's memories holding any of `terms` (words, each its stemmed forms) or of
        their `related` stems that `flt` admits, by bm25 with this key's statistics (FTS5's
        formula; lower rank is better), ties newest first; and the query's weight
        (`query_weight`), found on the way."""
        scores, weight = self._scores(terms, related)
        docs = self._docs
        admits = flt.admits
        # Best score first; equal scores newest first (both keys descending). The best few
        # (with every match tied with the last of them) are picked without sorting every
        # match, unless the filter drops too many of them.
        head = limit + limit // 4 + 8
        if len(scores) > 2 * head:
            values = np.fromiter(scores.values(), dtype=np.float64, count=len(scores))
            cut = np.partition(values, len(values) - head)[len(values) - head]
            rowids = list(scores)
            best = [rowids[i] for i in np.flatnonzero(values >= cut).tolist()]
            ranked = sorted(((scores[r], docs[r].order, r) for r in best), reverse=True)
            found = _admitted(ranked, docs, admits, limit)
            if len(found) >= limit:
                return found, weight
        ranked = sorted(((score, docs[r].order, r) for r, score in scores.items()), reverse=True)
        return _admitted(ranked, docs, admits, limit), weight

    def make_meanings(self, vectors: WordVectorsFn, pause: Callable[[], None] | None = None) -> bool:
        """Give every word its vector and every memory its meaning where missing (`pause`
        runs between batches of them); False without word vectors (yet)."""
        known = self.vocabulary.words(vectors, pause)
        if known is None:
            return False
        docs = self._docs
        self.meanings.make(
            lambda rowid: docs[rowid].terms, self.vocabulary.row, known.matrix, self.frequency, pause
        )
        return True

    def by_meaning(
        self, flt: MemoryFilter, rows: np.ndarray, stems: Sequence[str], vectors: WordVectorsFn, limit: int
    ) -> list[tuple[MemoryRecord, float]]:
        """The key's memories `flt` admits nearest by meaning (store/key_meanings.py) to a
        question whose words have the unit vectors `rows` and the stems `stems`, with
        their cosine (higher is better), nearest first; the memories' vectors are made
        first where missing (`vectors`: the words' vectors)."""
        if not self.make_meanings(vectors):
            return []
        docs = self._docs
        query = self.meanings.weights([self.frequency(stem) for stem in stems]) @ rows
        norm = float(np.linalg.norm(query))
        if norm == 0.0:
            return []
        query /= norm
        admits = flt.admits
        depth = limit + limit // 4 + 8
        while True:
            found: list[tuple[MemoryRecord, float]] = []
            for rowid, score in self.meanings.nearest(query, depth):
                memory = docs[rowid].memory
                if admits(memory):
                    found.append((_copy(memory), score))
                    if len(found) == limit:
                        return found
            if depth >= len(docs):
                return found
            depth = len(docs)  # the filter dropped too many of the nearest: look at them all

    def query_weight(self, terms: Sequence[Word], related: Sequence[Related] = ()) -> float:
        """The bm25 of a memory of average length holding each of `terms` once: the sum of
        their idf in this key (a term no memory holds counts as the rarest), so a memory's
        bm25 over it is the share of the query it matches."""
        n = len(self._docs)
        return sum(
            _idf(n, len(self._posting(word, related[i] if i < len(related) else ())))
            for i, word in enumerate(terms)
        )

    def speakers(self) -> frozenset[str]:
        """The first word (case-folded) of every speaker the key's memories name."""
        return frozenset(self._speakers)

    def frequency(self, stem: str) -> int:
        """How many of the key's memories hold `stem` (one lookup: safe without `lock`)."""
        return len(self._postings.get(stem, ()))

    def _posting(self, word: Word, related: Related = ()) -> dict[int, float]:
        """The memories holding a form of `word` or a related stem: rowid → its occurrences
        of all forms, and of each related stem times that stem's weight."""
        if len(word) == 1 and not related:
            return self._postings.get(word[0], {})  # type: ignore[return-value]
        merged: dict[int, float] = {}
        for form, weight in (*((form, 1.0) for form in word), *related):
            for rowid, tf in self._postings.get(form, {}).items():
                merged[rowid] = merged.get(rowid, 0.0) + weight * tf
        return merged

    def _scores(
        self, terms: Sequence[Word], related: Sequence[Related] = ()
    ) -> tuple[dict[int, float], float]:
        """bm25 of every memory holding one of `terms` or their `related` stems (higher is
        better), and the query's weight (`query_weight`)."""
        n = len(self._docs)
        if not n:
            return {}, 0.0
        lengths = self._lengths
        # norm(doc) = K1 * (1 - B + B * length / average length)
        flat, per_token = K1 * (1.0 - B), K1 * B * n / self._total_length
        scores: dict[int, float] = {}
        get = scores.get
        total = 0.0
        for i, word in enumerate(terms):
            posting = self._posting(word, related[i] if i < len(related) else ())
            idf = _idf(n, len(posting))
            total += idf
            if not posting:
                continue
            weight = idf * (K1 + 1.0)
            for rowid, tf in posting.items():
                scores[rowid] = get(rowid, 0.0) + weight * tf / (tf + flat + per_token * lengths[rowid])
        return scores, total

    def recent(
        self, flt: MemoryFilter, *, limit: int, offset: int, without_turns: bool
    ) -> list[MemoryRecord]:
        """Newest first among what `flt` admits (kept turns left out with `without_turns`)."""
        order = self._newest_facts if without_turns else self._newest
        docs = self._docs
        out: list[MemoryRecord] = []
        skip = offset
        for position in range(len(order) - 1, -1, -1):
            memory = docs[order[position][1]].memory
            if not flt.admits(memory):
                continue
            if skip:
                skip -= 1
                continue
            out.append(_copy(memory))
            if len(out) >= limit:
                break
        return out

    def admitted_rows(self, flt: MemoryFilter, rowids: Sequence[int]) -> dict[int, str]:
        """The memories among `rowids` this key holds and `flt` admits: rowid → id."""
        docs = self._docs
        found: dict[int, str] = {}
        for rowid in rowids:
            doc = docs.get(rowid)
            if doc is not None and flt.admits(doc.memory):
                found[rowid] = doc.memory.id
        return found

    def get_many(self, ids: Sequence[str]) -> dict[str, MemoryRecord]:
        """The memories of `ids` this key holds (a copy of each), by id."""
        docs, rowids = self._docs, self._rowids
        return {i: _copy(docs[rowids[i]].memory) for i in ids if i in rowids}


def _idf(documents: int, holding: int) -> float:
    """bm25's idf of a term `holding` of `documents` memories hold (FTS5's floor: a term
    more than half of them hold counts next to nothing, never less)."""
    idf = math.log((documents - holding + 0.5) / (holding + 0.5))
    return idf if idf > 0.0 else 1e-6


def _admitted(
    ranked: Sequence[tuple[float, _Order, int]],
    docs: dict[int, _Doc],
    admits: Callable[[MemoryRecord], bool],
    limit: int,
) -> list[tuple[MemoryRecord, float]]:
    """The first `limit` of `ranked` (score, order, rowid) that `admits` takes, as (a copy of
    the memory, rank: lower is better)."""
    found: list[tuple[MemoryRecord, float]] = []
    for score, _order, rowid in ranked:
        memory = docs[rowid].memory
        if admits(memory):
            found.append((_copy(memory), -score))
            if len(found) >= limit:
                break
    return found


def _copy(memory: MemoryRecord, _new: Any = object.__new__) -> MemoryRecord:
    """A record of its own for a caller (who may change it); its metadata is still the
    stored text, so it decodes a dict of its own too."""
    clone: MemoryRecord = _new(MemoryRecord)
    clone.__dict__ = memory.__dict__.copy()
    return clone


def _remove(order: list[_Order], item: _Order) -> None:
    at = bisect.bisect_left(order, item)
    if at < len(order) and order[at] == item:
        del order[at]


def _let_others_run() -> None:
    """A build's pause on the request path: the interpreter handed to any thread that waits."""
    time.sleep(0)


class _Closed(Exception):
    """The indexes closed while a background build ran: the build is abandoned."""


class IndexedReader:
    """Retrieval's reads of one key, answered from its `KeyIndex` (see memory/retrieval.py).
    One retrieval asks it for a question's keyword matches, meanings and weight: the
    question is made once for all three (`KeyIndexes.question`)."""

    def __init__(
        self, indexes: KeyIndexes, index: KeyIndex, repository: MemoryStore, *, light: bool = False
    ) -> None:
        """`light`: each hold of the index's lock is brief (`KeyIndex.locked`)."""
        self._indexes = indexes
        self._index = index
        self._repository = repository
        self._light = light
        self._asked: Question | None = None
        self._weight: tuple[Question, float] | None = None

    def _question(self, query: str | None) -> Question:
        asked = self._asked
        if asked is None or asked.text != query:
            asked = self._asked = self._indexes.question(self._index, query, brief=self._light)
        return asked

    def keyword_search(
        self, flt: MemoryFilter, query: str | None, *, limit: int
    ) -> list[tuple[MemoryRecord, float]]:
        question = self._question(query)
        if not question.terms:
            return []
        with self._index.locked(self._light):
            found, weight = self._index.search(flt, question.terms, limit, question.related)
        self._weight = (question, weight)
        return found

    def meaning_search(
        self, flt: MemoryFilter, query: str | None, *, limit: int, leave_out: Collection[str] = ()
    ) -> list[tuple[MemoryRecord, float]]:
        question = self._question(query)
        return self._indexes.meaning_search(self._index, flt, question, limit, leave_out, brief=self._light)

    def speakers(self, flt: MemoryFilter) -> frozenset[str]:
        with self._index.locked(self._light):
            return self._index.speakers()

    def keyword_weight(self, flt: MemoryFilter, query: str | None) -> float | None:
        question = self._question(query)
        if not question.terms:
            return None
        if self._weight is not None and self._weight[0] is question:
            return self._weight[1]  # the keyword search found it just before
        with self._index.locked(self._light):
            return self._index.query_weight(question.terms, question.related)

    def recent(
        self, flt: MemoryFilter, *, limit: int, offset: int = 0, without_turns: bool = False
    ) -> list[MemoryRecord]:
        with self._index.locked(self._light):
            return self._index.recent(flt, limit=limit, offset=offset, without_turns=without_turns)

    def row_admission(self, flt: MemoryFilter) -> Callable[[Sequence[int]], dict[int, str]]:
        """A vector index's rows checked against the key's index, not SQL: a row it does
        not hold (another key's, deleted, not yet caught up with) is not admitted."""

        def admitted(rowids: Sequence[int]) -> dict[int, str]:
            with self._index.locked(self._light):
                return self._index.admitted_rows(flt, rowids)

        return admitted

    def get_many(self, ids: Sequence[str]) -> dict[str, MemoryRecord]:
        """From the key's index; an id it does not hold (another key's: a vector index
        never returns one, but retrieval checks) is read from SQL."""
        with self._index.locked(self._light):
            found = self._index.get_many(ids)
        missing = [i for i in ids if i not in found]
        if missing:
            found.update(self._repository.get_many(missing))
        return found


class KeyIndexes:
    """The in-process indexes of recently recalled keys, `max_memories` memories in all
    (0: none; every read goes to SQL)."""

    def __init__(
        self,
        changes: ChangeFeed,
        repository: MemoryStore,
        *,
        max_memories: int,
        word_vectors: WordVectorsFn | None = None,
        related_words: bool = True,
        meanings: bool = True,
    ) -> None:
        """`word_vectors`: vectors of words, to search a question's related words too
        (`related_words`) and the memories nearest to it by meaning (`meanings`); None:
        neither."""
        self.changes = changes
        self.repository = repository
        self.max_memories = max(0, max_memories)
        self.word_vectors = word_vectors
        self.related_words = related_words and word_vectors is not None
        self.meanings = meanings and word_vectors is not None
        self._lock = threading.Lock()
        self._indexes: OrderedDict[str, KeyIndex] = OrderedDict()
        # Keys too big to index on the request path, waiting for the builder thread.
        self._pending: dict[str, bool] = {}  # owner → whether it may displace idle keys
        # Recalls of keys not indexed yet, within `BUSY_S`.
        self._recalls = RecentCounts(BUSY_S, COUNTED_KEYS)
        self._wanted = threading.Event()
        self._closing = threading.Event()  # ends the builder's rest at once
        self._builder: threading.Thread | None = None
        self._closed = False

    def close(self) -> None:
        """Stop the builder thread (an index it is building is dropped)."""
        with self._lock:
            self._closed = True
            builder = self._builder
        self._closing.set()
        self._wanted.set()
        if builder is not None:
            builder.join(30)

    def reader(self, flt: MemoryFilter, *, light: bool = False) -> IndexedReader | MemoryStore:
        """What retrieval should read `flt`'s memories from: the key's index, up to date,
        when it has one or one fits; else the SQL repository. With `light`, only the key's
        index when it is held, small and nearly up to date (`LIGHT_MEMORIES`,
        `LIGHT_CATCH_UP`) and no other thread uses it for longer than `BRIEF_WAIT_S`: else
        WouldBlock, nothing done."""
        owner = flt.api_key_id
        if light:
            if owner is None:
                raise WouldBlock("a recall over every key reads SQL")
            return IndexedReader(self, self._light_index(owner), self.repository, light=True)
        if owner is None or self.max_memories == 0:
            return self.repository
        index = self._index(owner)
        return IndexedReader(self, index, self.repository) if index is not None else self.repository

    def _light_index(self, owner: str) -> KeyIndex:
        """`owner`'s index for a light reader (see `reader`), caught up, or WouldBlock."""
        index = self._held_index(owner)
        if index is None or len(index) > LIGHT_MEMORIES:
            raise WouldBlock("the key's index is not held, or too big")
        with index.locked(brief=True):
            if not self._catch_up(index, most=LIGHT_CATCH_UP):
                raise WouldBlock("the key's index has too much to catch up with")
            index.used = time.monotonic()
        return index

    def building(self) -> int:
        """Keys waiting for the builder thread (their recalls read SQL meanwhile)."""
        with self._lock:
            return len(self._pending)

    def held(self) -> int:
        """Memories held in all indexes."""
        with self._lock:
            return self._held()

    def _held(self) -> int:
        """`held` for a caller that holds `_lock`."""
        return sum(len(i) for i in self._indexes.values())

    def question(self, index: KeyIndex, text: str | None, *, brief: bool = False) -> Question:
        """What searching `index` for `text` needs (`Question`): its FTS terms (its
        searchable words with their forms, see store/fts.py, stemmed; a stem an earlier word
        has is not counted again), with word vectors the vectors of its words and, with
        related words on, each term's related stems among the key's words
        (`store/related_words.py`); made outside `index.lock` (taken briefly; with `brief`,
        see `KeyIndex.locked`)."""
        typed = self._typed_terms(text)
        terms = [word for _, word in typed]
        words = [typed_word for typed_word, _ in typed]
        asked = asked_words(words)
        rows = None
        related: list[Related] = []
        if asked and (self.related_words or self.meanings) and self.word_vectors is not None:
            try:
                rows = self.word_vectors([words[i] for i in asked])
                if rows is not None and self.related_words:
                    with index.locked(brief):
                        known = index.vocabulary.words(self.word_vectors)
                        documents = len(index)
                    if known is not None:
                        taken = {stem for word in terms for stem in word}
                        related = related_words(words, asked, rows, known, taken, index.frequency, documents)
            except WouldBlock:
                raise
            except Exception:  # a recall goes on with the words asked: never fails for this
                log.exception("word vectors failed; searching the words asked alone")
                rows, related = None, []
        return Question(text, terms, related, [terms[i][0] for i in asked], rows, [words[i] for i in asked])

    def meaning_search(
        self,
        index: KeyIndex,
        flt: MemoryFilter,
        question: Question,
        limit: int,
        leave_out: Collection[str] = (),
        *,
        brief: bool = False,
    ) -> list[tuple[MemoryRecord, float]]:
        """The key's memories nearest to `question` by meaning (`KeyIndex.by_meaning`):
        none without word vectors, or when they fail (logged: a recall goes on with
        keywords). `brief`: see `KeyIndex.locked`."""
        vectors = self.word_vectors
        if not self.meanings or vectors is None or question.rows is None:
            return []
        rows, stems = question.rows, question.asked
        if leave_out:
            kept = [i for i, word in enumerate(question.asked_as_typed) if word not in leave_out]
            if not kept:
                return []
            rows, stems = rows[kept], [stems[i] for i in kept]
        try:
            with index.locked(brief):
                return index.by_meaning(flt, rows, stems, vectors, limit)
        except WouldBlock:
            raise
        except Exception:
            log.exception("meanings failed; searching by words alone")
            return []

    def _typed_terms(self, text: str | None) -> list[tuple[str, Word]]:
        """Each searchable word of `text` as typed (casefolded) with its stemmed forms."""
        words = query_words(text)
        if not words:
            return []
        tokenize = _tokenizer()
        seen: set[str] = set()
        terms: list[tuple[str, Word]] = []
        for forms in words:
            stems: dict[str, None] = {}
            for form in forms:
                for term in tokenize(
                    form.encode("utf-8"), apsw.FTS5_TOKENIZE_QUERY, None, include_offsets=False
                ):
                    stem = term if isinstance(term, str) else term[0]
                    if stem not in seen:
                        stems[stem] = None
            if stems:
                seen.update(stems)
                terms.append((forms[0], tuple(stems)))
        return terms

    # -- building and catching up ------------------------------------------------------

    def _held_index(self, owner: str) -> KeyIndex | None:
        """`owner`'s index if one is held (now the most recently used), else None."""
        with self._lock:
            index = self._indexes.get(owner)
            if index is not None:
                self._indexes.move_to_end(owner)
        return index

    def _index(self, owner: str) -> KeyIndex | None:
        index = self._held_index(owner)
        if index is None:
            if owner in self._pending:
                return None  # being built: read from SQL meanwhile
            recalls = self._recalls.count(owner)  # without an index yet
            busy = recalls >= ADMIT_AFTER
            if not busy and not self._room_left():
                return None
            count = self._count(owner) if busy else self._count(owner, upto=INLINE_BUILD_MAX + 1)
            if count > INLINE_BUILD_MAX:
                self._admit_big(owner, count, recalls)
                return None
            if busy:
                self._recalls.forget(owner)
            with self._lock:
                index = self._indexes.get(owner)  # another thread may have added it meanwhile
                if index is None:
                    # A small key takes free room at once; only a busy one displaces idle keys.
                    if not self._room_for(count, busy):
                        return None
                    index = self._indexes[owner] = KeyIndex(owner)
            if not busy:
                self._recalls.forget(owner)
        with index.lock:
            self._ready(index)
            index.used = time.monotonic()
        return index

    def _admit_big(self, owner: str, count: int, recalls: int) -> None:
        """Have the builder index a key too big to index on a recall (`count`: its memories,
        counted in full once it is busy) when it fits in the room left, asked at its first
        recall within `BUSY_S` (counting it at every recall would cost each recall of a key
        that does not fit a second count), or when it is busy enough to displace idle keys
        (`MEMORIES_PER_RECALL`)."""
        free = self.max_memories - self.held()
        busy = recalls >= ADMIT_AFTER
        if recalls == 1 and free >= count:
            count = self._count(owner, upto=free + 1)
        fits = (busy or recalls == 1) and count <= free
        displace = busy and recalls >= count // MEMORIES_PER_RECALL
        if displace or fits:
            self._recalls.forget(owner)  # counted afresh should it not be kept
            self._build_later(owner, displace=displace)

    def _count(self, owner: str, *, upto: int | None = None) -> int:
        """The key's memories, counted up to `upto` when given (a cheaper count)."""
        return self.changes.count(owner, upto=upto)

    def _room_left(self) -> bool:
        return self.held() < self.max_memories

    def _fits(self, count: int) -> bool:
        """Whether `count` memories fit in the room left, no index dropped. Call with `_lock` held."""
        return self._held() + count <= self.max_memories

    def _build_later(self, owner: str, *, displace: bool) -> None:
        with self._lock:
            if self._closed or owner in self._pending:
                return
            self._pending[owner] = displace
            if self._builder is None:
                self._builder = threading.Thread(
                    target=self._build_pending, name="memroute-key-index", daemon=True
                )
                self._builder.start()
        self._wanted.set()

    def _build_pending(self) -> None:
        """The builder thread: index each pending key off the request path, then add it
        when there is room (until then its recalls read SQL)."""
        while True:
            self._wanted.wait()
            self._wanted.clear()
            while True:
                started = time.monotonic()
                built = self._build_next()
                if built is None:
                    break
                if built:  # builds take at most 1 / (1 + BUILD_REST) of the time
                    self._closing.wait(BUILD_REST * (time.monotonic() - started))
            if self._closed:
                return

    def build_waiting(self) -> None:
        """Index every key waiting for the builder now, on the calling thread and without
        the builder's rests (for a caller that would otherwise wait for it: a benchmark
        before it times recalls)."""
        while self._build_next() is not None:
            pass

    def _build_next(self) -> bool | None:
        """Build the first waiting key and add its index when there is room: whether it was
        built, or None when no key waits (or the indexes are closed)."""
        with self._lock:
            if self._closed or not self._pending:
                return None
            owner, displace = next(iter(self._pending.items()))
        index = self._built(owner, displace=displace)
        with self._lock:
            if self._closed:
                return None
            if index is not None and owner not in self._indexes and self._room_for(len(index), displace):
                index.used = time.monotonic()
                self._indexes[owner] = index
            self._pending.pop(owner, None)
        return index is not None

    def _built(self, owner: str, *, displace: bool) -> KeyIndex | None:
        """A new index of `owner`, or None when it would not fit (idle keys' indexes dropped
        to make room only if it may `displace` them) or the database failed."""
        try:
            count = self._count(owner)
            with self._lock:
                if owner in self._indexes or not self._room_for(count, displace):
                    return None
            index = KeyIndex(owner)
            with index.lock:
                self._ready(index, pause=self._rest)
                # Its words' vectors and its memories' meanings too, not on a recall.
                if self.meanings and self.word_vectors is not None:
                    index.make_meanings(self.word_vectors, self._rest)
                elif self.related_words and self.word_vectors is not None:
                    index.vocabulary.words(self.word_vectors, self._rest)
            return index
        except _Closed:
            return None
        except Exception as exc:  # the store closing or busy: a later recall asks again
            log.warning("store.key_index.build_failed error=%s", exc)
            return None

    def _rest(self) -> None:
        """A background build's pause between batches (`BACKGROUND_PAUSE_S`); once the
        indexes close it abandons the build (raises `_Closed`), so a stop never waits for a
        big key's index."""
        if self._closing.wait(BACKGROUND_PAUSE_S):
            raise _Closed

    def _ready(self, index: KeyIndex, *, pause: Callable[[], None] = _let_others_run) -> None:
        """Build `index` if it is new (`pause` running after each `YIELD_EVERY` memories),
        else take in what changed since. Hold its lock."""
        if index.seq >= 0:
            self._catch_up(index)
            return
        started = time.perf_counter()
        self._fill(index, pause=pause)
        if gc.get_freeze_count():
            # The process keeps its long-lived objects out of the collector's view (`memroute
            # serve` does once started): so do the index's, or a full collection walks them
            # all (77–119 ms with 50,000 memories held, every recall waiting meanwhile).
            gc.freeze()
        took_ms = (time.perf_counter() - started) * 1e3
        log.debug("store.key_index.built memories=%d ms=%.1f", len(index), took_ms)

    def _room_for(self, count: int, displace: bool) -> bool:
        """Whether `count` more memories fit, idle keys' indexes dropped to make room only
        when the new one may `displace` them. Call with `_lock` held."""
        return self._make_room(count) if displace else self._fits(count)

    def _make_room(self, count: int) -> bool:
        """Evict the least recently used indexes not used for `BUSY_S` until `count` more
        memories fit; whether they do. Call with `_lock` held."""
        if count > self.max_memories:
            return False
        held = self._held()
        idle_before = time.monotonic() - BUSY_S
        for owner in list(self._indexes):
            if held + count <= self.max_memories:
                break
            victim = self._indexes[owner]
            if victim.used > idle_before:
                break  # LRU order: every later one was used more recently still
            held -= len(victim)
            del self._indexes[owner]
        return held + count <= self.max_memories

    def _fill(self, index: KeyIndex, *, pause: Callable[[], None] = _let_others_run) -> None:
        tokenize = _tokenizer()
        with self.changes.snapshot(index.owner) as (seq, rows):
            for done, row in enumerate(rows, 1):
                self._put(index, tokenize, row[0], row[1:])
                if done % YIELD_EVERY == 0:
                    pause()  # let recalls waiting for the interpreter run
        index.seq = seq

    def _catch_up(self, index: KeyIndex, most: int | None = None) -> bool:
        """Take in what changed since the index last looked; with `most`, only when there
        are that many changes at most and no rebuild is needed, reading one more at most
        (whether it did)."""
        marks, pruned = self.changes.since(index.owner, index.seq, None if most is None else most + 1)
        if most is not None and (pruned > index.seq or len(marks) > most):
            return False
        if pruned > index.seq:  # changes this index never saw were pruned: start over
            index.clear()
            self._fill(index)
            return True
        if not marks:
            return True
        changed = dict.fromkeys(rowid for _, rowid in marks)
        # The rows as they are now (a later change is taken in again next time: idempotent).
        rowids = list(changed)
        rows = self.changes.rows(index.owner, rowids)
        tokenize = _tokenizer()
        for rowid in rowids:
            row = rows.get(rowid)
            if row is None:
                index.drop(rowid)
            else:
                self._put(index, tokenize, rowid, row)
        index.seq = max(index.seq, max(seq for seq, _ in marks))
        return True

    @staticmethod
    def _put(index: KeyIndex, tokenize: Any, rowid: int, row: Sequence[Any]) -> None:
        memory = row_to_memory(row)
        terms: dict[str, int] = {}
        spellings: dict[str, str] = {}
        length = 1  # the owner column's token, which FTS counts in a row's length
        whose = _speaker_slug_bytes(memory)
        for text in (memory.content, memory.key):
            if not text:
                continue
            data = text.encode("utf-8")
            for start, end, term, *_ in tokenize(data, apsw.FTS5_TOKENIZE_DOCUMENT, None):
                length += 1
                if text is memory.key and end <= whose:
                    continue  # whose fact it is (the memory's speaker), not a word of it
                terms[term] = terms.get(term, 0) + 1
                if term not in spellings:
                    spellings[term] = data[start:end].decode("utf-8", "replace").casefold()
        index.put(rowid, memory, terms, length, spellings)


def _speaker_slug_bytes(memory: MemoryRecord) -> int:
    """How many bytes at the start of a fact's key name the person who said it (`priya/` of
    `priya/profile:diet`, as extraction keys a speaker's facts), 0 when none do. That part
    says whose fact it is, as `metadata.speaker` does, so a question naming Priya would
    otherwise match every fact of hers by the name alone."""
    speaker = memory.speaker_word()
    head, slash, _rest = memory.key.partition("/")
    if not speaker or not slash or head.split("_", 1)[0] != speaker:
        return 0
    return len(head.encode("utf-8"))


_local = threading.local()


def _tokenizer() -> Any:
    """The FTS table's tokenizer (migration 0001), from this thread's own in-memory
    SQLite connection: the same tokens, stems and folding whatever the store."""
    con = getattr(_local, "con", None)
    if con is None:
        con = _local.con = apsw.Connection(":memory:")
    return con.fts5_tokenizer(TOKENIZER, TOKENIZER_ARGS)
