"""The retrieval-quality sets `bench.quality_run` measures, in one shape.

A set is memories (each stored under its owner key, with the set's id of the memory in
`metadata.qualityId`) and questions (each asked as its owner, with the groups of memories
that answer it: a group counts as found when any memory of it is ranked). Sets:

- `paraphrase`: bench/quality/, hand-written facts of one person and paraphrased questions
  (one key);
- `conversations`: bench/conversations/, every turn of ten multi-session chats stored
  verbatim as a kept turn of its conversation's key (speaker and date in its metadata, as
  the gateway keeps them), and the questions about them by kind (single-hop, temporal,
  changed-mind, multi-hop, who);
- `many-keys`: 40 more chats from the same generator (another seed), each cut after a
  random number of its sessions (2 to all), so the keys range from a few dozen turns to
  several hundred and share speaker names across keys: what per-key term statistics are
  for. The questions whose answers were cut away are left out;
- `threads`: bench/threads/, eight long chats (500–650 turns, 18–30 dated sessions) in which
  each person keeps coming back to a few life themes, so many turns of one person sound
  alike and rare words and names tell them apart; questions name a detail with the words
  of its turn (detail, temporal, who, multi-hop) or in other words (paraphrase). Stored
  like `conversations`.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from bench.conversations import load_conversations, load_questions, turns_of
from bench.conversations.generate import generate
from bench.quality import load_memories, load_queries, overlaps
from bench.threads import CONVERSATIONS as THREADS_CONVERSATIONS
from bench.threads import QUESTIONS as THREADS_QUESTIONS

ID_FIELD = "qualityId"
MANY_KEYS_SEED = 2026
MANY_KEYS = 40


@dataclass(frozen=True)
class SetMemory:
    owner: str
    id: str
    content: str
    type: str
    session_id: str = ""
    metadata: dict[str, Any] | None = None


@dataclass(frozen=True)
class SetQuestion:
    id: str
    owner: str
    text: str
    kind: str
    answers: tuple[frozenset[str], ...]  # every group must be found; any memory of a group finds it


@dataclass(frozen=True)
class QualitySet:
    name: str
    description: str
    memories: Sequence[SetMemory]
    questions: Sequence[SetQuestion]

    @property
    def owners(self) -> int:
        return len({m.owner for m in self.memories})


def paraphrase_set() -> QualitySet:
    memories = load_memories()
    by_id = {m["id"]: m for m in memories}
    questions = [
        SetQuestion(
            q["id"],
            "quality",
            q["query"],
            "lexical" if overlaps(q, by_id) else "paraphrase",
            tuple(frozenset({r}) for r in q["relevant"]),
        )
        for q in load_queries()
    ]
    return QualitySet(
        "paraphrase",
        "hand-written facts of one person, paraphrased questions (one key)",
        [SetMemory("quality", m["id"], m["content"], m["type"]) for m in memories],
        questions,
    )


def chat_memories(conversations: Sequence[dict[str, Any]]) -> list[SetMemory]:
    """Every turn of each chat, as the gateway keeps it, under the chat's key."""
    return [
        SetMemory(
            conversation["id"],
            turn["id"],
            turn["text"],
            "episodic",
            turn["session"],
            {"category": "turn", "role": "user", "speaker": turn["speaker"], "learnedAt": turn["date"]},
        )
        for conversation in conversations
        for turn in turns_of(conversation)
    ]


def chat_questions(questions: Sequence[dict[str, Any]], kept: set[str] | None = None) -> list[SetQuestion]:
    """The questions with their answer groups (an evidence turn or the turns that say the
    same); with `kept`, only the turns kept, and only the questions all of whose answers were."""
    out = []
    for q in questions:
        alternatives = q.get("alternatives") or {}
        answers = [frozenset({e, *alternatives.get(e, ())}) for e in q["evidence"]]
        if kept is not None:
            answers = [group & kept for group in answers]
            if not all(answers):
                continue
        out.append(SetQuestion(q["id"], q["conversation"], q["question"], q["category"], tuple(answers)))
    return out


def conversation_set() -> QualitySet:
    return QualitySet(
        "conversations",
        "every turn of 10 multi-session chats kept verbatim, one key per chat; questions by kind",
        chat_memories(load_conversations()),
        chat_questions(load_questions()),
    )


def many_keys_set() -> QualitySet:
    conversations, questions = generate(MANY_KEYS_SEED, MANY_KEYS)
    rng = random.Random(MANY_KEYS_SEED)
    cut = [{**c, "sessions": c["sessions"][: rng.randint(2, len(c["sessions"]))]} for c in conversations]
    memories = chat_memories(cut)
    return QualitySet(
        "many-keys",
        f"{MANY_KEYS} chats cut after 2 to all of their sessions, one key per chat; questions by kind",
        memories,
        chat_questions(questions, {m.id for m in memories}),
    )


def threads_set() -> QualitySet:
    conversations = load_conversations(THREADS_CONVERSATIONS)
    return QualitySet(
        "threads",
        f"every turn of {len(conversations)} long chats in which each person returns to a few themes, "
        "kept verbatim, one key per chat; questions by kind",
        chat_memories(conversations),
        chat_questions(load_questions(THREADS_QUESTIONS)),
    )


SETS: dict[str, Callable[[], QualitySet]] = {
    "paraphrase": paraphrase_set,
    "conversations": conversation_set,
    "many-keys": many_keys_set,
    "threads": threads_set,
}


def recall_at(answers: Sequence[frozenset[str]], ranked: Sequence[str], k: int) -> float:
    """The share of answer groups with a memory in the first `k` of `ranked`."""
    top = set(ranked[:k])
    return sum(1 for group in answers if group & top) / len(answers)


def reciprocal_rank(answers: Sequence[frozenset[str]], ranked: Sequence[str], k: int = 10) -> float:
    """1 / the rank of the first memory of any answer group within the first `k` (0 if none)."""
    wanted = frozenset().union(*answers)
    return next((1.0 / rank for rank, i in enumerate(ranked[:k], start=1) if i in wanted), 0.0)
