"""bm25 with one key's own statistics, for keyword searches answered from SQL.

FTS5's built-in `bm25()` takes each term's document frequency from the whole file: to
rank one key's matches it walks every key's postings of every query term (a query's
words match ~111,000 rows at 1M memories over 1,000 keys, ~107 of them the key's, and
p99 reached 20 ms), and another key's vocabulary makes a word "common" for this one.
Here FTS5 only finds the key's matches (`fts_owner` AND the words), an auxiliary
function reports each match's term counts and length, and the score is FTS5's formula
with the key's document count and each term's frequency among the key's memories (every
memory of the key holding a term is among the matches). The average length is the
file's (kept by FTS5; reading the key's would cost a pass over all its memories).

The in-process `KeyIndex` ranks a recalled key the same way, with the key's own average
length; a key with more than `PER_KEY_MAX` memories is ranked by FTS5's `bm25()` here
(its matches would cost a Python call each), and by its `KeyIndex` once it is recalled.
"""

from __future__ import annotations

from array import array
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import apsw
import numpy as np

TERM_COUNTS = "mr_term_counts"
PER_KEY_MAX = 5000
K1 = 1.2
B = 0.75

_LENGTH, _AVERAGE = 0, 1  # the first two numbers of a row's counts; term counts follow


def term_counts(api: apsw.FTS5ExtensionApi, *_args: Any) -> bytes:
    """FTS5 auxiliary function: float64 numbers for one match of an `fts_owner : … AND
    {content key} : (…)` query: the row's length (all columns, as FTS5's bm25 counts it),
    the file's average length, then each word phrase's occurrences in the content
    and key columns (-1 for a phrase whose stemmed tokens an earlier one already has:
    "run" and "running")."""
    phrases = api.phrases
    average = api.column_total_size(-1) / max(1, api.row_count)
    counts = array("d", [api.column_size(-1), average])
    seen: set[tuple[str | None, ...]] = set()
    for i in range(1, len(phrases)):  # phrase 0 is the owner's token
        if phrases[i] in seen:
            counts.append(-1)
            continue
        seen.add(phrases[i])
        columns = api.phrase_locations(i)
        counts.append(len(columns[0]) + len(columns[1]))
    return counts.tobytes()


def register(con: apsw.Connection) -> None:
    con.register_fts5_function(TERM_COUNTS, term_counts)


def key_size(con: apsw.Connection, owner: str) -> int:
    """The key's memory count, counted up to `PER_KEY_MAX` + 1."""
    row = con.execute(
        "SELECT count(*) FROM (SELECT 1 FROM memories WHERE api_key_id = ? LIMIT ?)", (owner, PER_KEY_MAX + 1)
    ).fetchone()
    return int(row[0]) if row else 0


@dataclass(frozen=True, slots=True)
class KeyMatches:
    """One key's matches of a query, (rowid, bm25 with the key's statistics: higher is
    better) best first, and the bm25 a memory of average length would score holding each
    query word once (the sum of the words' idf in the key, as `KeyIndex.query_weight`;
    None without a match)."""

    ranked: list[tuple[int, float]]
    query_weight: float | None


def ranked_matches(
    con: apsw.Connection, owner: str, expression: str, sizes: Sequence[int]
) -> KeyMatches | None:
    """The key's matches of `expression` (an owner-restricted match, see `store/fts.py`),
    whose phrases are the forms of the query's words, `sizes[i]` of them for word `i`: a
    memory holding any form of a word holds the word. None when the key is too large to
    rank here."""
    documents = key_size(con, owner)
    if documents > PER_KEY_MAX:
        return None
    rows = con.execute(
        f"SELECT rowid, {TERM_COUNTS}(memory_fts) FROM memory_fts WHERE memory_fts MATCH ?", (expression,)
    ).fetchall()
    if not rows:
        return KeyMatches([], None)
    counts = np.frombuffer(b"".join(r[1] for r in rows), dtype=np.float64).reshape(len(rows), -1)  # type: ignore[misc]
    lengths = counts[:, _LENGTH]
    average = max(float(counts[0, _AVERAGE]), 1.0)
    tf = _word_counts(counts[:, _AVERAGE + 1 :], sizes)
    df = (tf > 0).sum(axis=0)
    n = max(documents, len(rows))
    idf = np.maximum(np.log((n - df + 0.5) / (df + 0.5)), 1e-6)  # a word no memory holds: the rarest
    norm = K1 * (1.0 - B + B * lengths / average)
    scores = (idf * tf * (K1 + 1.0) / (tf + norm[:, None])).sum(axis=1)
    rowids = np.fromiter((r[0] for r in rows), dtype=np.int64, count=len(rows))
    order = np.lexsort((-rowids, -scores))  # best first; equal scores the newer row first
    return KeyMatches([(int(rowids[i]), float(scores[i])) for i in order], float(idf.sum()))


def _word_counts(phrases: np.ndarray, sizes: Sequence[int]) -> np.ndarray:
    """Each match's occurrences of each query word: the sum over the word's forms
    (`sizes`: how many phrases each word has), leaving out a phrase that repeats an earlier
    one (-1: "run" and "running" stem alike) and a word left with none."""
    repeated = phrases[0] < 0  # the same for every match
    columns = []
    start = 0
    for size in sizes:
        own = [i for i in range(start, start + size) if not repeated[i]]
        start += size
        if own:
            columns.append(phrases[:, own].sum(axis=1))
    return np.stack(columns, axis=1) if columns else np.zeros((phrases.shape[0], 0))
