"""The redactor on sentences people type (tests/memory/redaction_corpus.py): every secret
is gone and the sentence stays readable; innocent sentences are left exactly as they are."""

from __future__ import annotations

import re

from redaction_corpus import INNOCENT, SECRETS

from memroute.memory.redact import REDACTED, redact


def _words(text: str) -> list[str]:
    return re.findall(r"[A-Za-z]{3,}", text)


def test_the_corpus_is_large_and_each_secret_is_in_its_sentence() -> None:
    assert len(SECRETS) >= 150 and len(INNOCENT) >= 150
    assert all(secret in text for text, secret in SECRETS)


def test_every_secret_of_the_corpus_is_redacted() -> None:
    missed = [text for text, secret in SECRETS if secret in redact(text)]
    assert missed == []


def test_a_redacted_sentence_keeps_most_of_its_other_words() -> None:
    for text, secret in SECRETS:
        cleaned = redact(text)
        assert REDACTED in cleaned
        kept = _words(text.replace(secret, " "))
        readable = [w for w in kept if w in _words(cleaned)]
        assert len(readable) >= 0.7 * len(kept), (text, cleaned)


def test_at_most_two_percent_of_innocent_sentences_change() -> None:
    changed = [text for text in INNOCENT if redact(text) != text]
    assert len(changed) <= 0.02 * len(INNOCENT), changed
