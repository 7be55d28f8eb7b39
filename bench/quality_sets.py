"""The retrieval-quality sets `bench.quality_run` measures, in one shape.

A set is memories (each stored under its owner key, with the set's id of the memory in
`metadata.qualityId`) and questions (each asked as its owner, with the groups of memories
that answer it: a group counts as found when any memory of it is ranked). Sets:

- `paraphrase`: bench/quality/, hand-written facts of one person and paraphrased questions
  (one key);
- `conversations`: bench/conversations/, every turn of ten multi-session chats stored
  verbatim as a kept turn of its conversation's key (speaker and date in its metadata, as
  the gateway keeps them), and the questions about them by kind (single-hop, temporal,
  changed-mind, multi-hop, who).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from bench.conversations import load_conversations, load_questions, turns_of
from bench.quality import load_memories, load_queries, overlaps

ID_FIELD = "qualityId"


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


def conversation_set() -> QualitySet:
    memories = [
        SetMemory(
            conversation["id"],
            turn["id"],
            turn["text"],
            "episodic",
            turn["session"],
            {"category": "turn", "role": "user", "speaker": turn["speaker"], "learnedAt": turn["date"]},
        )
        for conversation in load_conversations()
        for turn in turns_of(conversation)
    ]
    questions = []
    for q in load_questions():
        alternatives = q.get("alternatives") or {}
        answers = tuple(frozenset({e, *alternatives.get(e, ())}) for e in q["evidence"])
        questions.append(SetQuestion(q["id"], q["conversation"], q["question"], q["category"], answers))
    return QualitySet(
        "conversations",
        "every turn of 10 multi-session chats kept verbatim, one key per chat; questions by kind",
        memories,
        questions,
    )


SETS: dict[str, Callable[[], QualitySet]] = {
    "paraphrase": paraphrase_set,
    "conversations": conversation_set,
}


def recall_at(answers: Sequence[frozenset[str]], ranked: Sequence[str], k: int) -> float:
    """The share of answer groups with a memory in the first `k` of `ranked`."""
    top = set(ranked[:k])
    return sum(1 for group in answers if group & top) / len(answers)


def reciprocal_rank(answers: Sequence[frozenset[str]], ranked: Sequence[str], k: int = 10) -> float:
    """1 / the rank of the first memory of any answer group within the first `k` (0 if none)."""
    wanted = frozenset().union(*answers)
    return next((1.0 / rank for rank, i in enumerate(ranked[:k], start=1) if i in wanted), 0.0)
