"""Secrets never become memories: API keys, tokens, passwords, private keys, card numbers
and credentials in URLs are replaced by `[redacted]` before a text is queued for
extraction, before facts are stored, and when a memory is added, updated or imported.

The rules, in the order they run:

1. private key blocks and tokens with a known prefix (`sk-…`, `sk_live_…`, `rk_live_…`,
   `whsec_…`, `ghp_…`, `github_pat_…`, `glpat-…`, `xox[abposr]-…`, `AKIA…`, `AIza…`,
   `hf_…`, `npm_…`, `pypi-…`, SendGrid, Shopify, DigitalOcean, Vault, Google OAuth,
   JWTs, memroute client keys), Slack and Discord webhook URLs (the token part);
2. the password of a URL (`scheme://user:pass@host`: user and host stay), `Bearer` and
   `Basic` credentials, `-p`/`--password` and `-u user:pass` on a command line,
   `auth=('user', 'pass')`, "credentials are user / pass" and `<password>…</password>`;
3. labelled values (`memory/redact_labels.py`);
4. bare high-entropy tokens of 20+ characters (`memory/redact_shapes.py` has the rule);
5. card numbers that pass the Luhn check.

An ordinary number, version, id, hash, UUID, path or URL without credentials is never
touched; `tests/memory/redaction_corpus.py` holds the sentences that check both sides.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from memroute.memory.redact_labels import assignment_spans, prose_spans
from memroute.memory.redact_shapes import BARE_TOKEN, URL, looks_random, shaped_like_secret

REDACTED = "[redacted]"

_EDGE = r"(?<![A-Za-z0-9])"  # unlike \b, this also matches after "_" (DB_KEY=sk_live_…)
_PRIVATE_KEY = r"-----BEGIN [A-Z ]*PRIVATE KEY-----.*?(?:-----END [A-Z ]*PRIVATE KEY-----|\Z)"
# One lookbehind for every prefix (checked once per position, not once per prefix: ~8x faster).
_PREFIXED = [
    r"sk-(?:proj-|ant-|live-|test-)?[A-Za-z0-9_\-]{16,}",  # OpenAI, Anthropic
    r"(?:sk|rk|pk)_(?:live|test)_[A-Za-z0-9]{16,}",  # Stripe
    r"whsec_[A-Za-z0-9]{16,}",  # Stripe webhook signing
    r"mr-[A-Za-z0-9_\-]{16,}",  # memroute client keys
    r"gh[pousr]_[A-Za-z0-9]{30,}",
    r"github_pat_[A-Za-z0-9_]{40,}",
    r"glpat-[A-Za-z0-9_\-]{20,}",
    r"(?:AKIA|ASIA)[0-9A-Z]{16}(?![0-9A-Z])",
    r"xox[abposr]-[A-Za-z0-9\-]{10,}",
    r"AIza[0-9A-Za-z_\-]{35}",
    r"hf_[A-Za-z0-9]{30,}",
    r"npm_[A-Za-z0-9]{30,}",
    r"pypi-[A-Za-z0-9_\-]{40,}",
    r"SG\.[A-Za-z0-9_\-]{16,}\.[A-Za-z0-9_\-]{16,}",  # SendGrid
    r"shp(?:at|ss|ca|pa)_[a-fA-F0-9]{32}",  # Shopify
    r"do[por]_v1_[a-f0-9]{64}",  # DigitalOcean
    r"hv[sbr]\.[A-Za-z0-9_\-]{20,}",  # Vault
    r"ya29\.[A-Za-z0-9_\-]{20,}",  # Google OAuth access token
    r"eyJ[A-Za-z0-9_\-]{8,}\.[A-Za-z0-9_\-]{8,}\.[A-Za-z0-9_\-]{8,}",  # JWT
]
_TOKENS = re.compile(_PRIVATE_KEY + "|" + _EDGE + "(?:" + "|".join(_PREFIXED) + ")", re.DOTALL)
# Each keeps group 1 (what names the secret) and replaces group 2.
_KEEP_PREFIX = [
    re.compile(r"(?i)(https?://hooks\.slack\.com/(?:services|workflows|triggers)/)[A-Za-z0-9/_\-]+"),
    re.compile(r"(?i)(https?://(?:[a-z]+\.)?discord(?:app)?\.com/api/webhooks/)\d+/[A-Za-z0-9_\-]+"),
    re.compile(r"(?i)\b([a-z][a-z0-9+.\-]*://[^\s:/@]*:)[^\s@/]+(?=@)"),  # scheme://user:pass@host
    re.compile(r"(?i)\b((?:bearer|basic)\s+)[A-Za-z0-9._\-~+/]{16,}=*"),
    re.compile(r"""(?i)(\bauth\s*=\s*\(\s*(['"])[^'"\n]*\2\s*,\s*['"])[^'"\n]+"""),  # auth=('u', 'p')
    re.compile(r"(?i)(<(\w*(?:password|passwd|secret|token|api_?key)\w*)>)[^<\n]+(?=</\2>)"),
    re.compile(r"(?i)(\b(?:credentials|creds)\s+(?:are|is|:)\s*:?\s*[^\s/:,]+\s*[/:]\s*)\S+"),
]
_CLI = re.compile(r"(?<!\S)(-p(?=[^\s\-])|--password[= ]\s*|-p\s+|(?:-u|--user)\s+[^\s:]+:)(\S+)")
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


def _cli(match: re.Match[str]) -> str:
    value = match.group(2)
    return match.group(1) + REDACTED if shaped_like_secret(value) else match.group()


def _replace_spans(text: str, spans: Iterable[tuple[int, int]]) -> str:
    """`text` with each of the (non-overlapping, first wins) spans replaced."""
    parts: list[str] = []
    position = 0
    for start, end in sorted(spans):
        if start < position:
            continue
        parts += [text[position:start], REDACTED]
        position = end
    return "".join(parts) + text[position:]


def _high_entropy(text: str) -> str:
    urls = [m.span() for m in URL.finditer(text)]
    spans = [
        m.span()
        for m in BARE_TOKEN.finditer(text)
        if looks_random(m.group()) and not any(a <= m.start() < b for a, b in urls)
    ]
    return _replace_spans(text, spans)


def redact(text: str) -> str:
    """`text` with every secret replaced by `[redacted]`."""
    if not text:
        return text
    text = _TOKENS.sub(REDACTED, text)
    for pattern in _KEEP_PREFIX:
        text = pattern.sub(lambda m: m.group(1) + REDACTED, text)
    text = _CLI.sub(_cli, text)
    text = _replace_spans(text, assignment_spans(text))
    text = _replace_spans(text, prose_spans(text))
    text = _high_entropy(text)
    return _CARD.sub(_card, text)
