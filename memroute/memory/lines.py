"""How one memory reads when it is injected, and which memories would repeat another.

A kept chat turn carries its date and speaker, so the model can answer "when" and
"who" questions: `[2026-05-08] Caroline: I adopted a dog last week.` (the role, "User"
or "Assistant", when the message named no speaker). A fact reads as stored, behind its
speaker's name when a named speaker stated it ("Caroline prefers tea"), and an episodic
one (something that happened) behind the day it was said: `[2026-05-08] adopted a dog`.
Of two lines that say the same words (see `LineDeduper`) only the first is injected.
"""

from __future__ import annotations

import re
import threading
import unicodedata
from collections.abc import Hashable, Mapping
from dataclasses import dataclass
from typing import Any

from memroute.models.records import TURN_KEY_PREFIX, MemoryRecord, estimate_tokens, stored_metadata_text

TURN_CATEGORY = "turn"  # metadata.category of a kept chat turn

_SMALL_WORDS = frozenset(
    """
    a an the i i'm im me my we our us you your it its is are was were be been am do does did
    to of in on at for and or but so just really very too also then that this these those oh
    ok okay well yeah yes no not
    """.split()  # noqa: SIM905 - a word list reads better as text
)
_WORD = re.compile(r"[^\W_]+")
_DATE = re.compile(r"\d{4}-\d{2}-\d{2}")
_ASCII_SPACES = str.maketrans(dict.fromkeys("\t\n\x0b\x0c\r\x1c\x1d\x1e\x1f", " "))


def normalised(text: str) -> str:
    """Case-folded NFC text with runs of white space as one space, trimmed (what repeats
    compare). `str.split` knows the same white space as `\\s`; ASCII text (NFC already,
    its case folded as lowered) has its white space made spaces and their runs halved
    instead, which makes no word objects: a request re-sending 100 KB of conversation is
    normalised at every chat."""
    if text.isascii():
        text = text.lower().translate(_ASCII_SPACES)
        while "  " in text:
            text = text.replace("  ", " ")
        return text.strip(" ")
    return " ".join(unicodedata.normalize("NFC", text).casefold().split())


def is_turn_key(key: str) -> bool:
    return key.startswith(TURN_KEY_PREFIX)


def reads_metadata(key: str) -> bool:
    """Whether the injected line of a memory with this key depends on its metadata: a kept
    turn (date and speaker) or a speaker's fact (`caroline/…`: the speaker's name)."""
    return key.startswith(TURN_KEY_PREFIX) or "/" in key


def is_turn(metadata: Mapping[str, Any] | None) -> bool:
    return isinstance(metadata, Mapping) and metadata.get("category") == TURN_CATEGORY


def injected_line(content: str, metadata: Mapping[str, Any] | None, day: str = "") -> str:
    """The line of a memory in the injected block (see the module docstring); a fact's
    line starts with `day` when one is given (see `episode_day`)."""
    if not is_turn(metadata):  # a fact: said of its speaker, when it has one
        speaker = metadata.get("speaker") if isinstance(metadata, Mapping) else None
        if isinstance(speaker, str) and speaker.strip() and not content.startswith(speaker.strip() + " "):
            content = f"{' '.join(speaker.split())} {content}"
        return f"[{day}] {content}" if day else content
    assert metadata is not None
    speaker = metadata.get("speaker")
    if not isinstance(speaker, str) or not speaker.strip():
        speaker = "Assistant" if metadata.get("role") == "assistant" else "User"
    learned = metadata.get("learnedAt")
    date = learned[:10] if isinstance(learned, str) and _DATE.match(learned) else ""
    return f"[{date}] {speaker.strip()}: {content}" if date else f"{speaker.strip()}: {content}"


class LineDeduper:
    """Remembers the lines taken so far and tells whether a new one repeats one of them.

    Two lines repeat each other when they have the same content words: case, spacing,
    punctuation, word order and the small words ("I", "the", "so", …) aside.
    One set lookup per line, whatever the number of lines."""

    def __init__(self) -> None:
        self._taken: set[frozenset[str]] = set()

    def repeats(self, content: str, words: frozenset[str] | None = None) -> bool:
        """True when `content` (whose `content_words` the caller may pass) repeats a line
        already taken; else takes it."""
        if words is None:
            words = content_words(content)
        if not words:
            return False
        if words in self._taken:
            return True
        self._taken.add(words)
        return False


