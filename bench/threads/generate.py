"""Writes the threads set: long chats between two people who keep coming back to the same few
life themes, and questions that name a detail of one turn.

    python -m bench.threads.generate            # seed 29, 8 conversations
    python -m bench.threads.generate --seed 7 --conversations 4 --out /tmp/threads

Deterministic for a seed. `plan.py` picks each person's themes and every detail they tell,
`writer.py` (with `talk.py`) the turns around them, `questions.py` the questions (each
checked against every turn of the conversation by `checks.py`).
"""

from __future__ import annotations

import argparse
import random
from collections import Counter
from pathlib import Path
from typing import Any

from bench.conversations.generate import Conversation, conversation_record, session_dates, write_jsonl
from bench.conversations.pools import FIRST_NAMES
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
    names = list(FIRST_NAMES)
    random.Random(seed).shuffle(names)
    convs, qs = [], []
    for i in range(n):
        pair = (names[(2 * i) % len(names)], names[(2 * i + 1) % len(names)])
        thread = build(seed, i, pair)
        convs.append(conversation_record(Conversation(thread.cid, pair, thread.days, [], thread.sessions)))
        qs.extend(questions_of(random.Random(seed * 1000 + 500 + i), thread))
    return convs, qs


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    ap.add_argument("--seed", type=int, default=SEED)
    ap.add_argument("--conversations", type=int, default=CONVERSATIONS)
    ap.add_argument("--out", type=Path, default=HERE)
    args = ap.parse_args(argv)
    convs, qs = generate(args.seed, args.conversations)
    args.out.mkdir(parents=True, exist_ok=True)
    write_jsonl(args.out / "conversations.jsonl", convs)
    write_jsonl(args.out / "questions.jsonl", qs)
    turns = sum(len(s["turns"]) for c in convs for s in c["sessions"])
    kinds = ", ".join(f"{k} {n}" for k, n in sorted(Counter(q["category"] for q in qs).items()))
    print(f"{len(convs)} conversations, {turns} turns, {len(qs)} questions ({kinds}) → {args.out}")


if __name__ == "__main__":
    main()
