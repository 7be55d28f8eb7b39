"""The talk around the facts: greetings, small talk that holds nothing, reactions, closings,
the little words people put before and after a statement, and typos.
"""

from __future__ import annotations

import random
import re

GREETINGS = (
    "hey {other}!",
    "morning {other}",
    "hiya, you around?",
    "hey hey",
    "{other}!! long time",
    "hi! got a sec?",
    "evening {other}, how was your day?",
    "yo",
    "hello stranger",
    "heyy",
    "good morning sunshine",
    "hi {other}, how are things?",
)
GREETING_REPLIES = (
    "hey! yeah, what's up?",
    "morning! just got up",
    "hi hi",
    "hey you, all good here",
    "oh hey, was just thinking about you",
    "here! barely awake",
    "hello hello",
    "hiii",
    "hey, not bad, you?",
    "good thanks, you?",
)
CLOSINGS = (
    "ok gotta run, talk later!",
    "night {other}",
    "speak soon x",
    "right, dinner time. bye!",
    "let's catch up properly this weekend",
    "going to bed, this was nice",
    "laters",
    "ok I need to actually work now haha",
    "bye for now!",
    "talk tomorrow?",
)
CLOSING_REPLIES = (
    "bye!",
    "night night",
    "yes! talk soon",
    "sleep well",
    "later!",
    "see ya",
    "take care x",
    "ok bye",
    "cheers, you too",
)

# Turns that hold no fact about anyone; some are first-person and sound like they might.
SMALL_TALK = (
    "did you see the rain today? unreal",
    "I'm so tired lol",
    "ugh mondays",
    "what are you up to this evening?",
    "honestly same",
    "that's wild",
    "I can't believe it's already Thursday",
    "I need a nap",
    "not much, just chilling",
    "have you eaten yet?",
    "the traffic this morning was a joke",
    "lol no way",
    "I know right",
    "it's so cold today, I'm wearing two jumpers",
    "did you watch the match last night? nvm you don't care about that",
    "I'm thinking about ordering pizza",
    "my wifi keeps dropping, sorry if I vanish",
    "what's the plan for the weekend?",
    "no plans really",
    "I love that for you",
    "omg",
    "that's hilarious",
    "I'm procrastinating so hard right now",
    "do you ever just stare at the wall for ten minutes",
    "honestly I have no idea",
    "hmm maybe",
    "that makes sense",
    "sounds like a lot",
    "fair enough",
    "I'd say go for it",
    "it's been a weird week",
    "the neighbours are drilling again",
    "I had the strangest dream last night",
    "so what's new with you?",
    "same old same old",
    "you're not wrong",
    "it depends I guess",
    "I'm never doing that again haha",
    "the sun finally came out",
    "my coffee went cold while I was on a call",
    "why are emails so exhausting",
    "I spilled soup on my shirt at lunch, classic",
    "ok that's actually really cool",
    "wait really?",
    "tell me everything",
    "oh no",
    "I'm sure it'll be fine",
    "big mood",
    "literally me",
    "I should go to bed earlier",
    "we should get lunch sometime",
    "my back hurts from this chair",
    "it's too hot to think",
    "the shop was out of bread again",
    "I got distracted by a cat video",
    "honestly not sure what I want for dinner",
    "that's the dream",
    "I'm sure you'll nail it",
    "let me know how it goes",
    "I'll believe it when I see it",
    "nothing exciting to report",
    "are you still up?",
    "ha, typical",
    "I think I'm coming down with something",
    "you always say that",
    "I had three meetings that could have been emails",
    "the bus was late again",
    "it's one of those days",
    "I keep forgetting to reply to people",
    "that's such a good idea",
    "honestly I'd do the same",
    "oh I love that song",
    "the printer at work jammed four times",
    "I need a holiday",
    "what did you have for lunch?",
    "just a sandwich, nothing fancy",
    "can you believe the price of eggs",
    "I'm going to be productive tomorrow, promise",
    "I'm watching the clouds instead of working",
    "how was your weekend?",
    "quiet, which was nice",
    "we should do a video call soon",
    "my phone is on 3 percent",
    "it's raining sideways here",
    "tbh I forgot what I was going to say",
    "hold on, someone's at the door",
    "back, it was a parcel",
    "that's so kind of you",
    "I'm really proud of you",
    "haha stop",
    "I have no words",
)
SHORT = (
    "ok",
    "lol",
    "haha",
    "thanks!",
    "nice",
    "yeah",
    "true",
    "😂",
    "👍",
    "omg",
    "hmm",
    "ok ok",
    "lmao",
    "ty",
)

