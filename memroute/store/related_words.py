"""A key's own words that are related to a question's words, for keyword search.

A question rarely uses the words of the memory that answers it: "Which instrument does
Greta play?" against "practising the banjo every evening", "What pet do I have?" against
"we adopted a dog last year". Each `KeyIndex` keeps a `KeyVocabulary`: every word its memories
use (one spelling per FTS stem) with a word vector (`embeddings/word_vectors.py`, passed
in: this ring does not load models). A question's word then also matches the key's
`PER_WORD` nearest words at cosine `MIN_SIMILARITY` or more, each occurrence counting
`WEIGHT` of an occurrence of the word itself (bm25 treats the word and its related words
as one term: a memory holding either holds the word once, and the term's frequency among
the key's memories is theirs together). A word more than `MAX_SHARE` of the key's
memories hold is not related: it would make the question's word common too.

The words come from the key's own memories only, so they never carry another key's text,
and they are found in the process (nothing is stored). On our four quality sets this
lifted keyword recall@10 by 7–23 points (docs/benchmarks.md).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Collection, Sequence
from dataclasses import dataclass, field

import numpy as np

from memroute.lru import LruTtlCache
from memroute.store.fts import STOP_WORDS

MIN_SIMILARITY = 0.4
PER_WORD = 3
WEIGHT = 0.5
# A related word held by more of the key's memories than this share (at least
# `MIN_COMMON`, at most `MAX_COMMON`) is left out: it would make the question's word common
# too, and each memory holding it costs the search a step (a key of 10,000 memories).
MAX_SHARE = 0.05
MIN_COMMON = 8
MAX_COMMON = 100
# Shorter words ("tv", "ok") and words with digits relate to too much to be worth it.
MIN_LENGTH = 3
# Words given their vector in one go (~1 ms; a key index built in the background pauses
# between two batches, so recalls go on).
ROWS_AT_ONCE = 32
# Question words whose near words a key keeps (`NearWords`): ~0.5 KB each (~3 near words).
NEAR_WORDS_KEPT = 256

WordVectorsFn = Callable[[Sequence[str]], "np.ndarray | None"]
Related = tuple[tuple[str, float], ...]  # a question word's related stems with their weight


def relatable(word: str) -> bool:
    """A word worth relating: letters only, `MIN_LENGTH` or longer, not a stop word."""
    return len(word) >= MIN_LENGTH and word.isalpha() and word not in STOP_WORDS


class NearWords:
    """For each of the `capacity` question words asked most recently, the rows of a key's
    words at cosine `MIN_SIMILARITY` or more, with their cosine: found once, then extended by
    the rows added since (a vocabulary only appends rows and never changes one), so a
    word asked again costs no pass over the key's words. Thread-safe."""

    def __init__(self, capacity: int = NEAR_WORDS_KEPT) -> None:
        # word → (rows seen, rows, cosines); nothing expires, the least recently asked go first
        self._found: LruTtlCache[tuple[int, np.ndarray, np.ndarray]] = LruTtlCache(capacity, math.inf)

    def __len__(self) -> int:
        return len(self._found)

    def of(
        self, words: Sequence[str], vectors: np.ndarray, matrix: np.ndarray
    ) -> list[tuple[np.ndarray, np.ndarray]]:
        """For each of `words` (unit rows `vectors`, in order), the rows of `matrix` (the
        key's words as they are now) at `MIN_SIMILARITY` or more, and their cosines."""
        count = len(matrix)
        entries = [self._found.get(word) for word in words]
        behind = [i for i, entry in enumerate(entries) if entry is None or entry[0] < count]
        if behind:
            starts = [0 if (entry := entries[i]) is None else entry[0] for i in behind]
            low = min(starts)
            similarities = matrix[low:count] @ vectors[behind].T
            for column, (i, start) in enumerate(zip(behind, starts, strict=True)):
                scores = similarities[start - low :, column]
                hits = np.flatnonzero(scores >= MIN_SIMILARITY)
                rows, cosines = hits + start, scores[hits]
                entry = entries[i]
                if entry is not None:
                    rows, cosines = np.concatenate((entry[1], rows)), np.concatenate((entry[2], cosines))
                found = (count, rows, cosines)
                entries[i] = found
                self._found.set(words[i], found)
        out = []
        for entry in entries:
            assert entry is not None
            seen, rows, cosines = entry
            if seen > count:  # found against more rows than this caller's snapshot has
                kept = rows < count
                rows, cosines = rows[kept], cosines[kept]
            out.append((rows, cosines))
        return out


