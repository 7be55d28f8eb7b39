"""What a secret looks like, without a label or a known prefix: the shape tests the
redactor uses for values after a label and for bare high-entropy tokens.

A bare token is treated as a secret when all of these hold (the innocent corpus in
`tests/memory/redaction_corpus.py` decided each one):

- at least 20 characters, none of them spaces, quotes or brackets;
- upper-case letters, lower-case letters and digits all appear (so hex hashes, git SHAs,
  UUIDs, ULIDs, pod names, `CONSTANT_NAMES` and paths in lower case stay);
- it is not hex digits and dashes only (md5, sha1, sha256, UUIDs in any case);
- it is not an object id of the form `word_random` (Stripe's `evt_…`, `cus_…`): secrets
  with such a prefix are recognised by their prefix before this rule runs;
- words (a capital and 3+ lower-case letters, or 3+ lower-case letters) cover less than
  40 % of it (so `report_final_v3_REALLY_final.docx`, `React18StrictModeWarning`,
  `C:\\Users\\Jane\\…` stay);
- its letters and digits change class (upper, lower, digit) at 30 % of the positions or
  more: random text changes about 60 % of the time, time stamps and identifiers far less
  (`20240601T120000Z-batch-0042` stays).

Text inside a URL is never tested this way (document ids in links are not secrets); a
URL's password, webhook tokens and labelled query parameters are caught by other rules.
"""

from __future__ import annotations

import re
from collections.abc import Iterator

BARE_TOKEN = re.compile(r"""(?<![^\s'"`(\[{<,;=:])[^\s'"`<>()\[\]{},;=]{20,}={0,2}""")
URL = re.compile(r"(?i)\b[a-z][a-z0-9+.\-]*://\S+|\bwww\.\S+")
_HEX = re.compile(r"[0-9a-fA-F\-]+")
_OBJECT_ID = re.compile(r"[a-z]{2,8}_[A-Za-z0-9]+")
_WORD = re.compile(r"[A-Z]?[a-z]{3,}")
_SYMBOL = re.compile(r"[!@#$%^&*?+=~]")
_NOT_ALNUM = re.compile(r"[^A-Za-z0-9]+")
_CLASS_RUN = re.compile(r"[0-9]+|[A-Z]+|[a-z]+")  # one run per change of class, plus one
# The only characters a case-blind pattern takes for an ASCII letter besides A-Z itself.
_ASCII_TWINS = str.maketrans({"\u0130": "i", "\u0131": "i", "\u017f": "s", "\u212a": "k"})


def folded(text: str) -> str:
    """`text` in lower case, with the non-ASCII letters a case-blind pattern reads as ASCII
    (`İ ı ſ K`) spelled as those letters: a word a `(?i)` pattern would find in `text` is
    in the folded text as a plain substring, so a membership check can stand in for it."""
    return (text if text.isascii() else text.translate(_ASCII_TWINS)).lower()


def long_words(text: str, length: int = 20) -> Iterator[tuple[int, int]]:
    """Start and end of each whitespace-separated word of `length` or more characters."""
    position = 0
    for word in text.split():
        if len(word) >= length:
            position = text.find(word, position)
            yield position, position + len(word)
            position += len(word)


def looks_random(token: str) -> bool:
    """True when a bare token of 20+ characters is shaped like a key, not like an id,
    hash, path or name (the rule in this module's docstring)."""
    token = token.rstrip(".:!?")
    if len(token) < 20 or _HEX.fullmatch(token) or _OBJECT_ID.fullmatch(token):
        return False
    alnum = _NOT_ALNUM.sub("", token)
    if alnum.lower() == alnum or alnum.upper() == alnum or alnum.isalpha():
        return False  # no upper-case letter, no lower-case letter or no digit
    if sum(len(w) for w in _WORD.findall(token)) >= 0.4 * len(token):
        return False
    changes = len(_CLASS_RUN.findall(alnum)) - 1
    return changes >= 0.3 * (len(alnum) - 1)


def shaped_like_secret(value: str) -> bool:
    """True for a value that reads as a password or key rather than a word: 6+ characters
    with letters and digits, or upper, lower and a symbol (`hunter2`, `Blue$Moon`)."""
    if len(value) < 6:
        return False
    letters = any(c.isalpha() for c in value)
    if letters and any(c.isdigit() for c in value):
        return True
    return any(c.isupper() for c in value) and any(c.islower() for c in value) and bool(_SYMBOL.search(value))
