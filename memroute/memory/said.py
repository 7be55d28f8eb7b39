"""What a chat request already says: a memory whose text the request holds is not injected
again (the client re-sent that turn in its history).

The request's messages are normalised once (`memroute.memory.turns.said_in`), and each
candidate memory's normalised text is looked for in them. A conversation grows request
after request (the same messages and more), and a coding tool's requests carry 100 KB and
more: `SaidSearches` remembers, per key and conversation, what the long requests were
found to hold, so the next request of the conversation searches only what it adds.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Mapping

# Per memory text: True (the request holds it), or the length of the request's text it was
# searched through without being found (a later request that goes on from there need only
# search what comes after).
Found = Mapping[str, "bool | int"]

LONG_REQUEST = 16 * 1024  # characters from which a request's searches are remembered
CONVERSATIONS = 256  # conversation starts remembered, the least recently asked dropped first
PER_START = 4  # conversations remembered per owner and start (several sessions, one system prompt)
MEMORIES_PER_CONVERSATION = 4096  # memory texts remembered per conversation, at most
MEMORIES_KEPT = 65_536  # memory texts remembered in all, at most (~10 MB)
_HEAD = 512  # characters of the request whose hash names its start (with the owner)


class AlreadySaid:
    """The request's normalised text (see `said_in`), and what an earlier request of the
    same conversation (`base`) found in the part they share."""

    __slots__ = ("_known", "base", "found", "text")

    def __init__(self, text: str, base: _Conversation | None = None) -> None:
        self.text = text
        self.base = base
        self._known: Found = base.found if base is not None else {}
        self.found: dict[str, bool | int] = {}  # what this request was found to hold (see `Found`)

    def holds(self, normal: str) -> bool:
        """Whether the request holds `normal` (a memory's `normalised` text) without cutting
        a word of its own: where the memory starts or ends with a letter or digit, the
        request's text does not go on with another there."""
        text = self.text
        if not normal or len(normal) > len(text):
            return False
        before = self._known.get(normal)
        if before is True:
            found = True
        else:
            # Not in the first `before` characters: only a match that ends after them is new.
            start = max(0, before - len(normal) + 1) if isinstance(before, int) else 0
            found = _found_whole(text, normal, start)
        self.found[normal] = True if found else len(text)
        return found


def _found_whole(text: str, normal: str, start: int) -> bool:
    """Whether `normal` stands in `text` from `start` on without cutting a word of it."""
    open_start, open_end = normal[0].isalnum(), normal[-1].isalnum()
    at = text.find(normal, start)
    while at >= 0:
        end = at + len(normal)
        cuts_start = open_start and at > 0 and text[at - 1].isalnum()
        cuts_end = open_end and end < len(text) and text[end].isalnum()
        if not (cuts_start or cuts_end):
            return True
        at = text.find(normal, at + 1)
    return False


class _Conversation:
    __slots__ = ("digest", "found", "length")

    def __init__(self, length: int, digest: int, found: Found) -> None:
        self.length = length
        self.digest = digest
        self.found = found


class SaidSearches:
    """What the long requests of each conversation were found to hold (see the module
    docstring). A request goes on from an earlier one when its text starts with that
    one's text, then a space (checked by hash). Conversations are looked up by their owner
    and the hash of the start of their text (no text is kept), so one key's searches never
    serve another's; a few are kept per start, as one system prompt begins many sessions.
    Safe to share between threads."""

    def __init__(
        self,
        conversations: int = CONVERSATIONS,
        long_request: int = LONG_REQUEST,
        memories_kept: int = MEMORIES_KEPT,
    ) -> None:
        self._conversations = conversations
        self._long_request = long_request
        self._memories_kept = memories_kept
        self._starts: OrderedDict[tuple[str, int], list[_Conversation]] = OrderedDict()
        self._kept = 0  # memory texts remembered in all
        self._lock = threading.Lock()

    def __len__(self) -> int:
        """Conversations remembered."""
        with self._lock:
            return sum(len(kept) for kept in self._starts.values())

    def said(self, owner: str, text: str) -> AlreadySaid:
        """The request's `AlreadySaid`, knowing what the conversation's last long request found."""
        if len(text) < self._long_request:
            return AlreadySaid(text)
        with self._lock:
            kept = list(self._starts.get((owner, hash(text[:_HEAD])), ()))
        base = next((conversation for conversation in kept if _goes_on_from(text, conversation)), None)
        return AlreadySaid(text, base)

    def keep(self, owner: str, said: AlreadySaid) -> None:
        """Remember what `said` found, with what its conversation found before."""
        text = said.text
        if len(text) < self._long_request or not said.found:
            return
        found = dict(said.base.found) if said.base is not None else {}
        found.update(said.found)
        while len(found) > MEMORIES_PER_CONVERSATION:
            del found[next(iter(found))]
        new = _Conversation(len(text), hash(text), found)
        start = (owner, hash(text[:_HEAD]))
        with self._lock:
            before = self._starts.pop(start, [])
            # The conversation it went on from is superseded; the others of this start stay.
            now = [new, *(c for c in before if c is not said.base)][:PER_START]
            self._starts[start] = now
            self._kept += sum(len(c.found) for c in now) - sum(len(c.found) for c in before)
            while len(self._starts) > self._conversations or self._kept > self._memories_kept:
                _, gone = self._starts.popitem(last=False)
                self._kept -= sum(len(c.found) for c in gone)


def _goes_on_from(text: str, entry: _Conversation) -> bool:
    """Whether `text` is the text `entry` searched, or it followed by a space and more (the
    next messages): what was found there, and where, then holds in `text` too."""
    length = entry.length
    if length > len(text) or (length < len(text) and text[length] != " "):
        return False
    return hash(text[:length]) == entry.digest
