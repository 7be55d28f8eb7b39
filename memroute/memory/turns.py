"""What of a chat turn is kept verbatim: the text people wrote, in bounded chunks.

A turn's text loses what is not conversation before it is kept: fenced code blocks,
base64 blobs and `data:` URLs become short placeholders (`[code]`, `[data]`). A turn
that says nothing ("ok", "thanks!", "lol", a lone emoji) is skipped. A long turn is
split at paragraph, then sentence, then word boundaries into chunks of at most
`MAX_CHUNK_CHARS`. Each chunk has a key from its normalised text and its speaker, so
the same text said twice by one person is kept once.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from memroute.memory.injection import last_user_text, parts_text, user_item_text
from memroute.memory.lines import normalised
from memroute.models.records import TURN_KEY_PREFIX

MAX_CHUNK_CHARS = 1200
MAX_TURN_CHARS = 64 * 1024  # the newest part of a longer text is kept
MAX_CHUNKS = 64
MAX_SPEAKER_CHARS = 64

_FENCED_CODE = re.compile(r"(?:```|~~~)[^\n]*\n.*?(?:```|~~~|\Z)", re.DOTALL)
# A blob the redactor masked already ("[redacted]") is still a blob.
_DATA_URL = re.compile(r"data:[\w.+-]+/[\w.+-]+;base64,(?:\[redacted\]|[A-Za-z0-9+/=\s])*")
_BASE64_RUN = re.compile(r"[A-Za-z0-9+/]{120,}={0,2}")
_PLACEHOLDER_RUN = re.compile(r"(\[(?:code|data)\])(?:\s*\1)+")
_WORD = re.compile(r"[^\W_]+")
_PARAGRAPH = re.compile(r"\n\s*\n")
_SENTENCE_END = re.compile(r"(?<=[.!?…])\s+")

# Words that carry nothing on their own: a turn made only of these is skipped.
_FILLER = frozenset(
    """
    ok okay okey k kk thanks thank thx ty tysm you u so much very lot a lol lmao lmfao rofl
    haha hahaha hehe hah yes yeah yep yup ya no nope nah sure cool nice great good awesome
    hi hello hey hiya bye cya later morning night gm gn wow omg hmm hm ah oh uh um right
    alright np welcome yw agreed indeed true same fine ikr idk brb ttyl xd
    """.split()  # noqa: SIM905 - a word list reads better as text
)
# Small talk around a greeting ("how are things?", "not bad, you?", "long time").
_SMALL_TALK = frozenset(
    """
    how are is was things thing going doing your day week weekend evening afternoon long time
    see not bad too old all been it up sup what s again soon talk care take catch heya
    hola yo howdy dear mate guys everyone folks cheers and around there here stranger to have
    meet hear from hope glad re ve well
    """.split()  # noqa: SIM905 - a word list reads better as text
)
# The words that make a turn a greeting, so the names in it are whom it greets.
_GREETINGS = frozenset(
    """
    hi hello hey hiya heya hola yo howdy morning evening afternoon night gm gn bye cya later
    cheers thanks thank thx ty long meet see welcome
    """.split()  # noqa: SIM905 - a word list reads better as text
)


# What a turn that says nothing is made of (placeholders of removed code and data included).
_CHATTER = _FILLER | _SMALL_TALK | {"code", "data"}
_DOUBLED = re.compile(r"(.)\1+")
# A word of chatter written with its letters drawn out, found by its letters with every
# run cut to one ("heyy", "hiii" → "hey", "hi").
_ELONGATED = {_DOUBLED.sub(r"\1", w): w for w in sorted(_CHATTER)}


@dataclass(frozen=True, slots=True)
class Chunk:
    """One piece of a turn to keep: its text, key, and place among the turn's chunks."""

    text: str
    key: str
    index: int
    count: int


def without_media(text: str) -> str:
    """`text` with code blocks, `data:` URLs and base64 runs replaced by placeholders."""
    text = _FENCED_CODE.sub(" [code] ", text)
    text = _DATA_URL.sub(" [data] ", text)
    text = _BASE64_RUN.sub(" [data] ", text)
    return _PLACEHOLDER_RUN.sub(r"\1", text)


