"""Secrets named by a label: the label stays, the value becomes `[redacted]`.

Two kinds of label are recognised:

- an assignment to a name that ends in a secret word, as env files, shell exports, JSON,
  YAML, TOML and code write it (`DB_PASSWORD=…`, `aws_secret_access_key = …`,
  `"apiToken": "…"`, `secretAccessKey: …`, `password := "…"`): any value is taken,
  except references and placeholders (`${DB_PASSWORD}`, `{{ secrets.X }}`,
  `os.environ[…]`, `settings.api_key`, `<your password here>`, `changeme`);
- a secret word in prose (`password`, `passwd`, `passphrase`, `pw`, `secret`, `token`,
  `api key`, `access token`, `client secret`, `PIN`, `alarm code`, `Passwort`, …)
  followed by its value directly ("the password hunter2 for …", "use token X"), after
  `is`/`was`/`:`/`=`/`to` ("my API key is X", "changed it to X"), or after a few words
  ("the password for the staging box is X"). A value read this way must look like a
  secret (letters and digits, or mixed case and a symbol); only right after `is` may a
  password be a plain word ("my password is sunflower"), unless the word is one a sentence
  about passwords uses ("is required", "is wrong", "expired").
"""

from __future__ import annotations

import re
from collections.abc import Iterator

from memroute.memory.redact_shapes import folded, shaped_like_secret

# Every secret name and prose label ends in one of these; neither rule can match in a text
# whose folded form (redact_shapes.folded) lacks them, so each looks for its hint first.
_LABEL_ENDINGS = r"(?:key|token|secret|word|wort|wd|phrase|code|credentials|pass|pw|pin)s?"
_ASSIGNMENT_HINT = re.compile(_LABEL_ENDINGS + r"""["']?\s*[:=>]""")  # in the text without _ . -
_PROSE_HINT = re.compile(_LABEL_ENDINGS + r"(?![a-z])")
_VALUE = re.compile(r""""([^"\n]+)"|'([^'\n]+)'|((?:[^\s,;'"<>)}\]&]|&(?!\w+=))+)""")
_ASSIGNMENT = re.compile(r"""(?<![A-Za-z0-9_.\-])([A-Za-z][A-Za-z0-9_.\-]*)["']?\s*(?::=|=>|->|[:=])\s*""")
_STRONG_ENDINGS = tuple(
    word + plural
    for word in (
        "password", "passwort", "passwd", "passphrase", "secret", "token", "apikey", "accesskey",
        "secretkey", "privatekey", "credentials", "requirepass",
    )
    for plural in ("", "s")
)  # fmt: skip
_SHORT_NAME = re.compile(r"(?:.*[_.\-])?(?:pass|pwd|pw|pin)", re.IGNORECASE)
_KEY_NAME = re.compile(r"(?i:.*[_.\-]key)|.*[a-z]Key")
_PROSE_LABEL = re.compile(
    r"(?i)(?<![A-Za-z0-9])("
    r"(?:api|access|secret|private|license|client|auth|bearer|deploy|refresh)[\s_\-]?(?:key|token|secret)"
    r"|password|passwort|kennwort|passwd|passphrase|pass\s?code|pass|pwd|pw|secret|token|pin"
    r"|(?:alarm|door|gate|safe|security|access)\s+code"
    r")s?(?![A-Za-z])"
)
_SEPARATOR = re.compile(r"(?i)\s*(?::=|->|=>|→|[:=])\s*|'s\s+|\s+(?:is|was|ist|are|lautet|to)\s+(?:now\s+)?")
_SENTENCE_END = re.compile(r"[.!?;](?:\s|$)")
_PASSWORD_WORDS = {"password", "passwort", "kennwort", "passwd", "passphrase", "pw", "pwd"}
_PIN_WORDS = {"pin", "code", "passcode", "pass code"}
_NOT_VALUES = {
    "a", "an", "the", "not", "too", "very", "required", "wrong", "incorrect", "invalid", "correct",
    "weak", "strong", "long", "short", "empty", "missing", "set", "same", "different", "case",
    "stored", "saved", "hashed", "encrypted", "never", "always", "still", "now", "also", "just",
    "only", "your", "my", "our", "their", "his", "her", "its", "this", "that", "what", "which",
    "how", "where", "when", "here", "there", "secret", "private", "safe", "fine", "ok", "okay",
    "good", "bad", "easy", "hard", "simple", "new", "old", "reset", "expired", "changed", "valid",
    "optional", "mandatory", "visible", "hidden", "shown", "sent", "being", "been", "one", "enough",
    "none", "null", "nil", "true", "false", "undefined", "await", "self", "string", "str",
    "int", "bool", "changeme", "redacted", "example", "placeholder", "password", "token", "xxx",
    "todo", "tbd", "see", "use", "in", "on", "at", "for", "of", "to", "from", "with", "by", "and",
    "or", "is", "was", "it", "you", "me", "we", "they", "so", "but", "if", "yes", "no",
}  # fmt: skip
_REFERENCE = re.compile(r"[$%{<!*\[]|[\w.]+[(\[]|[a-z_][a-z0-9_]*(?:\.[a-z_][a-z0-9_]*)+$|\.\.\.|…")