def content_words(text: str) -> frozenset[str]:
    """The words of `text` that carry its meaning, case-folded (set operations only: this
    runs for every candidate of every chat)."""
    return frozenset(_WORD.findall(text.casefold())) - _SMALL_WORDS


@dataclass(frozen=True, slots=True)
class Rendered:
    """A memory as it is injected: its line, the tokens the line costs, its content's
    words (what the repeat check compares), the line as a framed block shows it
    (`framed_line`: the same string when nothing changes), and its content `normalised`
    (what the already-said check looks for)."""

    line: str
    tokens: int
    words: frozenset[str]
    framed: str
    normal: str


def framed_line(line: str) -> str:
    """`line` as a framed memory block shows it: on one line, each run of white space one
    space, trimmed (`line` itself when it already reads so)."""
    framed = " ".join(line.split())
    return line if framed == line else framed


def episode_day(memory: MemoryRecord) -> str:
    """The date (YYYY-MM-DD) an episodic memory's line shows: when it was said or happened
    (`created_at`, in the stored format); "" for other memories, and for kept turns, whose
    line shows the day they were said from their metadata."""
    if memory.type != "episodic" or memory.key.startswith(TURN_KEY_PREFIX):
        return ""
    return memory.created_at[:10]


def render(memory: MemoryRecord) -> Rendered:
    # Metadata is decoded only when the line needs it (a kept turn, a speaker's fact).
    day = episode_day(memory)
    if reads_metadata(memory.key):
        line = injected_line(memory.content, memory.metadata, day)
    else:
        line = f"[{day}] {memory.content}" if day else memory.content
    content = memory.content
    words = content_words(content)
    return Rendered(line, estimate_tokens(line), words, framed_line(line), normalised(content))


class RenderedLines:
    """The rendered form of the memories seen lately, so a memory that comes back request
    after request (the newest facts, common matches) is rendered once: for a chat, packing
    renders a hundred memories or more, and decoding their metadata and finding their words
    was most of its work.

    An entry is found by what the rendering reads (the text, and the stored metadata when
    the line uses it), so a changed memory never gets a stale line. The entries' estimated
    size stays under `max_bytes` (the oldest go first); safe to share between threads."""

    def __init__(self, max_bytes: int = 8 * 1024 * 1024) -> None:
        self.max_bytes = max_bytes
        self._entries: dict[Hashable, tuple[Rendered, int]] = {}
        self._bytes = 0
        self._lock = threading.Lock()

    def __len__(self) -> int:
        return len(self._entries)

    @property
    def size_bytes(self) -> int:
        """The estimated memory the entries take."""
        return self._bytes

    def of(self, memory: MemoryRecord) -> Rendered:
        """How `memory` reads when injected (rendered now, or found from an earlier render)."""
        day = episode_day(memory)
        entry: Hashable = (memory.content, day) if day else memory.content
        stored = ""
        if reads_metadata(memory.key):
            found_text = stored_metadata_text(memory)
            if found_text is None:  # decoded (or given as a dict) already: nothing to find it by
                return render(memory)
            stored = found_text
            entry = (memory.content, stored, day)
        found = self._entries.get(entry)
        if found is not None:
            return found[0]
        made = render(memory)
        self._keep(entry, made, _estimated_bytes(memory.content, stored, made))
        return made

    def _keep(self, entry: Hashable, made: Rendered, size: int) -> None:
        with self._lock:
            if entry in self._entries:
                return
            self._entries[entry] = (made, size)
            self._bytes += size
            while self._bytes > self.max_bytes and self._entries:
                self._bytes -= self._entries.pop(next(iter(self._entries)))[1]


def _estimated_bytes(content: str, stored: str, made: Rendered) -> int:
    """Roughly what one entry holds: its texts, its lines and normalised content when they
    are other strings, and its word set (a word and its slot in the set)."""
    line = len(made.line) if made.line is not content else 0
    framed = len(made.framed) if made.framed is not made.line else 0
    normal = len(made.normal) if made.normal is not content else 0
    return 200 + len(content) + len(stored) + line + framed + normal + 90 * len(made.words)
