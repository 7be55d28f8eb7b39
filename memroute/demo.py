"""`memroute demo`: a scripted conversation through the library, no API key needed.

(When the gateway lands, the demo runs through it against a built-in echo upstream.)
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

CONVERSATION = [
    "Hi! I prefer TypeScript for new services, and I always write tests first.",
    "For this project I'll use Postgres. I don't like ORMs that hide SQL.",
    "Actually, I hate long meetings; I love short written updates.",
]
QUESTION = "Which language and database should I pick for the billing service?"


def run_demo(path: Path, echo: Callable[[str], None]) -> None:
    from memroute.service import Memory

    with Memory.open(path) as mem:
        owner = "demo-key"
        echo(f"memroute demo (database: {path})\n")
        for turn in CONVERSATION:
            echo(f"user> {turn}")
            for memory in mem.remember(owner, turn, session_id="demo"):
                polarity = memory.metadata.get("polarity")
                echo(f"   learned  {memory.key:<36} {memory.content}  [{polarity}]")
        echo(f"\nuser> {QUESTION}")
        items = mem.retrieve(owner, QUESTION, strategy="hybrid", max_tokens=200)
        for item in items:
            echo(f"   recalled [{item.tier:<6}] {item.memory.content}")
        request = {"model": "gpt-4o-mini", "messages": [{"role": "user", "content": QUESTION}]}
        injected = mem.inject(request, items, provider="openai")
        echo("\nrequest sent upstream:")
        for message in injected["messages"]:
            lines = str(message["content"]).splitlines()
            echo(f"   {message['role']:>6}: {lines[0]}")
            for line in lines[1:]:
                echo(f"           {line}")
