"""The turns of one conversation, session by session: each detail as its owner says it, the
other person's reply (often naming the detail, often by the owner's name), the owner's turns
on the same kind of thing with no detail (`mentions`), asides on the themes, small talk."""

from __future__ import annotations

import datetime as dt
import random
from collections.abc import Callable
from dataclasses import dataclass, field

from bench.conversations import dates, smalltalk
from bench.threads import talk
from bench.threads.model import WHEN, Theme
from bench.threads.plan import Detail, Person

TYPO_RATE = 0.12
ASIDE_RATE = 0.6  # a detail turn that goes on with an aside on its theme
MENTION_RATE = 0.7  # a detail's session also has a turn of its owner on the same theme, with no value
CONVERSATION_TURNS = (380, 520)  # small talk fills the sessions up to about this many turns
RESTATE_OPENERS = (
    "like I said, ",
    "did I tell you? ",
    "still can't get over it: ",
    "ok I know I said this already but ",
    "not sure if I mentioned, ",
)

Beat = list[tuple[int, str, str]]  # (speaker, text, role); role "detail:<uid>", "restate:<uid>", …


@dataclass
class Thread:
    """One conversation being written: the people, their details, and every turn so far."""

    cid: str
    names: tuple[str, str]
    days: list[dt.date]
    people: list[Person]
    details: list[Detail]
    sessions: list[list[dict[str, str]]] = field(default_factory=list)
    roles: dict[str, tuple[int, str]] = field(default_factory=dict)  # turn id → (speaker, role)


