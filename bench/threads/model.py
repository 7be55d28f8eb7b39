"""The shape of a theme: what a person keeps coming back to, the episodes they tell about it,
and the values those episodes are filled with.

Templates are `str.format` strings. In an episode, `{slot}` is a value drawn for that turn
from the theme's `pools` (never twice for one person), `{slot_p}` the same value in other
words (for paraphrased questions), `{when}` an optional relative day ("yesterday"), and a
`fixed` slot (a dog's name, a band's name) one value per person, the same in every turn.
Questions add `{name}`, the person asked about.
"""

from __future__ import annotations

import itertools
import string
from dataclasses import dataclass, field

Value = tuple[str, str]  # (as said, the same in other words or "")
WHEN = "when"


def values(block: str) -> tuple[Value, ...]:
    """One value a line, `text | paraphrase` where it has one."""
    out = []
    for line in block.strip().splitlines():
        text, _, para = line.partition("|")
        out.append((text.strip(), para.strip()))
    return tuple(out)


def combos(template: str, para: str = "", **parts: tuple[Value, ...]) -> tuple[Value, ...]:
    """Every combination of `parts` in `template` ("{kind} at {town}"): values that share their
    words with other values (a person's beach in Whitby, their castle in Whitby), and in other
    words through `para` (the same template by default) where every part has a paraphrase."""
    names = list(parts)
    out = []
    for choice in itertools.product(*(parts[n] for n in names)):
        texts = {n: c[0] for n, c in zip(names, choice, strict=True)}
        paras = {n: c[1] for n, c in zip(names, choice, strict=True)}
        out.append(
            (template.format(**texts), (para or template).format(**paras) if all(paras.values()) else "")
        )
    return tuple(out)


def slots_of(template: str) -> set[str]:
    """The placeholders of a template."""
    return {name for _, name, _, _ in string.Formatter().parse(template) if name}


@dataclass(frozen=True, slots=True)
class Ask:
    """A question template and the slot that answers it (`"{price}"`)."""

    text: str
    answer: str

    @property
    def answer_slot(self) -> str:
        return self.answer.strip("{}")


@dataclass(frozen=True, slots=True)
class Episode:
    """One kind of thing a person tells about a theme, said in several ways.

    Every phrasing of `says` holds every slot of the episode (`{when}` is optional), so a
    later restatement states the same facts. `do` / `did` name the episode in questions
    ("When did {name} {do}?", "Who {did}?"). `asks` reuse words of the turn, `paraphrases`
    none. `echoes` are the other person's replies: they name a value and answer nothing.
    `mentions` are the owner's own turns on the same kind of thing with no value in them
    ("another vet trip for {dog}"): the many alike turns around each detail.
    """

    says: tuple[str, ...]
    do: str
    did: str
    asks: tuple[Ask, ...]
    paraphrases: tuple[Ask, ...] = ()
    echoes: tuple[str, ...] = ()
    mentions: tuple[str, ...] = ()

    def slots(self, fixed: set[str]) -> set[str]:
        """The drawn slots of the episode (not `{when}`, not the fixed ones)."""
        return slots_of(self.says[0]) - {WHEN} - fixed


@dataclass(frozen=True)
class Theme:
    """A life theme: its episodes and pools, and the talk around it."""

    name: str
    pools: dict[str, tuple[Value, ...]]
    episodes: tuple[Episode, ...]
    prompts: tuple[str, ...]  # the other person asks about it
    replies: tuple[str, ...]  # the other person's on-topic replies, no value
    asides: tuple[str, ...]  # the owner on the theme, no value
    fixed: dict[str, tuple[str, ...]] = field(default_factory=dict)


def problems(theme: Theme) -> list[str]:
    """What is wrong with a theme's templates (empty when nothing is)."""
    out: list[str] = []
    fixed = set(theme.fixed)
    known = set(theme.pools) | fixed
    talk = (*theme.prompts, *theme.replies, *theme.asides)
    out += [f"{theme.name}: {t!r} uses a drawn slot" for t in talk if slots_of(t) - fixed]
    for i, ep in enumerate(theme.episodes):
        where = f"{theme.name} episode {i}"
        slots = ep.slots(fixed)
        out += [f"{where}: mention {t!r} uses a drawn slot" for t in ep.mentions if slots_of(t) - fixed]
        if not ep.mentions:
            out.append(f"{where}: no mentions")
        if slots - known:
            out.append(f"{where}: unknown slots {sorted(slots - known)}")
        out += [f"{where}: {s!r} lacks a slot" for s in ep.says if slots_of(s) - {WHEN} - fixed != slots]
        for template in (ep.do, ep.did, *ep.echoes, *(a.text for a in ep.asks)):
            if slots_of(template) - slots - fixed - {"name"}:
                out.append(f"{where}: {template!r} uses a slot the episode does not say")
        for ask in (*ep.asks, *ep.paraphrases):
            if ask.answer_slot not in slots or ask.answer != "{" + ask.answer_slot + "}":
                out.append(f"{where}: answer {ask.answer!r} is not one drawn slot")
        for ask in ep.paraphrases:
            plain = {s for s in slots_of(ask.text) if not s.endswith("_p")} - {"name"}
            paraphrased = {s.removesuffix("_p") for s in slots_of(ask.text) if s.endswith("_p")}
            if plain or not paraphrased <= slots:
                out.append(f"{where}: {ask.text!r} may only use paraphrased slots")
            out += [
                f"{where}: pool {s} lacks paraphrases"
                for s in paraphrased
                if not all(p for _, p in theme.pools[s])
            ]
    return out
