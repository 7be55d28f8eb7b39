"""The threads set: long chats in which each person keeps coming back to a few life themes.

Two people, 18–30 dated sessions, 400–650 turns a conversation. Each person has 3–5 themes
(`themes/`: painting, kids, running, a support group, a renovation …) and tells about each
in 10–30 turns, every one holding a concrete detail (a place, a name, a price, a title), in
phrasings that repeat, around values that share words ("the beach in Whitby", "the castle
in Whitby"), beside turns on the same kind of thing with no detail at all: many turns of one
person sound alike, and rare words and names tell them apart. The other person replies on
topic, often by name and naming the detail without answering anything. Questions reuse a
distinctive word or two of their evidence turn (`detail`, `temporal`, `who`, `multi-hop`:
two turns), or none of its content words (`paraphrase`).

`conversations.jsonl` and `questions.jsonl` have the shapes of bench/conversations/ (see its
docstring; read them with its `load_conversations` / `load_questions` and the paths here).
`python -m bench.threads.generate` writes both (deterministic for a seed).
"""

from __future__ import annotations

from pathlib import Path

HERE = Path(__file__).resolve().parent
CONVERSATIONS = HERE / "conversations.jsonl"
QUESTIONS = HERE / "questions.jsonl"
