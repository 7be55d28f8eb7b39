"""The questions of one conversation, by category, each checked against every turn.

`detail`: an ask of the episode, with a distinctive word or two of the turn; `paraphrase`:
the same in other words (no content word of the turn); `temporal`: when the episode happened
(the session's day, or the day its `{when}` names); `who`: which of the two did it;
`multi-hop`: which of two episodes came first, or how many days apart they were.
"""

from __future__ import annotations

import random
import re
from collections.abc import Iterator
from typing import Any

from bench.threads import checks
from bench.threads.model import Ask, slots_of
from bench.threads.plan import Detail
from bench.threads.writer import Thread

QUOTAS = {"paraphrase": 14, "temporal": 10, "who": 7, "detail": 26}
MULTI_HOP = 8
MIN_DAYS_APART = 3  # "which came first" stays clear of "the weekend of …" and "around …"
WHEN_ASKS = ("When did {name} {do}?", "On what day did {name} {do}?")
WHO_ASKS = ("Who {did}?", "Which of the two {did}?", "Which of them {did}?")

Question = dict[str, Any]
THIRD_PERSON = (
    (re.compile(r"\bmy\b"), "their"),
    (re.compile(r"\bI'm\b"), "they're"),
    (re.compile(r"\bI\b"), "they"),
)


def third_person(value: str) -> str:
    """A value as a question says it: "my cousin's wedding" → "their cousin's wedding"."""
    for pattern, replacement in THIRD_PERSON:
        value = pattern.sub(replacement, value)
    return value


def spoken_of(d: Detail) -> dict[str, str]:
    """The values of a detail as a question about its owner names them."""
    return {slot: third_person(value) for slot, value in d.values.items()}


