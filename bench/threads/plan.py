"""Who talks about what: each person's themes, and every detail they will tell, with its
values and its session, before a word is written."""

from __future__ import annotations

import datetime as dt
import random
from collections import Counter
from dataclasses import dataclass, field

from bench.threads.model import Episode, Theme
from bench.threads.themes import THEMES

THEMES_PER_PERSON = (3, 5)
DETAILS_PER_PERSON = (48, 62)
DETAILS_PER_THEME = (10, 30)
RESTATE_RATE = 0.08
FAVOURITES = (2, 3)  # the episodes of a theme a person tells about over and over


@dataclass
class Detail:
    """One turn of a person about one of their themes, and what the writer learns of it."""

    uid: str
    owner: int
    theme: Theme
    episode: Episode
    values: dict[str, str]  # drawn slots, their paraphrases (`slot_p`), the person's fixed slots
    session: int
    restate_session: int | None = None
    turn: str = ""
    text: str = ""
    date: str = ""  # the answer to "when": the session's day, or the day `{when}` names
    day: dt.date | None = None
    exact: bool = True  # `date` is one day, not "the weekend of …"
    restate_turns: list[str] = field(default_factory=list)

    @property
    def slots(self) -> set[str]:
        return self.episode.slots(set(self.theme.fixed))


@dataclass
class Person:
    themes: list[Theme]
    fixed: dict[str, dict[str, str]]  # theme name → fixed slot → value


def choose_themes(rng: random.Random) -> tuple[list[Theme], list[Theme]]:
    """The themes of the two people: 3–5 each, none shared."""
    counts = [rng.randint(*THEMES_PER_PERSON) for _ in range(2)]
    drawn = rng.sample(THEMES, k=sum(counts))
    return drawn[: counts[0]], drawn[counts[0] :]


def theme_counts(rng: random.Random, k: int) -> list[int]:
    """How many turns each of k themes gets: a person's budget split unevenly, 10–30 each."""
    budget = rng.randint(*DETAILS_PER_PERSON)
    weights = [rng.uniform(0.6, 1.4) for _ in range(k)]
    low, high = DETAILS_PER_THEME
    return [min(high, max(low, round(budget * w / sum(weights)))) for w in weights]


def draw_values(rng: random.Random, theme: Theme, episode: Episode, taken: set[str]) -> dict[str, str] | None:
    """Fresh values for each slot of the episode (none said before by this person), or None."""
    out: dict[str, str] = {}
    for slot in sorted(episode.slots(set(theme.fixed))):
        free = [v for v in theme.pools[slot] if v[0] not in taken]
        if not free:
            return None
        text, para = rng.choice(free)
        out[slot], out[f"{slot}_p"] = text, para
    taken.update(v for k, v in out.items() if not k.endswith("_p"))
    return out


def theme_details(
    rng: random.Random,
    owner: int,
    theme: Theme,
    count: int,
    fixed: dict[str, str],
    n_sessions: int,
    taken: set[str],
) -> list[Detail]:
    """Up to `count` details of one theme, spread over the sessions: mostly the person's own
    favourite episodes of it (told many times over), the least told first."""
    told: Counter[int] = Counter()
    out: list[Detail] = []
    favourites = set(
        rng.sample(range(len(theme.episodes)), k=min(len(theme.episodes), rng.randint(*FAVOURITES)))
    )
    sessions = sorted(rng.choices(range(n_sessions), k=count))
    for session in sessions:
        order = sorted(range(len(theme.episodes)), key=lambda i: (i not in favourites, told[i], rng.random()))
        for i in order:
            drawn = draw_values(rng, theme, theme.episodes[i], taken)
            if drawn is not None:
                told[i] += 1
                uid = f"{owner}/{theme.name}/{len(out)}"
                out.append(Detail(uid, owner, theme, theme.episodes[i], {**drawn, **fixed}, session))
                break
    return out


def plan(rng: random.Random, n_sessions: int) -> tuple[list[Person], list[Detail]]:
    """The two people and every detail they tell, in no particular order."""
    people: list[Person] = []
    details: list[Detail] = []
    for owner, themes in enumerate(choose_themes(rng)):
        fixed = {t.name: {slot: rng.choice(pool) for slot, pool in t.fixed.items()} for t in themes}
        people.append(Person(themes, fixed))
        taken = set().union(*(set(f.values()) for f in fixed.values()))
        for theme, count in zip(themes, theme_counts(rng, len(themes)), strict=True):
            details += theme_details(rng, owner, theme, count, fixed[theme.name], n_sessions, taken)
    for d in details:
        if d.session < n_sessions - 1 and rng.random() < RESTATE_RATE:
            d.restate_session = rng.randint(d.session + 1, n_sessions - 1)
    return people, details
