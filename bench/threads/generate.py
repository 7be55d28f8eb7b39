"""Writes the threads set: long chats between two people who keep coming back to the same few
life themes, and questions that name a detail of one turn.

    python -m bench.threads.generate            # seed 29, 8 conversations
    python -m bench.threads.generate --seed 7 --conversations 4 --out /tmp/threads

Deterministic for a seed. `plan.py` picks each person's themes and every detail they tell,
`writer.py` (with `talk.py`) the turns around them, `questions.py` the questions (each
checked against every turn of the conversation by `checks.py`).
"""

from __future__ import annotations

import random
from typing import Any

from bench.conversations.generate import Conversation, command, conversation_record, name_pairs, session_dates
from bench.threads import HERE
from bench.threads.plan import plan
from bench.threads.questions import questions_of
from bench.threads.writer import Thread, write

SEED = 29
CONVERSATIONS = 8
SESSIONS = (18, 30)


def build(seed: int, index: int, names: tuple[str, str]) -> Thread:
    """One conversation, written."""
    rng = random.Random(seed * 1000 + index)
    n_sessions = rng.randint(*SESSIONS)
    people, details = plan(rng, n_sessions)
    thread = Thread(f"t{index + 1:02d}", names, session_dates(rng, n_sessions), people, details)
    write(rng, thread)
    return thread


def generate(seed: int = SEED, n: int = CONVERSATIONS) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """(conversations, questions), the same for the same seed."""
    convs, qs = [], []
    for i, pair in enumerate(name_pairs(seed, n)):
        thread = build(seed, i, pair)
        convs.append(conversation_record(Conversation(thread.cid, pair, thread.days, [], thread.sessions)))
        qs.extend(questions_of(random.Random(seed * 1000 + 500 + i), thread))
    return convs, qs


def main(argv: list[str] | None = None) -> None:
    command(argv, __doc__, generate, SEED, CONVERSATIONS, HERE)


if __name__ == "__main__":
    main()
