"""The sentences people wrap a detail in: how they feel about the thing they keep coming back
to, how the other person cheers them on, and the other person's name, as people in a long
chat use it. They hold no detail, so many turns of one theme sound alike around the few
words that tell them apart."""

from __future__ import annotations

import random

MAX_WORDS = 45

REFLECTIONS = (
    "It's been a big part of my life lately.",
    "I keep thinking about it.",
    "Anyway, that's my news.",
    "It's all I talk about these days, sorry.",
    "Some days it's the only thing that keeps me sane.",
    "I'm trying to enjoy it more and worry less.",
    "It reminded me why I started in the first place.",
    "Never a dull moment.",
    "One day at a time.",
    "Still processing it honestly.",
    "It's the little things.",
    "I'll tell you the whole story sometime.",
    "That's life I guess.",
    "Not how I pictured my week going.",
    "Anyway, enough about me.",
)
OPENERS = (
    "Ok so, news.",
    "You'll like this one.",
    "Right, small update.",
    "So this happened.",
    "Quick update.",
    "Busy week here.",
    "Where do I start.",
)
ENCOURAGEMENTS = (
    "Tell me more!",
    "What happened next?",
    "How are you feeling about it?",
    "Keep me posted!",
    "I love how much this means to you.",
    "You always throw yourself into things, I love that.",
    "That's so you.",
    "I want the full story next time.",
)


def words(text: str) -> int:
    return len(text.split())


def wrap(rng: random.Random, detail: str, aside: str | None) -> str:
    """The detail with, maybe, an opener before it and the aside or a reflection after it,
    at most `MAX_WORDS` words in all."""
    before = [rng.choice(OPENERS)] if rng.random() < 0.3 else []
    after = []
    if aside:
        after.append(aside[0].upper() + aside[1:] + ".")
    if rng.random() < 0.6:
        after.append(rng.choice(REFLECTIONS))
    parts = [*before, detail.rstrip(".!") + ("." if after else ""), *after]
    while words(" ".join(parts)) > MAX_WORDS and len(parts) > 1:
        parts.pop(0 if parts[0] in before else -1)
    return " ".join(parts)


ADDRESSED = ("{name}! {text}", "{text}, {name}!", "Aw {name}, {text}", "{name}, {text}", "Oh {name}, {text}")
ADDRESS_RATE = 0.45


def address(rng: random.Random, text: str, name: str) -> str:
    """Sometimes, the text said to `name` by name, as people in a long chat do."""
    if rng.random() >= ADDRESS_RATE:
        return text
    return rng.choice(ADDRESSED).format(name=name, text=text.rstrip("!.?") if text[-1:] in "!." else text)


def cheer(rng: random.Random, reply: str, name: str) -> str:
    """The other person's reply to `name`, sometimes by name, sometimes with a word of
    encouragement after it."""
    reply = address(rng, reply, name)
    if rng.random() < 0.5:
        end = "" if reply[-1:] in "!?." else "."
        return f"{reply}{end} {rng.choice(ENCOURAGEMENTS)}"
    return reply
