"""One lead found in the combined alternation of every lead: its own groups by name.

Each lead's named groups are renamed `<name>_<index>` in the alternation, so one
match serves both to find the lead and to read its groups. The match itself is the
lead's first letter (leads are found inside a look-ahead, so they may overlap); the
lead ends where its empty group `p<index>` closes.
"""

from __future__ import annotations

import re
from collections.abc import Mapping


class Found:
    __slots__ = ("_end", "_index", "_match", "_names")

    def __init__(self, match: re.Match[str], index: int, names: Mapping[str, int]) -> None:
        """The lead `index` of `match`, whose pattern has the groups `names` and whose last
        group to close is the lead's empty group `p<index>`."""
        self._match = match
        self._index = index
        self._names = names
        self._end = match.end(match.lastindex or 0)

    def group(self, name: str) -> str:
        """The text of the lead's group `name` (a group the lead always fills)."""
        return self._match.group(f"{name}_{self._index}") or ""

    def get(self, name: str) -> str | None:
        """The text of an optional group, None when it did not take part (or does not exist)."""
        key = f"{name}_{self._index}"
        return self._match.group(key) if key in self._names else None

    @property
    def index(self) -> int:
        return self._index

    @property
    def text(self) -> str:
        """The whole lead ("I don't really like ")."""
        return self._match.string[self._match.start() : self._end]

    def end(self) -> int:
        """Where the lead ends and its object starts."""
        return self._end
