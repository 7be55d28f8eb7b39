"""Secrets never become memories: API keys, tokens, passwords, private keys and card
numbers in a chat are replaced by `[redacted]` before the text is queued for
extraction (so they are not even kept in the queue) and before facts are stored.

Patterns are specific on purpose (known key prefixes, `password: …` forms, card
numbers that pass the Luhn check): an ordinary number, version or name is never
touched.
"""

from __future__ import annotations

import re

REDACTED = "[redacted]"

_TOKENS = re.compile(
    "|".join(
        [
            r"-----BEGIN [A-Z ]*PRIVATE KEY-----.*?(?:-----END [A-Z ]*PRIVATE KEY-----|\Z)",
            r"\bsk-(?:proj-|ant-|live-|test-)?[A-Za-z0-9_\-]{16,}",  # OpenAI, Anthropic, Stripe…
            r"\b(?:rk|pk)_(?:live|test)_[A-Za-z0-9]{16,}",  # Stripe
            r"\bmr-[A-Za-z0-9_\-]{16,}",  # memroute client keys
            r"\bgh[pousr]_[A-Za-z0-9]{30,}",
            r"\bgithub_pat_[A-Za-z0-9_]{40,}",
            r"\bglpat-[A-Za-z0-9_\-]{20,}",
            r"\b(?:AKIA|ASIA)[0-9A-Z]{16}\b",
            r"\bxox[abposr]-[A-Za-z0-9\-]{10,}",
            r"\bAIza[0-9A-Za-z_\-]{35}",
            r"\bhf_[A-Za-z0-9]{30,}",
            r"\beyJ[A-Za-z0-9_\-]{8,}\.[A-Za-z0-9_\-]{8,}\.[A-Za-z0-9_\-]{8,}",  # JWT
        ]
    ),
    re.DOTALL,
)
_BEARER = re.compile(r"(?i)\b(bearer\s+)[A-Za-z0-9._\-~+/]{16,}=*")
# "my password is hunter2", "api_key: abc…", "token=…": the label stays, the value goes. A
# separator (":", "=", "is") is required, so "token budgets" or "I pin versions" stay.
_LABELLED = re.compile(
    r"(?i)\b((?:password|passwd|passphrase|pass\s?code|pin|secret|api[\s_-]?key|access[\s_-]?key|"
    r"access[\s_-]?token|auth[\s_-]?token|token|client[\s_-]?secret)s?"
    r"\s*(?:[:=]|\s(?:is|was|are)\b:?)\s*)"
    r"(?!\[redacted\])([^\s,;]{4,})"
)
_CARD = re.compile(r"\b\d(?:[ -]?\d){12,18}\b")


def _luhn(digits: str) -> bool:
    total = 0
    for position, char in enumerate(reversed(digits)):
        value = int(char)
        if position % 2:
            value = value * 2 - 9 if value > 4 else value * 2
        total += value
    return total % 10 == 0


def _card(match: re.Match[str]) -> str:
    digits = re.sub(r"\D", "", match.group())
    return REDACTED if 13 <= len(digits) <= 19 and _luhn(digits) else match.group()


def redact(text: str) -> str:
    """`text` with every secret replaced by `[redacted]`."""
    if not text:
        return text
    text = _TOKENS.sub(REDACTED, text)
    text = _BEARER.sub(lambda m: m.group(1) + REDACTED, text)
    text = _LABELLED.sub(lambda m: m.group(1) + REDACTED, text)
    return _CARD.sub(_card, text)