class Asker:
    """Writes a conversation's questions and keeps only those its turns answer unambiguously."""

    def __init__(self, rng: random.Random, thread: Thread) -> None:
        self.rng = rng
        self.thread = thread
        self.names = {n.lower() for n in thread.names}
        texts = {t["id"]: t["text"] for s in thread.sessions for t in s}
        self.text = texts
        self.said = {  # (turn id, text) of each person, and of each person's own statements
            owner: [(tid, texts[tid]) for tid, (who, _) in thread.roles.items() if who == owner]
            for owner in (0, 1)
        }
        self.stated = {
            owner: [
                (tid, texts[tid])
                for tid, (who, role) in thread.roles.items()
                if who == owner and not role.startswith("echo")
            ]
            for owner in (0, 1)
        }

    def question(self, d: Detail, text: str, answer: str, category: str, evidence: list[str]) -> Question:
        q: Question = {
            "conversation": self.thread.cid,
            "question": text[0].upper() + text[1:],
            "answer": answer,
            "category": category,
            "evidence": evidence,
        }
        if d.restate_turns and category != "multi-hop":
            q["alternatives"] = {d.turn: list(d.restate_turns)}
        return q

    def keys(self, d: Detail, template: str) -> list[str]:
        """The drawn values a template names (the paraphrased ones by their plain value)."""
        return [d.values[s.removesuffix("_p")] for s in slots_of(template) if s.removesuffix("_p") in d.slots]

    def pinned(self, d: Detail, keys: list[str]) -> bool:
        """Whether no other statement of the owner says all of `keys`."""
        return not checks.said_elsewhere(self.stated[d.owner], keys, {d.turn, *d.restate_turns})

    def from_ask(self, d: Detail, ask: Ask, category: str) -> Question | None:
        answer = d.values[ask.answer_slot]
        allowed = {d.turn, *d.restate_turns}
        if not checks.contains(d.text, answer) or checks.said_elsewhere(
            self.said[d.owner], [answer], allowed
        ):
            return None
        if not self.pinned(d, self.keys(d, ask.text)):
            return None
        text = ask.text.format(**spoken_of(d), name=self.thread.names[d.owner])
        said = [self.text[t] for t in allowed]
        if category == "paraphrase" and checks.shares_word(text, said, self.names):
            return None
        return self.question(d, text, answer, category, [d.turn])

    def temporal(self, d: Detail) -> Question | None:
        if d.restate_turns or not self.pinned(d, self.keys(d, d.episode.do)):
            return None
        do = d.episode.do.format(**spoken_of(d))
        text = self.rng.choice(WHEN_ASKS).format(name=self.thread.names[d.owner], do=do)
        return self.question(d, text, d.date, "temporal", [d.turn])

    def who(self, d: Detail) -> Question | None:
        keys = self.keys(d, d.episode.did)
        if not keys or checks.said_elsewhere(self.stated[1 - d.owner], keys, set()):
            return None
        text = self.rng.choice(WHO_ASKS).format(did=d.episode.did.format(**spoken_of(d)))
        return self.question(d, text, self.thread.names[d.owner], "who", [d.turn])

    def single(self, d: Detail, category: str) -> Question | None:
        if category == "temporal":
            return self.temporal(d)
        if category == "who":
            return self.who(d)
        asks = list(d.episode.paraphrases if category == "paraphrase" else d.episode.asks)
        self.rng.shuffle(asks)
        return next((q for ask in asks if (q := self.from_ask(d, ask, category))), None)

    def multi_hop(self, a: Detail, b: Detail) -> Question | None:
        """Which of two episodes of one person came first, or how many days apart they were."""
        assert a.day is not None and b.day is not None
        if a.restate_turns or b.restate_turns or abs((a.day - b.day).days) < MIN_DAYS_APART:
            return None
        if not (self.pinned(a, self.keys(a, a.episode.do)) and self.pinned(b, self.keys(b, b.episode.do))):
            return None
        name = self.thread.names[a.owner]
        first, then = (a, b) if a.day < b.day else (b, a)
        if first.exact and then.exact and self.rng.random() < 0.5:
            days = abs((a.day - b.day).days)
            did, do = first.episode.did.format(**spoken_of(first)), then.episode.do.format(**spoken_of(then))
            text = f"How many days after {name} {did} did {name} {do}?"
            answer = f"{days} days"
        else:
            x, y = (a, b) if self.rng.random() < 0.5 else (b, a)
            do_x, do_y = x.episode.do.format(**spoken_of(x)), y.episode.do.format(**spoken_of(y))
            text = f"Which did {name} do first: {do_x}, or {do_y}?"
            answer = first.episode.do.format(**spoken_of(first))
        return self.question(a, text, answer, "multi-hop", sorted([a.turn, b.turn]))


def pairs(rng: random.Random, details: list[Detail]) -> Iterator[tuple[Detail, Detail]]:
    """Random pairs of details of one person, in different sessions."""
    for _ in range(200):
        a, b = rng.sample(details, 2)
        if a.owner == b.owner and a.session != b.session:
            yield a, b


def questions_of(rng: random.Random, thread: Thread) -> list[Question]:
    asker = Asker(rng, thread)
    details = list(thread.details)
    rng.shuffle(details)
    used: set[str] = set()
    out: list[Question] = []
    for category, quota in QUOTAS.items():
        made = 0
        for d in details:
            if made == quota:
                break
            if d.uid in used:
                continue
            q = asker.single(d, category)
            if q is not None:
                used.add(d.uid)
                out.append(q)
                made += 1
    hops: set[tuple[str, str]] = set()
    for a, b in pairs(rng, details):
        if len(hops) == MULTI_HOP:
            break
        q = asker.multi_hop(a, b)
        if q is not None and tuple(q["evidence"]) not in hops:
            hops.add(tuple(q["evidence"]))
            out.append(q)
    out.sort(key=lambda q: (q["evidence"][0], q["category"]))
    for i, q in enumerate(out, start=1):
        q["id"] = f"{thread.cid}-q{i:03d}"
    return [{"id": q.pop("id"), **q} for q in out]
