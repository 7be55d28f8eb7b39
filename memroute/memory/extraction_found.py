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
    __slots__ = ("_end", "_groups", "_match")

    def __init__(self, match: re.Match[str], groups: Mapping[str, int], end: int) -> None:
        """The lead of `match` that ends at `end`, whose groups (by their names without the
        lead's index) have the numbers `groups` in the match."""
        self._match = match
        self._groups = groups
        self._end = end

    def group(self, name: str) -> str:
        """The text of the lead's group `name` (a group the lead always fills)."""
        return self._match.group(self._groups[name]) or ""

    def get(self, name: str) -> str | None:
        """The text of an optional group, None when it did not take part (or does not exist)."""
        number = self._groups.get(name)
        return None if number is None else self._match.group(number)

    @property
    def text(self) -> str:
        """The whole lead ("I don't really like ")."""
        return self._match.string[self._match.start() : self._end]

    def end(self) -> int:
        """Where the lead ends and its object starts."""
        return self._end