@dataclass(frozen=True, slots=True)
class KeyWords:
    """A key's words as they were when taken: `stems[i]` has row `i` of `matrix` (the list
    is only ever appended to, so its first rows stay); `near` remembers each question
    word's near rows among them."""

    stems: Sequence[str]
    matrix: np.ndarray
    near: NearWords = field(default_factory=NearWords)


def asked_words(words: Sequence[str]) -> list[int]:
    """The positions of the `relatable` words among a question's `words` (as typed)."""
    return [i for i, word in enumerate(words) if relatable(word)]


def related(
    words: Sequence[str],
    asked: Sequence[int],
    query: np.ndarray,
    known: KeyWords,
    taken: Collection[str],
    frequency: Callable[[str], int],
    documents: int,
) -> list[Related]:
    """For each of the question's `words` (as typed), the stems of its nearest words among
    `known` that at least one and at most `MAX_SHARE` of the key's `documents` memories hold
    (`frequency`) and the question does not already ask for (`taken`); only the words at
    `asked` (see `asked_words`) are related, `query` holding their vectors in that order.
    Needs no lock: it reads `known`, and `frequency` only looks a stem up."""
    out: list[Related] = [() for _ in words]
    if not asked:
        return out
    most = min(MAX_COMMON, max(MIN_COMMON, int(documents * MAX_SHARE)))
    depth = min(len(known.matrix), PER_WORD + len(taken) + 8)
    near = known.near.of([words[i] for i in asked], query, known.matrix)
    for (rows, cosines), i in zip(near, asked, strict=True):
        if len(rows) > depth:
            best = np.argpartition(-cosines, depth - 1)[:depth]
            rows, cosines = rows[best], cosines[best]
        found: list[tuple[str, float]] = []
        for row in rows[np.argsort(-cosines)].tolist():
            stem = known.stems[row]
            if stem not in taken and 0 < frequency(stem) <= most:
                found.append((stem, WEIGHT))
                if len(found) == PER_WORD:
                    break
        out[i] = tuple(found)
    return out


class KeyVocabulary:
    """The words of one key's memories (stem → the first spelling seen) and their vectors,
    computed the first time a question needs them. Callers serialise `add` and `words`."""

    def __init__(self) -> None:
        self.clear()

    def clear(self) -> None:
        self._spelling: dict[str, str] = {}
        self._stems: list[str] = []  # in the order added; row i of the matrix is stem i
        self._index: dict[str, int] = {}  # stem → its row
        self._matrix = np.zeros((0, 0), dtype=np.float32)
        self._rows = 0  # how many stems have a row
        self._near = NearWords()  # the question words' near rows, for these rows

    def __len__(self) -> int:
        return len(self._stems)

    def add(self, stem: str, spelling: str) -> None:
        """Note a stem of a memory with its spelling (a stem no memory holds any more stays,
        and is never related: its frequency is 0)."""
        if stem not in self._spelling and relatable(spelling):
            self._spelling[stem] = spelling
            self._index[stem] = len(self._stems)
            self._stems.append(stem)

    def knows(self, stem: str) -> bool:
        """Whether `stem` is one of the key's words (with a row once vectors are asked)."""
        return stem in self._index

    def row(self, stem: str) -> int | None:
        """The row of `stem` in the matrix `words` returned (None: no row yet, or not a word)."""
        at = self._index.get(stem)
        return at if at is not None and at < self._rows else None

    def words(self, vectors: WordVectorsFn, pause: Callable[[], None] | None = None) -> KeyWords | None:
        """The key's words with a row each, as they are now (None without any, or without
        word vectors yet); what is added later does not change what this returns. The
        rows still missing are made `ROWS_AT_ONCE` at a time, `pause` running after each."""
        if not self._stems or not self._catch_up(vectors, pause):
            return None
        return KeyWords(self._stems, self._matrix[: self._rows], self._near)

    def _catch_up(self, vectors: WordVectorsFn, pause: Callable[[], None] | None) -> bool:
        """Give every stem added since the last question its row; False without vectors."""
        while self._rows < len(self._stems):
            upto = min(len(self._stems), self._rows + ROWS_AT_ONCE)
            new = vectors([self._spelling[s] for s in self._stems[self._rows : upto]])
            if new is None:
                return False
            if self._matrix.shape[1] != new.shape[1] or self._matrix.shape[0] < upto:
                grown = np.zeros((max(64, len(self._stems) * 5 // 4), new.shape[1]), dtype=np.float32)
                if self._rows:
                    grown[: self._rows] = self._matrix[: self._rows]
                self._matrix = grown
            self._matrix[self._rows : upto] = new
            self._rows = upto
            if pause is not None and upto < len(self._stems):
                pause()
        return True
