"""The conversation-recall set: generated multi-session chats and questions about them.

`conversations.jsonl`: one conversation a line, {"id", "speakers": [two names], "sessions":
[{"id", "date", "turns": [{"id", "speaker", "text"}]}]}. `questions.jsonl`: {"id",
"conversation", "question", "answer", "category", "evidence": [turn ids, all needed],
"alternatives"?: {evidence id: [turns that state the same]}, "superseded"?: [turn ids the
evidence replaced]}. Categories: single-hop, temporal, changed-mind, multi-hop, who.
`generate.py` writes both (deterministic for a seed).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
CONVERSATIONS = HERE / "conversations.jsonl"
QUESTIONS = HERE / "questions.jsonl"


def read_jsonl(path: Path) -> list[dict[str, Any]]:
    with path.open(encoding="utf-8") as f:
        return [json.loads(line) for line in f if line.strip()]


def load_conversations(path: Path = CONVERSATIONS) -> list[dict[str, Any]]:
    return read_jsonl(path)


def load_questions(path: Path = QUESTIONS) -> list[dict[str, Any]]:
    return read_jsonl(path)


def turns_of(conversation: dict[str, Any]) -> list[dict[str, Any]]:
    """Every turn in order, each with its session's id and date."""
    return [
        {**turn, "session": session["id"], "date": session["date"]}
        for session in conversation["sessions"]
        for turn in session["turns"]
    ]
