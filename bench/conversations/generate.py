"""Writes the conversation-recall set: multi-session chats between two people with facts
woven into everyday talk, and questions about them with the turns that answer them.

    python -m bench.conversations.generate            # seed 15, 10 conversations
    python -m bench.conversations.generate --seed 7 --conversations 12 --out /tmp/set

Deterministic for a seed. Each person states facts of many kinds (`kinds.py`) in one of
several phrasings, changes some of them in a later session (the question about it then has
the later turn as evidence and the earlier one as `superseded`), mentions others again in
passing (`alternatives`: another turn that answers the same question), and the other person
remarks on them (turns that name the value but answer nothing). Around that: greetings,
small talk, reactions, typos and the odd long message.
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import random
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from bench.conversations import HERE, dates, smalltalk
from bench.conversations.kinds import BY_NAME, CORE, KINDS, Ask, Kind, Values
from bench.conversations.pools import FIRST_NAMES

SEED = 15
CONVERSATIONS = 10
TYPO_RATE = 0.12


@dataclass
class Fact:
    """One kind of fact of one person and where it is said."""

    uid: str
    owner: int
    kind: Kind
    values: Values
    session: int
    order: int  # facts a fact builds on come first
    change_session: int | None = None
    new_values: Values | None = None
    restate_sessions: list[int] = field(default_factory=list)
    mention_sessions: list[int] = field(default_factory=list)
    long: bool = False
    turn: str = ""
    change_turn: str = ""
    restate_turns: list[str] = field(default_factory=list)


@dataclass
class Conversation:
    cid: str
    names: tuple[str, str]
    dates: list[dt.date]
    facts: list[Fact]
    sessions: list[list[dict[str, str]]] = field(default_factory=list)


# -- who knows what ------------------------------------------------------------------------


def choose_kinds(rng: random.Random, techy: bool) -> list[Kind]:
    """The kinds of fact one person states: the core ones plus a random dozen."""
    eligible = [k for k in KINDS if k.techy in (None, techy) and k.name not in CORE and k.name != "past"]
    chosen = {k.name for k in rng.sample(eligible, k=min(len(eligible), rng.randint(9, 12)))}
    chosen.update(CORE)
    for name in list(chosen):  # a kind that builds on another brings it along
        needs = BY_NAME[name].needs
        if needs:
            chosen.add(needs)
    ordered = [k for k in KINDS if k.name in chosen]
    return ordered + [BY_NAME["past"]] * rng.randint(2, 3)


def plan_facts(rng: random.Random, n_sessions: int, taken: set[str]) -> list[Fact]:
    facts: list[Fact] = []
    for owner in (0, 1):
        techy = rng.random() < 0.5
        profile: dict[str, Values] = {}
        placed: dict[str, int] = {}
        for i, kind in enumerate(choose_kinds(rng, techy)):
            values = kind.draw(rng, profile, taken)
            if values is None:
                continue
            uid = f"{owner}/{kind.name}#{i}"
            profile.setdefault(kind.name, values)
            first = placed.get(kind.needs, 0)
            session = rng.randint(first, max(first, n_sessions - 3))
            placed.setdefault(kind.name, session)
            facts.append(Fact(uid, owner, kind, values, session, order=1 if kind.needs else 0))
    plan_changes(rng, facts, n_sessions)
    plan_echoes(rng, facts, n_sessions)
    rng.choice(facts).long = True  # one long message per conversation
    return facts


def plan_changes(rng: random.Random, facts: list[Fact], n_sessions: int) -> None:
    """Two or three facts of each person are changed at least two sessions later."""
    for owner in (0, 1):
        changeable = [f for f in facts if f.owner == owner and f.kind.change and f.session <= n_sessions - 3]
        for f in rng.sample(changeable, k=min(len(changeable), rng.randint(2, 3))):
            f.change_session = rng.randint(f.session + 2, n_sessions - 1)


def plan_echoes(rng: random.Random, facts: list[Fact], n_sessions: int) -> None:
    """Restatements by the owner (facts that never change) and remarks by the other person."""
    for f in facts:
        end = f.change_session if f.change_session is not None else n_sessions
        if f.kind.restate and f.change_session is None and f.session + 1 < n_sessions and rng.random() < 0.35:
            f.restate_sessions.append(rng.randint(f.session + 1, n_sessions - 1))
        if f.kind.mention and f.session + 1 < end and rng.random() < 0.6:
            f.mention_sessions.append(rng.randint(f.session + 1, end - 1))


# -- the turns -------------------------------------------------------------------------------


class Writer:
    """Builds the turns of one conversation, session by session."""

    def __init__(self, rng: random.Random, conv: Conversation, taken: set[str]) -> None:
        self.rng = rng
        self.conv = conv
        self.taken = taken
        self.seen: set[str] = set()
        self.dependent = {f"state:{f.uid}" for f in conv.facts if f.kind.needs}

    def say(self, template: str, values: Values) -> str:
        return template.format(**values)

    def fact_text(self, f: Fact, templates: tuple[str, ...], values: Values) -> str:
        """A statement not said before in this conversation (re-drawn when it was)."""
        for _ in range(20):
            text = smalltalk.dress(self.rng, self.say(self.rng.choice(templates), values))
            if text.lower() not in self.seen:
                break
        self.seen.add(text.lower())
        protected = {w.lower() for v in values.values() for w in v.split()}
        if self.rng.random() < TYPO_RATE:
            text = smalltalk.typo(self.rng, text, protected)
        return text

    def timed(self, f: Fact, day: dt.date, *, change: bool) -> None:
        """Fill {when} and {date} of a dated fact, from the day it is said."""
        month_only = f.kind.name == "school"
        if change:
            assert f.new_values is not None
            old_day = dt.date.fromisoformat(f.values["day"])
            when, answer, target = dates.later(self.rng, old_day)
            f.new_values.update(when=when, date=answer, day=target.isoformat())
            return
        if f.kind.timing == "future":
            when, answer, target = dates.future(self.rng, day, month_only=month_only)
        else:
            when, answer, target = dates.past(self.rng, day)
        f.values.update(when=when, date=answer, day=target.isoformat())

    def fact_beat(self, f: Fact, day: dt.date) -> list[tuple[int, str, str]]:
        """(speaker, text, what it is) turns: the statement, a reaction, maybe a follow-up."""
        if f.kind.timing:
            self.timed(f, day, change=False)
        text = self.fact_text(f, f.kind.state, f.values)
        if f.long:
            text = smalltalk.long_turn(self.rng, text)
        return self.exchange(f.owner, text, f"state:{f.uid}")

    def change_beat(self, f: Fact, day: dt.date) -> list[tuple[int, str, str]]:
        change = f.kind.change
        assert change is not None
        f.new_values = change.draw(self.rng, f.values, self.taken)
        if f.kind.timing:
            self.timed(f, day, change=True)
        merged = {**f.values, **{f"old_{k}": v for k, v in f.values.items()}, **f.new_values}
        text = self.fact_text(f, change.state, merged)
        return self.exchange(f.owner, text, f"change:{f.uid}")

    def exchange(self, owner: int, text: str, what: str) -> list[tuple[int, str, str]]:
        other = 1 - owner
        turns = [(owner, text, what)]
        if self.rng.random() < 0.85:
            turns.append((other, self.rng.choice(smalltalk.REACTIONS), "reaction"))
            if self.rng.random() < 0.35:
                turns.append((owner, self.rng.choice(smalltalk.FOLLOW_UPS), "follow-up"))
        return turns

    def echo_beat(self, f: Fact, restate: bool) -> list[tuple[int, str, str]]:
        if restate:
            text = self.fact_text(f, f.kind.restate, f.values)
            return [(f.owner, text, f"restate:{f.uid}")]
        text = self.say(self.rng.choice(f.kind.mention), f.values)
        if self.rng.random() < 0.5:
            text = text[0].upper() + text[1:]
        return [(1 - f.owner, text, "mention"), (f.owner, self.rng.choice(smalltalk.FOLLOW_UPS), "follow-up")]

    def small_talk(self, first: int) -> list[tuple[int, str, str]]:
        return smalltalk.beat(self.rng, first, TYPO_RATE)

    def session(self, si: int) -> list[dict[str, str]]:
        day = self.conv.dates[si]
        facts = sorted(self.conv.facts, key=lambda f: f.order)
        beats: list[list[tuple[int, str, str]]] = []
        for f in facts:
            if f.session == si:
                beats.append(self.fact_beat(f, day))
            if f.change_session == si:
                beats.append(self.change_beat(f, day))
            beats.extend(self.echo_beat(f, True) for s in f.restate_sessions if s == si)
            beats.extend(self.echo_beat(f, False) for s in f.mention_sessions if s == si)
        self.rng.shuffle(beats)
        beats.sort(key=lambda b: any(w in self.dependent for _, _, w in b))  # after what they build on
        target = self.rng.randint(18, 26)
        while sum(len(b) for b in beats) < target - 4:
            beats.insert(self.rng.randint(0, len(beats)), self.small_talk(self.rng.randrange(2)))
        opener = self.rng.randrange(2)
        names = self.conv.names
        hello = [
            (opener, smalltalk.fill(self.rng, smalltalk.GREETINGS, names[1 - opener]), "greeting"),
            (1 - opener, smalltalk.fill(self.rng, smalltalk.GREETING_REPLIES, names[opener]), "greeting"),
        ]
        closer = self.rng.randrange(2)
        bye = [
            (closer, smalltalk.fill(self.rng, smalltalk.CLOSINGS, names[1 - closer]), "closing"),
            (1 - closer, smalltalk.fill(self.rng, smalltalk.CLOSING_REPLIES, names[closer]), "closing"),
        ]
        turns = hello + [t for b in beats for t in b] + bye
        return self.number(si, turns)

    def number(self, si: int, turns: list[tuple[int, str, str]]) -> list[dict[str, str]]:
        """Turn ids, and each fact learns the ids of the turns that state it."""
        by_uid = {f.uid: f for f in self.conv.facts}
        out = []
        for ti, (speaker, text, what) in enumerate(turns, start=1):
            tid = f"{self.conv.cid}-s{si + 1:02d}-t{ti:03d}"
            action, _, uid = what.partition(":")
            if uid:
                f = by_uid[uid]
                if action == "state":
                    f.turn = tid
                elif action == "change":
                    f.change_turn = tid
                else:
                    f.restate_turns.append(tid)
            out.append({"id": tid, "speaker": self.conv.names[speaker], "text": text})
        return out


def session_dates(rng: random.Random, n: int) -> list[dt.date]:
    day = dt.date(2025, 1, 6) + dt.timedelta(days=rng.randint(0, 150))
    out = []
    for _ in range(n):
        out.append(day)
        day += dt.timedelta(days=rng.randint(2, 9))
    return out


def build_conversation(seed: int, index: int, names: tuple[str, str]) -> Conversation:
    rng = random.Random(seed * 1000 + index)
    n_sessions = rng.randint(10, 12)
    taken: set[str] = set()
    conv = Conversation(
        f"c{index + 1:02d}", names, session_dates(rng, n_sessions), plan_facts(rng, n_sessions, taken)
    )
    writer = Writer(rng, conv, taken)
    conv.sessions = [writer.session(si) for si in range(n_sessions)]
    return conv


# -- the questions ------------------------------------------------------------------------


def question(conv: Conversation, ask: Ask, values: Values, category: str, **extra: Any) -> dict[str, Any]:
    return {
        "conversation": conv.cid,
        "question": ask.text.format(**values),
        "answer": ask.answer.format(**values),
        "category": category,
        **extra,
    }


def fact_questions(rng: random.Random, conv: Conversation) -> list[dict[str, Any]]:
    out = []
    for f in conv.facts:
        values = {**f.values, "name": conv.names[f.owner]}
        if f.change_turn and f.new_values is not None and f.kind.change is not None:
            now = {**values, **{f"old_{k}": v for k, v in f.values.items()}, **f.new_values}
            ask = rng.choice(f.kind.change.asks)
            out.append(
                question(conv, ask, now, "changed-mind", evidence=[f.change_turn], superseded=[f.turn])
            )
            continue
        ask = rng.choice(f.kind.asks)
        category = "temporal" if "{date}" in ask.answer else "single-hop"
        extra: dict[str, Any] = {"evidence": [f.turn]}
        if f.restate_turns:
            extra["alternatives"] = {f.turn: f.restate_turns}
        out.append(question(conv, ask, values, category, **extra))
    return out


def who_questions(rng: random.Random, conv: Conversation) -> list[dict[str, Any]]:
    candidates = [f for f in conv.facts if f.kind.who and not f.change_turn]
    out = []
    for f in rng.sample(candidates, k=min(len(candidates), rng.randint(3, 5))):
        values = {**f.values, "name": conv.names[f.owner]}
        out.append(question(conv, rng.choice(f.kind.who), values, "who", evidence=[f.turn]))
    return out


def first_fact(conv: Conversation, owner: int, kind: str) -> Fact | None:
    return next((f for f in conv.facts if f.owner == owner and f.kind.name == kind), None)


def multi_hop_questions(conv: Conversation) -> list[dict[str, Any]]:
    """Questions whose answer needs two turns of the same person."""
    out = []
    for owner in (0, 1):
        name = conv.names[owner]
        sib, sib_city = first_fact(conv, owner, "sibling"), first_fact(conv, owner, "sibling_city")
        if sib and sib_city:
            ask = Ask("In which city does {name}'s {sibrel} live?", "{sibcity}")
            values = {**sib.values, "name": name}
            out.append(question(conv, ask, values, "multi-hop", evidence=[sib.turn, sib_city.turn]))
        town, pet = first_fact(conv, owner, "hometown"), first_fact(conv, owner, "pet")
        if town and pet:
            ask = Ask("What is the pet of the person who grew up in {town} called?", "{pet}")
            values = {**town.values, **pet.values, "name": name}
            out.append(question(conv, ask, values, "multi-hop", evidence=[town.turn, pet.turn]))
        job, hobby = first_fact(conv, owner, "job"), first_fact(conv, owner, "hobby")
        if job and hobby and not job.change_turn and not hobby.change_turn:
            ask = Ask("What does the {role} of the two do in their spare time?", "{hobby}")
            values = {**job.values, **hobby.values, "name": name}
            out.append(question(conv, ask, values, "multi-hop", evidence=[job.turn, hobby.turn]))
    return out


def questions_of(seed: int, conv: Conversation) -> list[dict[str, Any]]:
    rng = random.Random(seed * 1000 + 500 + int(conv.cid[1:]))
    qs = fact_questions(rng, conv) + who_questions(rng, conv) + multi_hop_questions(conv)
    for i, q in enumerate(qs, start=1):
        q["id"] = f"{conv.cid}-q{i:03d}"
    return [{"id": q.pop("id"), **q} for q in qs]


# -- output --------------------------------------------------------------------------------


def conversation_record(conv: Conversation) -> dict[str, Any]:
    return {
        "id": conv.cid,
        "speakers": list(conv.names),
        "sessions": [
            {"id": f"{conv.cid}-s{si + 1:02d}", "date": conv.dates[si].isoformat(), "turns": turns}
            for si, turns in enumerate(conv.sessions)
        ],
    }


def name_pairs(seed: int, n: int) -> list[tuple[str, str]]:
    """The two speakers of each of `n` chats: the first names shuffled by `seed`, in pairs."""
    names = list(FIRST_NAMES)
    random.Random(seed).shuffle(names)
    return [(names[(2 * i) % len(names)], names[(2 * i + 1) % len(names)]) for i in range(n)]


def generate(seed: int = SEED, n: int = CONVERSATIONS) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """(conversations, questions), the same for the same seed."""
    convs, qs = [], []
    for i, pair in enumerate(name_pairs(seed, n)):
        conv = build_conversation(seed, i, pair)
        convs.append(conversation_record(conv))
        qs.extend(questions_of(seed, conv))
    return convs, qs


def write_jsonl(path: Path, rows: list[dict[str, Any]]) -> None:
    with path.open("w", encoding="utf-8") as f:
        for row in rows:
            f.write(json.dumps(row, ensure_ascii=False) + "\n")


def command(
    argv: list[str] | None,
    doc: str | None,
    make: Callable[[int, int], tuple[list[dict[str, Any]], list[dict[str, Any]]]],
    seed: int,
    count: int,
    out: Path,
) -> None:
    """A set generator's command line: `--seed`, `--conversations`, `--out`; writes the two
    files and says what it wrote."""
    ap = argparse.ArgumentParser(description=doc.splitlines()[0] if doc else None)
    ap.add_argument("--seed", type=int, default=seed)
    ap.add_argument("--conversations", type=int, default=count)
    ap.add_argument("--out", type=Path, default=out)
    args = ap.parse_args(argv)
    convs, qs = make(args.seed, args.conversations)
    args.out.mkdir(parents=True, exist_ok=True)
    write_jsonl(args.out / "conversations.jsonl", convs)
    write_jsonl(args.out / "questions.jsonl", qs)
    turns = sum(len(s["turns"]) for c in convs for s in c["sessions"])
    kinds = ", ".join(f"{k} {n}" for k, n in sorted(Counter(q["category"] for q in qs).items()))
    print(f"{len(convs)} conversations, {turns} turns, {len(qs)} questions ({kinds}) → {args.out}")


def main(argv: list[str] | None = None) -> None:
    command(argv, __doc__, generate, SEED, CONVERSATIONS, HERE)


if __name__ == "__main__":
    main()
