"""The retrieval-quality set: hand-written memories of one person and paraphrased questions.

`memories.jsonl`: {"id", "content", "type"}; `queries.jsonl`: {"id", "query", "relevant": [ids]}.
`content_words` is the lexical-overlap measure the dataset test asserts on (no stemming); the
`stemmed=True` variant strips common English suffixes, closer to what FTS5's porter tokenizer matches.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
MEMORIES = HERE / "memories.jsonl"
QUERIES = HERE / "queries.jsonl"

_WORD = re.compile(r"[a-z0-9]+")

# Function words only: a word that carries meaning (even "usually", "every") stays a content word.
STOP_WORDS = frozenset(
    """
    the and for with what which who whom whose when where why how are was were does did don doesn
    didn isn aren can could should would will shall have has had any from into about there their them
    they this that these those you your yours our ours its not but than then also just all some
    her his she him myself
    """.split()  # noqa: SIM905 - a word list reads better as text
)


def read_jsonl(path: Path) -> list[dict[str, Any]]:
    with path.open(encoding="utf-8") as f:
        return [json.loads(line) for line in f if line.strip()]


def load_memories() -> list[dict[str, Any]]:
    return read_jsonl(MEMORIES)


def load_queries() -> list[dict[str, Any]]:
    return read_jsonl(QUERIES)


_SUFFIXES = (("ies", "y"), ("ing", ""), ("ed", ""), ("es", ""), ("ly", ""), ("s", ""))


def stem(word: str) -> str:
    """A crude suffix stripper ("deploys" → "deploy", "families" → "family"); not Porter."""
    for suffix, repl in _SUFFIXES:
        if word.endswith(suffix) and len(word) - len(suffix) >= 3:
            return word[: -len(suffix)] + repl
    return word


def content_words(text: str, *, stemmed: bool = False) -> set[str]:
    """Lower-cased alphanumeric words longer than 2 characters, minus stop words."""
    words = {w for w in _WORD.findall(text.lower()) if len(w) > 2 and w not in STOP_WORDS}
    return {stem(w) for w in words} if stemmed else words


def overlaps(query: dict[str, Any], by_id: dict[str, dict[str, Any]], *, stemmed: bool = False) -> bool:
    """Whether the query shares a content word with any of its relevant memories."""
    words = content_words(query["query"], stemmed=stemmed)
    return any(words & content_words(by_id[i]["content"], stemmed=stemmed) for i in query["relevant"])
