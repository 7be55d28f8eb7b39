"""What a key's memories mean, as vectors made of their words' vectors: recall by meaning
without an embedding model.

A memory's vector is the sum of its words' vectors (the rows its key's `KeyVocabulary`
holds), each weighted `SMOOTHING / (SMOOTHING + p)` with `p` the word's share of the key's
words (its memories holding it over all the words they hold: smooth inverse frequency),
so a word every memory of the key uses ("really", the name of the person spoken to)
weighs little and a rare one ("banjo") a lot. A question's vector is made the same way
with the key's statistics, and the key's memories nearest to it by cosine are its
matches by meaning: "What hobby has Rafael taken up?" finds "I've gotten really into
board games lately" with no word in common.

Nothing is stored: the vectors are made in the process from the key's index, the first
time a question needs them (a memory added or changed later gets its own at the next
question, with the key's statistics of that moment; an index built afresh, e.g. after
its key was idle, makes them all again). On our
four quality sets this tier, fused with keyword search, gains 2–11 points of recall@10
over keywords alone and is below neither at any depth (docs/benchmarks.md).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence

import numpy as np

# The smoothing of the weights: a word held by this share of the key's words weighs half.
SMOOTHING = 1e-3
# A memory nearer than this to a question is a match. A question's cosine to its key's
# memories is ~0.07 for half of them and ~0.2 for the nearest tenth (our quality sets):
# below, a memory is as near as unrelated text is, and injecting it only costs tokens
# (docs/benchmarks.md: 0.2 halves what a chat injects at the same recall@10).
MIN_COSINE = 0.2
# Memories whose rows are made in one go (a background build pauses after each: ~1 ms).
CHUNK = 32

Terms = Mapping[str, int]  # a memory's stems with their counts


class KeyMeanings:
    """The vectors of one key's memories, by rowid. Callers serialise every call (the
    key index's lock)."""

    def __init__(self) -> None:
        self.clear()

    def clear(self) -> None:
        self._matrix = np.zeros((0, 0), dtype=np.float32)
        self._row_of: dict[int, int] = {}  # rowid → its row (every memory has one, maybe unset)
        self._rowid_at: list[int] = []  # row → rowid
        self._words: dict[int, int] = {}  # rowid → how many of its words have a vector
        self._total = 0  # the words of all memories that have a vector (p's denominator)
        self._unset: dict[int, None] = {}  # rowids whose row is still to be made

    def add(self, rowid: int, words: int) -> None:
        """A memory (new, or changed: `drop` it first) holding `words` words with vectors."""
        self._row_of[rowid] = len(self._rowid_at)
        self._rowid_at.append(rowid)
        self._words[rowid] = words
        self._total += words
        self._unset[rowid] = None

    def drop(self, rowid: int) -> None:
        """Forget a memory: the last row takes its place."""
        row = self._row_of.pop(rowid, None)
        if row is None:
            return
        self._total -= self._words.pop(rowid)
        self._unset.pop(rowid, None)
        last = len(self._rowid_at) - 1
        moved = self._rowid_at.pop()
        if row != last:
            self._rowid_at[row] = moved
            self._row_of[moved] = row
            if self._matrix.shape[0] > last:
                self._matrix[row] = self._matrix[last]

    def weights(self, frequencies: Sequence[int]) -> np.ndarray:
        """The weight of words held by `frequencies` memories each, in this key."""
        share = np.asarray(frequencies, dtype=np.float32) / max(self._total, 1)
        weights: np.ndarray = SMOOTHING / (SMOOTHING + share)
        return weights

    def make(
        self,
        terms_of: Callable[[int], Terms],
        row_of_word: Callable[[str], int | None],
        word_matrix: np.ndarray,
        frequency: Callable[[str], int],
        pause: Callable[[], None] | None = None,
    ) -> None:
        """Make the rows still unset (memories added or changed since), from each memory's
        terms (`terms_of(rowid)`), the row of each word in `word_matrix` (`row_of_word`:
        None for a word without one) and how many of the key's memories hold it
        (`frequency`), `CHUNK` memories at a time (`pause` runs after each)."""
        if not self._unset:
            return
        count = len(self._rowid_at)
        dimensions = word_matrix.shape[1]
        if self._matrix.shape[1] != dimensions or self._matrix.shape[0] < count:
            grown = np.zeros((max(64, count * 5 // 4), dimensions), dtype=np.float32)
            if self._matrix.shape[1] == dimensions:
                kept = min(self._matrix.shape[0], count)
                grown[:kept] = self._matrix[:kept]
            self._matrix = grown
        unset = list(self._unset)
        for start in range(0, len(unset), CHUNK):
            self._make_rows(unset[start : start + CHUNK], terms_of, row_of_word, word_matrix, frequency)
            if pause is not None and start + CHUNK < len(unset):
                pause()
        self._unset = {}

    def _make_rows(
        self,
        rowids: Sequence[int],
        terms_of: Callable[[int], Terms],
        row_of_word: Callable[[str], int | None],
        word_matrix: np.ndarray,
        frequency: Callable[[str], int],
    ) -> None:
        """The rows of `rowids`: each the weighted sum of its words' rows, made unit (zeros
        for a memory without a word that has a vector)."""
        word_rows: list[int] = []
        counts: list[int] = []
        frequencies: list[int] = []
        starts: list[int] = []
        filled: list[int] = []  # the matrix rows of the memories holding a word with a vector
        for rowid in rowids:
            start = len(word_rows)
            for stem, times in terms_of(rowid).items():
                word_row = row_of_word(stem)
                if word_row is not None:
                    word_rows.append(word_row)
                    counts.append(times)
                    frequencies.append(frequency(stem))
            row = self._row_of[rowid]
            if len(word_rows) > start:
                starts.append(start)
                filled.append(row)
            else:
                self._matrix[row] = 0.0
        if not filled:
            return
        scale = self.weights(frequencies) * np.asarray(counts, dtype=np.float32)
        sums = np.add.reduceat(word_matrix[word_rows] * scale[:, None], starts, axis=0)
        norms = np.linalg.norm(sums, axis=1, keepdims=True)
        np.divide(sums, norms, out=sums, where=norms > 0.0)
        self._matrix[filled] = sums

    def nearest(self, query: np.ndarray, depth: int) -> list[tuple[int, float]]:
        """The (rowid, cosine) of the `depth` memories nearest to the unit vector `query`,
        nearest first, only those at `MIN_COSINE` or more. Call after `make`."""
        count = len(self._rowid_at)
        if not count or depth <= 0:
            return []
        scores = self._matrix[:count] @ query
        if depth < count:
            head = np.argpartition(-scores, depth - 1)[:depth]
            order = head[np.argsort(-scores[head], kind="stable")]
        else:
            order = np.argsort(-scores, kind="stable")
        best = scores[order]
        order = order[best >= MIN_COSINE]
        rowids = self._rowid_at
        return list(zip([rowids[row] for row in order.tolist()], best[: len(order)].tolist(), strict=True))
