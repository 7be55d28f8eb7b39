"""Turning user text into a safe FTS5 query.

User text never reaches `MATCH` raw: it is cut to a bounded size, split into
word tokens (letters and digits of any script), stop words are dropped, each word
brings its irregular forms ("ran" for "run", `store/word_forms.py`), and every
form is quoted and OR-ed. A quoted token of word characters cannot form FTS5
syntax, so no input string can raise an FTS error.
"""

from __future__ import annotations

import re

from memroute.store.word_forms import forms_of

MAX_QUERY_CHARS = 8192
MAX_QUERY_TOKENS = 64

_WORD = re.compile(r"[^\W_]+")

STOP_WORDS = frozenset(
    """
    a about above after again against all am an and any are aren as at be because been before being
    below between both but by can cannot could couldn did didn do does doesn doing don down during
    each few for from further had hadn has hasn have haven having he her here hers herself him
    himself his how i if in into is isn it its itself just let ll me more most mustn my myself no
    nor not now of off on once only or other ought our ours ourselves out over own re same shan she
    should shouldn so some such than that the their theirs them themselves then there these they
    this those through to too under until up us ve very was wasn we were weren what when where which
    while who whom why will with won would wouldn you your yours yourself yourselves s t d m o y
    please tell know remember use using
    """.split()  # noqa: SIM905 - a word list reads better as text
)


def bound_query(text: str) -> str:
    """Very long queries keep their head and tail."""
    if len(text) <= MAX_QUERY_CHARS:
        return text
    half = MAX_QUERY_CHARS // 2
    return text[:half] + " " + text[-half:]


def query_tokens(text: str | None) -> list[str]:
    """Distinct lower-cased word tokens of `text` without stop words, in order."""
    if not text:
        return []
    seen: dict[str, None] = {}
    for token in _WORD.findall(bound_query(text).casefold()):
        if token not in STOP_WORDS and token not in seen:
            seen[token] = None
            if len(seen) >= MAX_QUERY_TOKENS:
                break
    return list(seen)


def query_words(text: str | None) -> list[tuple[str, ...]]:
    """Each searchable word of `text` (`query_tokens`) with its other forms, in order; a
    form an earlier word already brought is not asked for twice ("run ran": one word)."""
    words: list[tuple[str, ...]] = []
    asked: set[str] = set()
    for token in query_tokens(text):
        forms = tuple(f for f in forms_of(token) if f not in asked and f not in STOP_WORDS)
        if forms:
            asked.update(forms)
            words.append(forms)
    return words


def owner_token(api_key_id: str) -> str:
    """The FTS token of an owner: what the `fts_owner` column holds ('o' || hex(api_key_id))."""
    return "o" + api_key_id.encode("utf-8").hex().upper()


def match_expression(text: str | None, owner: str | None = None) -> str | None:
    """An FTS5 MATCH string that ORs the quoted forms of the query's words (`query_words`,
    in that order), restricted to one owner's documents when `owner` is given; None when
    nothing is searchable."""
    return expression_of(query_words(text), owner)


def expression_of(words: list[tuple[str, ...]], owner: str | None = None) -> str | None:
    """The MATCH string of `match_expression` for words already read."""
    if not words:
        return None
    words_sql = " OR ".join(f'"{form}"' for forms in words for form in forms)
    if owner is None:
        return f"{{content key}} : ({words_sql})"
    return f'fts_owner : "{owner_token(owner)}" AND {{content key}} : ({words_sql})'


# bm25 weights of the FTS columns (content, key, fts_owner): the owner token never scores.
BM25 = "bm25(memory_fts, 1.0, 1.0, 0.0)"