class Writer:
    """Writes the sessions of one thread in order, noting which turn states which detail."""

    def __init__(self, rng: random.Random, thread: Thread) -> None:
        self.rng = rng
        self.thread = thread
        self.seen: set[str] = set()
        self.asides: set[str] = set()  # said in this session
        self.per_session = self.rng.randint(*CONVERSATION_TURNS) / len(thread.days)

    def fill(self, template: str, values: dict[str, str]) -> str:
        text = template.format(**values)
        return text[0].upper() + text[1:] if self.rng.random() < 0.3 else text

    def unseen(self, make: Callable[[], str], protected: set[str]) -> str:
        """A text of `make` not said before in this conversation, maybe with a typo."""
        text = make()
        for _ in range(10):
            if text.lower() not in self.seen:
                break
            text = make()
        self.seen.add(text.lower())
        if self.rng.random() < TYPO_RATE:
            text = smalltalk.typo(self.rng, text, protected)
        return text

    def aside(self, theme: Theme, owner: int) -> str:
        """An aside on the theme, not one said earlier in the session."""
        fixed = self.thread.people[owner].fixed[theme.name]
        fresh = [a for a in theme.asides if a not in self.asides] or list(theme.asides)
        chosen = self.rng.choice(fresh)
        self.asides.add(chosen)
        return chosen.format(**fixed)

    def detail_text(self, d: Detail, day: dt.date) -> str:
        """The detail as its owner types it; sets the day it happened."""
        template = self.rng.choice(d.episode.says)
        values = dict(d.values)
        if "{" + WHEN + "}" in template:
            phrase, d.date, d.day = dates.past(self.rng, day)
            d.exact = d.date == d.day.isoformat()
            values[WHEN] = phrase
        else:
            d.date, d.day, d.exact = day.isoformat(), day, True
        protected = {w.lower() for k, v in d.values.items() if not k.endswith("_p") for w in v.split()}

        def make() -> str:
            aside = self.aside(d.theme, d.owner) if self.rng.random() < ASIDE_RATE else None
            return talk.wrap(self.rng, smalltalk.dress(self.rng, template.format(**values)), aside)

        return self.unseen(make, protected)

    def detail_beat(self, d: Detail, day: dt.date) -> Beat:
        other = 1 - d.owner
        names = self.thread.names
        beat: Beat = []
        if self.rng.random() < 0.2:
            beat.append((other, self.fill(self.rng.choice(d.theme.prompts), d.values), "prompt"))
        d.text = self.detail_text(d, day)
        beat.append((d.owner, d.text, f"detail:{d.uid}"))
        roll = self.rng.random()
        if roll < 0.5 and d.episode.echoes:
            echo = self.fill(self.rng.choice(d.episode.echoes), d.values)
            beat.append((other, talk.cheer(self.rng, echo, names[d.owner]), f"echo:{d.uid}"))
        elif roll < 0.8:
            reply = self.fill(self.rng.choice(d.theme.replies), d.values)
            beat.append((other, talk.cheer(self.rng, reply, names[d.owner]), "reply"))
        elif roll < 0.95:
            beat.append((other, self.rng.choice(smalltalk.REACTIONS), "reaction"))
        if self.rng.random() < 0.25:
            follow = self.aside(d.theme, d.owner) if self.rng.random() < 0.6 else None
            follow = follow or talk.address(self.rng, self.rng.choice(smalltalk.FOLLOW_UPS), names[other])
            beat.append((d.owner, follow, "aside"))
        return beat

    def restate_beat(self, d: Detail) -> Beat:
        """The owner says the same detail again, in other words of the same episode."""
        plain = [t for t in d.episode.says if "{" + WHEN + "}" not in t] or list(d.episode.says)

        def make() -> str:
            return self.rng.choice(RESTATE_OPENERS) + self.rng.choice(plain).format(**d.values)

        beat: Beat = [(d.owner, self.unseen(make, set()), f"restate:{d.uid}")]
        if self.rng.random() < 0.6:
            reply = self.fill(self.rng.choice(d.theme.replies), d.values)
            beat.append((1 - d.owner, talk.address(self.rng, reply, self.thread.names[d.owner]), "reply"))
        return beat

    def mention_beat(self, d: Detail) -> Beat:
        """The owner on the kind of thing one of their details of this theme is, with no value."""
        like = self.rng.choice([x for x in self.thread.details if x.owner == d.owner and x.theme is d.theme])
        fixed = self.thread.people[d.owner].fixed[d.theme.name]
        fresh = [m for m in like.episode.mentions if m not in self.asides] or list(like.episode.mentions)
        mention = self.rng.choice(fresh)
        self.asides.add(mention)
        beat: Beat = [(d.owner, talk.wrap(self.rng, mention.format(**fixed), None), "mention")]
        if self.rng.random() < 0.35:
            reply = self.rng.choice(d.theme.replies).format(**fixed)
            beat.append((1 - d.owner, talk.cheer(self.rng, reply, self.thread.names[d.owner]), "reply"))
        return beat

    def chatter_beat(self, owner: int) -> Beat:
        """Talk on one of a person's themes that holds no detail."""
        theme = self.rng.choice(self.thread.people[owner].themes)
        fixed = self.thread.people[owner].fixed[theme.name]
        ask = (1 - owner, self.rng.choice(theme.prompts).format(**fixed), "prompt")
        answer = (owner, self.aside(theme, owner), "aside")
        reply_text = talk.address(
            self.rng, self.rng.choice(theme.replies).format(**fixed), self.thread.names[owner]
        )
        reply = (1 - owner, reply_text, "reply")
        return [ask, answer] if self.rng.random() < 0.5 else [answer, reply]

    def small_talk(self, first: int) -> Beat:
        return smalltalk.beat(self.rng, first, TYPO_RATE)

    def session(self, si: int) -> list[dict[str, str]]:
        day = self.thread.days[si]
        self.asides.clear()
        today = [d for d in self.thread.details if d.session == si]
        beats = [self.detail_beat(d, day) for d in today]
        beats += [self.mention_beat(d) for d in today if self.rng.random() < MENTION_RATE]
        beats += [self.restate_beat(d) for d in self.thread.details if d.restate_session == si]
        beats += [self.chatter_beat(owner) for owner in (0, 1) if self.rng.random() < 0.5]
        self.rng.shuffle(beats)
        target = round(self.per_session) + self.rng.randint(-4, 4)
        while sum(len(b) for b in beats) < target - 4:
            beats.insert(self.rng.randint(0, len(beats)), self.small_talk(self.rng.randrange(2)))
        names = self.thread.names
        opener, closer = self.rng.randrange(2), self.rng.randrange(2)
        hello = [
            (opener, smalltalk.fill(self.rng, smalltalk.GREETINGS, names[1 - opener]), "greeting"),
            (1 - opener, smalltalk.fill(self.rng, smalltalk.GREETING_REPLIES, names[opener]), "greeting"),
        ]
        bye = [
            (closer, smalltalk.fill(self.rng, smalltalk.CLOSINGS, names[1 - closer]), "closing"),
            (1 - closer, smalltalk.fill(self.rng, smalltalk.CLOSING_REPLIES, names[closer]), "closing"),
        ]
        return self.number(si, hello + [t for b in beats for t in b] + bye)

    def number(self, si: int, turns: Beat) -> list[dict[str, str]]:
        """Turn ids; each detail learns the ids of the turns that state it."""
        by_uid = {d.uid: d for d in self.thread.details}
        out = []
        for ti, (speaker, text, role) in enumerate(turns, start=1):
            tid = f"{self.thread.cid}-s{si + 1:02d}-t{ti:03d}"
            action, _, uid = role.partition(":")
            if action == "detail":
                by_uid[uid].turn = tid
            elif action == "restate":
                by_uid[uid].restate_turns.append(tid)
            self.thread.roles[tid] = (speaker, role)
            out.append({"id": tid, "speaker": self.thread.names[speaker], "text": text})
        return out


def write(rng: random.Random, thread: Thread) -> None:
    writer = Writer(rng, thread)
    thread.sessions = [writer.session(si) for si in range(len(thread.days))]
