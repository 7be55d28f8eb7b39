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

Every memory write runs this, so each rule first looks for what it cannot match without
and is skipped, or confined to a few words, when that is absent: a known prefix lives in
a word of 15+ characters, a bare token in one of 20+, a label ends in a word such as
`key`, `token` or `word`, a URL password needs `://…:…@`. These checks only skip work: the
result is the same as running every rule over the whole text (docs/benchmarks.md has the
cost).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable

from memroute.memory.redact_labels import assignment_spans, prose_spans
from memroute.memory.redact_shapes import (
    BARE_TOKEN,
    URL,
    folded,
    long_words,
    looks_random,
    shaped_like_secret,
)

REDACTED = "[redacted]"

_EDGE = r"(?<![A-Za-z0-9])"  # unlike \b, this also matches after "_" (DB_KEY=sk_live_…)
_PRIVATE_KEY_START = "-----BEGIN "
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
_SHORTEST_TOKEN = 15  # characters in the shortest match of _PREFIXED (xoxb- and 10 more)
_TOKENS = re.compile(_PRIVATE_KEY + "|" + _EDGE + "(?:" + "|".join(_PREFIXED) + ")", re.DOTALL)
# scheme://user:pass@host: group 1 is the whole run of scheme characters before "://" (the
# lookbehind starts it at the run's first character, so a long run is read once, not once
# per position); the scheme is the part of it from a letter at a word boundary on.
_URL_HINT = re.compile(r"://[^\s:/@]*:[^\s@/]+@")
_URL_PASSWORD = re.compile(r"(?i)(?<![a-z0-9+.\-])([a-z0-9+.\-]*)(://[^\s:/@]*:)[^\s@/]+(?=@)")
_SCHEME_START = re.compile(r"(?i)\b[a-z]")


def _keep_group_1(match: re.Match[str]) -> str:
    return match.group(1) + REDACTED


def _url_password(match: re.Match[str]) -> str:
    has_scheme = _SCHEME_START.search(match.string, match.start(1), match.end(1))
    return match.group(1) + match.group(2) + REDACTED if has_scheme else match.group()


# (hint, rule, replacement): each keeps what names the secret and replaces the secret; each
# runs only when its hint is in the folded text (shapes.folded: lower case, as `(?i)` reads).
_KEEP_PREFIX: list[tuple[re.Pattern[str], re.Pattern[str], Callable[[re.Match[str]], str]]] = [
    (
        re.compile(r"hooks\.slack\.com/"),
        re.compile(r"(?i)(https?://hooks\.slack\.com/(?:services|workflows|triggers)/)[A-Za-z0-9/_\-]+"),
        _keep_group_1,
    ),
    (
        re.compile(r"/api/webhooks/"),
        re.compile(r"(?i)(https?://(?:[a-z]+\.)?discord(?:app)?\.com/api/webhooks/)\d+/[A-Za-z0-9_\-]+"),
        _keep_group_1,
    ),
    (_URL_HINT, _URL_PASSWORD, _url_password),  # scheme://user:pass@host
    (
        re.compile(r"bearer|basic"),
        re.compile(r"(?i)\b((?:bearer|basic)\s+)[A-Za-z0-9._\-~+/]{16,}=*"),
        _keep_group_1,
    ),
    (
        re.compile(r"auth"),
        re.compile(r"""(?i)(\bauth\s*=\s*\(\s*(['"])[^'"\n]*\2\s*,\s*['"])[^'"\n]+"""),  # auth=('u', 'p')
        _keep_group_1,
    ),
    (
        re.compile(r"<"),
        re.compile(r"(?i)(<(\w*(?:password|passwd|secret|token|api_?key)\w*)>)[^<\n]+(?=</\2>)"),
        _keep_group_1,
    ),
    (
        re.compile(r"cred"),
        re.compile(r"(?i)(\b(?:credentials|creds)\s+(?:are|is|:)\s*:?\s*[^\s/:,]+\s*[/:]\s*)\S+"),
        _keep_group_1,
    ),
]
# These two start with a plain character ("-", a digit) before their lookbehind, so the regex
# engine skips ahead to the next such character instead of trying every position.
_CLI = re.compile(r"(-(?<!\S-)(?:p(?=[^\s\-])|-password[= ]\s*|p\s+|(?:u|-user)\s+[^\s:]+:))(\S+)")
_MIXED = re.compile(r"(?=[^A-Z]*[A-Z])(?=[^a-z]*[a-z])[^0-9]*[0-9]")
_CARD = re.compile(r"\d(?<!\w\d)(?:[ -]?\d){12,18}\b")  # \d(?<!\w\d) is \b\d


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


def _high_entropy(text: str, words: Iterable[tuple[int, int]]) -> str:
    """`text` with each bare random-looking token in `words` (the spans of its words of 20+
    characters, the only ones that can hold such a token) replaced; a word without an
    upper-case letter, a lower-case letter and a digit is skipped (looks_random needs all)."""
    spans: list[tuple[int, int]] = []
    for start, end in words:
        if not _MIXED.match(text, start, end):
            continue
        urls = [m.span() for m in URL.finditer(text, start, end)]
        spans += [
            m.span()
            for m in BARE_TOKEN.finditer(text, start, end)
            if not any(a <= m.start() < b for a, b in urls) and looks_random(m.group())
        ]
    return _replace_spans(text, spans) if spans else text


def _prefixed(text: str, words: Iterable[tuple[int, int]]) -> str:
    """`text` with private keys and tokens of a known prefix replaced. A prefixed token has no
    space and 15+ characters, so without a private key only `words` (the spans of the words
    of 15+ characters) are scanned."""
    if _PRIVATE_KEY_START in text:
        return _TOKENS.sub(REDACTED, text)
    spans = [m.span() for start, end in words for m in _TOKENS.finditer(text, start, end)]
    return _replace_spans(text, spans) if spans else text


def _named(text: str) -> str:
    """`text` with the secrets a prefix names replaced (URL passwords, `Bearer …`, `-p …`);
    each rule runs only when its hint is in the text."""
    lowered = folded(text)
    for hint, pattern, replace in _KEEP_PREFIX:
        if hint.search(lowered):
            replaced = pattern.sub(replace, text)
            if replaced != text:
                text, lowered = replaced, folded(replaced)
    return _CLI.sub(_cli, text)


def redact(text: str) -> str:
    """`text` with every secret replaced by `[redacted]`."""
    if not text:
        return text
    words = list(long_words(text, _SHORTEST_TOKEN))
    cleaned = _named(_prefixed(text, words))
    cleaned = _replace_spans(cleaned, assignment_spans(cleaned))
    cleaned = _replace_spans(cleaned, prose_spans(cleaned))
    if cleaned != text:
        words = list(long_words(cleaned, _SHORTEST_TOKEN))
    cleaned = _high_entropy(cleaned, [(a, b) for a, b in words if b - a >= 20])
    return _CARD.sub(_card, cleaned)