def _value_at(text: str, pos: int) -> tuple[int, int, str] | None:
    """The span and text of the value that starts at `pos` (inside its quotes, if quoted)."""
    match = _VALUE.match(text, pos)
    if match is None:
        return None
    group = next(g for g in (1, 2, 3) if match.group(g) is not None)
    start, end, value = match.start(group), match.end(group), match.group(group)
    if group == 3:
        trimmed = value.rstrip(".")
        end -= len(value) - len(trimmed)
        value = trimmed
    return (start, end, value) if value else None


def _usable(value: str) -> bool:
    """False for references, placeholders, the placeholder itself and ordinary words."""
    return not (
        value.startswith("[redacted") or _REFERENCE.match(value) or value.lower().strip("'\"") in _NOT_VALUES
    )


def _plain_word_password(value: str) -> bool:
    word = value.lower()
    return word.isalpha() and len(word) >= 4 and not word.endswith(("ed", "ing", "ly", "ble"))


def _name_is_secret(name: str) -> tuple[bool, bool]:
    """(is a secret's name, is only a weak one such as `ENCRYPTION_KEY`)."""
    flat = re.sub(r"[_.\-]", "", name.lower())
    if flat.endswith(_STRONG_ENDINGS):
        return True, False
    if _SHORT_NAME.fullmatch(name):
        return True, False
    return (True, True) if _KEY_NAME.fullmatch(name) else (False, False)


def assignment_spans(text: str) -> Iterator[tuple[int, int]]:
    """Spans of values assigned to secret names (`NAME=value`, `"name": "value"`)."""
    if not _ASSIGNMENT_HINT.search(folded(text).replace("_", "").replace(".", "").replace("-", "")):
        return
    for match in _ASSIGNMENT.finditer(text):
        secret, weak = _name_is_secret(match.group(1))
        if not secret:
            continue
        found = _value_at(text, match.end())
        if found is None:
            continue
        start, end, value = found
        if not _usable(value):
            continue
        if weak and not (len(value) >= 16 and shaped_like_secret(value)):
            continue
        yield start, end


def prose_spans(text: str) -> Iterator[tuple[int, int]]:
    """Spans of values a secret word in prose names ("the password X", "my API key is X")."""
    if not _PROSE_HINT.search(folded(text)):
        return
    for label in _PROSE_LABEL.finditer(text):
        span = _prose_value(text, label.end(), re.sub(r"\s+", " ", label.group(1).lower()))
        if span is not None:
            yield span


def _prose_value(text: str, end: int, label: str) -> tuple[int, int] | None:
    """The span of the value after a label that ends at `end`: right after a separator,
    right after the label, or after a separator a few words on."""
    window = text[end : end + 120].split("\n", 1)[0]
    separators = list(_SEPARATOR.finditer(window))
    if separators and separators[0].start() == 0:
        found = _value_at(window, separators[0].end())
        if found is not None and _accepted_right_after(
            found[2], separators[0].group().strip().lower(), label
        ):
            return end + found[0], end + found[1]
        separators = separators[1:]
    direct = re.match(r"\s+", window)
    if direct is not None:
        found = _value_at(window, direct.end())
        if found is not None and _usable(found[2]) and shaped_like_secret(found[2]):
            return end + found[0], end + found[1]
    for separator in separators:
        gap = window[: separator.start()]
        if len(gap) > 40 or _SENTENCE_END.search(gap):
            return None
        found = _value_at(window, separator.end())
        if (
            found is not None
            and _usable(found[2])
            and (shaped_like_secret(found[2]) or _pin(found[2], label))
        ):
            return end + found[0], end + found[1]
    return None


def _pin(value: str, label: str) -> bool:
    return (label in _PIN_WORDS or label.endswith(" code")) and value.isdigit() and 4 <= len(value) <= 10


def _accepted_right_after(value: str, separator: str, label: str) -> bool:
    """A value right after `label` and `separator`: after `:` or `=` anything usable; after
    `is` a secret's shape, a PIN's digits or (for a password) a word a sentence would not use."""
    if not _usable(value):
        return False
    if separator in {":", "=", ":=", "->", "=>", "→"}:
        return True
    if shaped_like_secret(value) or _pin(value, label):
        return True
    return separator != "to" and label in _PASSWORD_WORDS and _plain_word_password(value)