REACTIONS = (
    "oh nice!",
    "wait really?",
    "that's amazing",
    "no way!!",
    "ooh tell me more",
    "love that",
    "haha of course",
    "good for you",
    "that's huge",
    "oh wow",
    "ha, I can picture it",
    "how did that happen?",
    "I'm so happy for you",
    "classic you",
    "oh that sounds rough",
    "ugh, sorry",
    "respect",
    "omg yes",
    "fair",
    "honestly iconic",
)
FOLLOW_UPS = (
    "yeah it's been a whole thing",
    "right?? still processing it",
    "thanks, means a lot",
    "long story, tell you later",
    "I know, I know",
    "haha yep",
    "it is what it is",
    "honestly can't complain",
    "we'll see how it goes",
    "yep, that's life",
)

PREFIXES = ("", "", "", "", "oh btw, ", "so ", "guess what, ", "random but ", "update: ", "also ", "lol ")
SUFFIXES = ("", "", "", "", " haha", "!", " lol", " anyway", " 😅", "...", " tbh")

LONG_OPENERS = (
    "ok long message incoming, sorry.",
    "right, so this week has been a lot, here's the recap.",
    "I need to vent for a second, bear with me.",
)
LONG_FILLER = (
    "Monday started with the boiler making that clanking noise again, and of course the engineer "
    "could only come on Wednesday between eight and six, which is not a time window, that is a day.",
    "Then the team meeting ran over by forty minutes because nobody could agree on what the "
    "agenda even was, and I ended up eating lunch at my desk at three in the afternoon.",
    "On the bright side the weather turned nice for about an hour and I sat in the park with a "
    "coffee and did absolutely nothing, which felt illegal.",
    "I also finally sorted out the pile of post on the hall table, most of it was leaflets for "
    "pizza places and one very threatening letter about a parking fine from 2021.",
    "The rest of it was the usual: laundry, dishes, a half-hearted attempt at the gym, and "
    "scrolling my phone until way too late.",
)


def fill(rng: random.Random, templates: tuple[str, ...], other: str) -> str:
    return rng.choice(templates).format(other=other)


def dress(rng: random.Random, text: str) -> str:
    """A statement as people type it: an opener, a tail, sometimes a capital letter."""
    prefix = rng.choice(PREFIXES)
    if prefix and text.lower().startswith(prefix.split()[0].rstrip(",:")):
        prefix = ""
    out = prefix + text + rng.choice(SUFFIXES)
    if rng.random() < 0.35:
        out = out[0].upper() + out[1:]
    return out


def long_turn(rng: random.Random, statement: str) -> str:
    """Several paragraphs (over 1,200 characters) with `statement` buried in the middle."""
    filler = list(LONG_FILLER)
    rng.shuffle(filler)
    middle = statement[0].upper() + statement[1:] + "."
    paragraphs = [rng.choice(LONG_OPENERS), filler[0] + " " + filler[1], middle, filler[2] + " " + filler[3]]
    paragraphs.append(filler[4] + " Anyway, how are you?")
    return "\n\n".join(paragraphs)


_WORD = re.compile(r"[A-Za-z]{4,}")


def typo(rng: random.Random, text: str, protected: set[str]) -> str:
    """One slip of the keyboard in a word that is not one of the `protected` values."""
    words = [m for m in _WORD.finditer(text) if m.group().lower() not in protected]
    if not words:
        return text
    m = rng.choice(words)
    w = m.group()
    i = rng.randrange(1, len(w) - 1)
    kind = rng.randrange(4)
    if kind == 0:
        w = w[:i] + w[i + 1] + w[i] + w[i + 2 :]  # swapped letters
    elif kind == 1:
        w = w[:i] + w[i + 1 :]  # a dropped letter
    elif kind == 2:
        w = w[:i] + w[i] + w[i:]  # a doubled letter
    else:
        return text.replace("'", "").lower()  # no apostrophes, no capitals
    return text[: m.start()] + w + text[m.end() :]


def beat(rng: random.Random, first: int, typo_rate: float) -> list[tuple[int, str, str]]:
    """Two to four lines of small talk, the speakers taking turns from `first` (0 or 1):
    (speaker, text, "small-talk"), a typo in a line now and then."""
    out = []
    for i in range(rng.randint(2, 4)):
        pool = SHORT if rng.random() < 0.2 else SMALL_TALK
        text = rng.choice(pool)
        if rng.random() < typo_rate:
            text = typo(rng, text, set())
        out.append(((first + i) % 2, text, "small-talk"))
    return out