def says_something(text: str) -> bool:
    """False for a turn of only filler words, placeholders, punctuation or emoji, and for a
    greeting or small talk that names at most two people ("morning Beatriz", "hi Felix, how
    are things?"): it says who talks to whom, nothing to remember."""
    names = 0
    greets = False
    for word in _WORD.findall(text):
        low = word.casefold()
        if low not in _CHATTER:
            low = _ELONGATED.get(_DOUBLED.sub(r"\1", low), low)  # "hiii", "heyy", "sooo"
        if low in _CHATTER:
            greets = greets or low in _GREETINGS
        elif word[0].isupper() and word != "I":
            names += 1
        else:
            return True
    return names > 0 and (names > 2 or not greets)


def turn_key(text: str, speaker: str = "") -> str:
    """The memory key of a kept text: the same for the same words, whatever their spacing
    or case, said by the same speaker."""
    said = normalised(text) if not speaker else f"{normalised(speaker)}\n{normalised(text)}"
    return TURN_KEY_PREFIX + hashlib.sha256(said.encode("utf-8", "surrogatepass")).hexdigest()[:16]


def _pieces(text: str, limit: int) -> list[str]:
    """`text` cut at paragraphs, then sentences, then words, into pieces ≤ `limit` chars."""
    if len(text) <= limit:
        return [text]
    for splitter in (_PARAGRAPH, _SENTENCE_END):
        parts = [p.strip() for p in splitter.split(text) if p.strip()]
        if len(parts) > 1:
            return [piece for part in parts for piece in _pieces(part, limit)]
    words, pieces, current = text.split(), [], ""
    for word in words:
        while len(word) > limit:  # one unbroken run longer than a chunk
            if current:
                pieces.append(current)
                current = ""
            pieces.append(word[:limit])
            word = word[limit:]
        if current and len(current) + 1 + len(word) > limit:
            pieces.append(current)
            current = word
        else:
            current = f"{current} {word}" if current else word
    if current:
        pieces.append(current)
    return pieces


def _packed(pieces: list[str], limit: int) -> list[str]:
    """Neighbouring pieces joined back while they fit one chunk (fewer, fuller chunks)."""
    out: list[str] = []
    for piece in pieces:
        if out and len(out[-1]) + 2 + len(piece) <= limit:
            out[-1] = f"{out[-1]}\n\n{piece}" if "\n" in piece or "\n" in out[-1] else f"{out[-1]} {piece}"
        else:
            out.append(piece)
    return out


def chunks(text: str, speaker: str = "", limit: int = MAX_CHUNK_CHARS) -> list[Chunk]:
    """The chunks of `text` (said by `speaker`) worth keeping (none for a turn that says
    nothing); at most `MAX_CHUNKS`, the last ones (the end of a long text is its newest part)."""
    if not isinstance(text, str):
        return []
    if len(text) > MAX_TURN_CHARS:  # the newest part, from its first whole sentence
        text = text[-MAX_TURN_CHARS:]
        start = _SENTENCE_END.search(text, 0, 1000)
        text = text[start.end() :] if start else text
    text = without_media(text).strip()
    if not text or not says_something(text):
        return []
    pieces = [p for p in _packed(_pieces(text, limit), limit) if says_something(p)]
    pieces = pieces[-MAX_CHUNKS:]
    return [Chunk(piece, turn_key(piece, speaker), i, len(pieces)) for i, piece in enumerate(pieces)]


def speaker_of(message: Mapping[str, Any]) -> str:
    """The speaker a message names (the OpenAI `name` field), trimmed and bounded; "" if none."""
    name = message.get("name")
    if not isinstance(name, str):
        return ""
    name = "".join(ch for ch in name if ch.isprintable()).strip()
    return name[:MAX_SPEAKER_CHARS]


def last_user_turn(request: Mapping[str, Any]) -> tuple[str, str]:
    """The text of the request's last user message that has text, and its speaker ("" if
    the message names none): what the gateway keeps of a chat request."""
    messages = request.get("messages")
    if isinstance(messages, list):
        for message in reversed(messages):
            if isinstance(message, Mapping) and message.get("role") == "user":
                text = user_item_text(message)
                if text:
                    return text, speaker_of(message)
    return last_user_text(request), ""


def said_in(request: Mapping[str, Any], field: str = "messages") -> str:
    """Every message text of the request (its `field`: `messages`, or a Responses body's
    `input`), normalised and joined: what it already holds, so a memory found inside it
    is not injected again."""
    items = request.get(field)
    if isinstance(items, str):
        return normalised(items)
    if not isinstance(items, list):
        return ""
    texts = []
    for message in items:
        if isinstance(message, Mapping):
            content = message.get("content")
            if isinstance(content, str):
                texts.append(content)
            elif isinstance(content, list):
                texts.append(parts_text(content))
    return normalised("\n".join(texts))
