"""Scoring of the conversation-recall bench: which turns each injected memory came from, and
whether a question's evidence turns are among the memories injected for it.

A memory comes from the turn of its `metadata.requestId`, from those of its
`metadata.sources[].requestId` (a fact learned more than once), and from every turn whose
text is its content (a text said twice is stored once). Missing or malformed fields give
no turn, never an error. A question scores, at k, the fraction of its evidence turns found
in the first k injected memories (an evidence turn counts as found when it or one of its
`alternatives` is); "budget" takes the whole injected list.
"""

from __future__ import annotations

import statistics
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

KS = (5, 10)


def normalise(text: str) -> str:
    return " ".join(text.lower().split())


def memory_turns(record: Mapping[str, Any], by_text: Mapping[str, set[str]]) -> set[str]:
    """The turn ids a stored memory (its REST JSON object) was learned from."""
    out: set[str] = set()
    metadata = record.get("metadata")
    if isinstance(metadata, Mapping):
        rid = metadata.get("requestId")
        if isinstance(rid, str) and rid:
            out.add(rid)
        sources = metadata.get("sources")
        if isinstance(sources, list):
            for source in sources:
                sid = source.get("requestId") if isinstance(source, Mapping) else None
                if isinstance(sid, str) and sid:
                    out.add(sid)
    content = record.get("content")
    if isinstance(content, str):
        out |= by_text.get(normalise(content), set())
    return out


def has_provenance(record: Mapping[str, Any]) -> bool:
    metadata = record.get("metadata")
    return isinstance(metadata, Mapping) and isinstance(metadata.get("requestId"), str)


@dataclass(frozen=True, slots=True)
class QuestionScore:
    qid: str
    category: str
    recall: dict[str, float]  # "5", "10", "budget" → fraction of evidence found
    rr: float  # reciprocal rank of the first evidence found in the top 10 (0 if none)
    stale: bool  # a superseded turn was injected ahead of (or instead of) the evidence
    injected: int
    tokens: int


def first_rank(wanted: set[str], ranked: Sequence[set[str]]) -> int | None:
    return next((i for i, turns in enumerate(ranked) if turns & wanted), None)


def score_question(q: Mapping[str, Any], ranked: Sequence[set[str]], tokens: int) -> QuestionScore:
    """`ranked`: the turn ids of each injected memory, in injection order."""
    alternatives = q.get("alternatives") or {}
    ranks = [first_rank({e, *alternatives.get(e, ())}, ranked) for e in q["evidence"]]
    n = len(ranks)
    recall = {str(k): sum(1 for r in ranks if r is not None and r < k) / n for k in KS}
    recall["budget"] = sum(1 for r in ranks if r is not None) / n
    found = [r for r in ranks if r is not None and r < 10]
    rr = 1.0 / (min(found) + 1) if found else 0.0
    stale = False
    superseded = set(q.get("superseded") or ())
    if superseded:
        old = first_rank(superseded, ranked)
        new = ranks[0]
        stale = old is not None and (new is None or old < new)
    return QuestionScore(q["id"], q["category"], recall, rr, stale, len(ranked), tokens)


def summarise(scores: Iterable[QuestionScore]) -> dict[str, Any]:
    """Mean recall at 5, 10 and the budget, MRR@10, injected memories and tokens."""
    rows = list(scores)
    if not rows:
        return {"n": 0}
    out: dict[str, Any] = {"n": len(rows)}
    for key in ("5", "10", "budget"):
        out[f"recall@{key}"] = statistics.mean(s.recall[key] for s in rows)
    out["mrr@10"] = statistics.mean(s.rr for s in rows)
    out["injected_mean"] = statistics.mean(s.injected for s in rows)
    out["tokens_mean"] = statistics.mean(s.tokens for s in rows)
    out["tokens_p50"] = statistics.median(s.tokens for s in rows)
    out["tokens_max"] = max(s.tokens for s in rows)
    changed = [s for s in rows if s.category == "changed-mind"]
    if changed:
        out["stale_first"] = sum(s.stale for s in changed) / len(changed)
    return out


def by_category(scores: Sequence[QuestionScore]) -> dict[str, dict[str, Any]]:
    categories = sorted({s.category for s in scores})
    return {c: summarise(s for s in scores if s.category == c) for c in categories}
