"""How big a realistic large chat is, and what parsing and re-encoding it costs: the
figures behind the defaults of MEMROUTE_MAX_CHAT_BODY_BYTES and MEMROUTE_MAX_CHAT_MESSAGES
(docs/settings.md).

python -m bench.chat_body                   # a 200,000-token agent session, 5 screenshots
python -m bench.chat_body --tokens 1000000 --images 0

The chat: a system prompt, then tool-calling steps (an assistant message with a
`read_file` call, the file as the tool's answer: 50 to 1,500 words), a user turn every
ten steps, until the context holds `--tokens` tokens (about a word each), then a user
message with `--images` 2 MB screenshots as base64 data URLs (random bytes: PNG does not
compress further).
"""

from __future__ import annotations

import argparse
import base64
import json
import random
import time
from typing import Any

WORDS = [
    "the",
    "of",
    "and",
    "to",
    "in",
    "is",
    "that",
    "for",
    "it",
    "as",
    "with",
    "was",
    "on",
    "be",
    "by",
    "this",
    "are",
    "or",
    "file",
    "def",
    "return",
    "import",
    "self",
    "value",
    "error",
    "test",
    "line",
    "code",
]
FILE_WORDS = (50, 200, 600, 1500)
IMAGE_BYTES = 2_000_000


def agent_session(tokens: int, images: int, seed: int = 1) -> dict[str, Any]:
    rng = random.Random(seed)

    def text(words: int) -> str:
        return " ".join(rng.choice(WORDS) for _ in range(words))

    messages: list[dict[str, Any]] = [{"role": "system", "content": text(1500)}]
    used, step = 1500, 0
    while used < tokens:
        step += 1
        if step % 10 == 1:
            messages.append({"role": "user", "content": text(60)})
        call = {
            "id": f"call_{step}",
            "type": "function",
            "function": {"name": "read_file", "arguments": json.dumps({"path": f"src/module_{step}.py"})},
        }
        messages.append({"role": "assistant", "content": text(40), "tool_calls": [call]})
        words = rng.choice(FILE_WORDS)
        messages.append({"role": "tool", "tool_call_id": f"call_{step}", "content": text(words)})
        used += 60 + 40 + words + 30
    shots = [
        {"type": "image_url", "image_url": {"url": "data:image/png;base64," + _base64(rng, IMAGE_BYTES)}}
        for _ in range(images)
    ]
    if shots:
        messages.append(
            {"role": "user", "content": [{"type": "text", "text": "what is wrong here?"}, *shots]}
        )
    return {"model": "provider/model", "messages": messages}


def _base64(rng: random.Random, size: int) -> str:
    return base64.b64encode(rng.randbytes(size)).decode()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--tokens", type=int, default=200_000, help="context the session fills (200000)")
    parser.add_argument("--images", type=int, default=5, help="2 MB screenshots in the last message (5)")
    args = parser.parse_args()
    body = agent_session(args.tokens, args.images)
    started = time.perf_counter()
    raw = json.dumps(body).encode()
    encoded = time.perf_counter() - started
    started = time.perf_counter()
    json.loads(raw)
    parsed = time.perf_counter() - started
    print(
        f"{len(body['messages'])} messages, {len(raw) / 2**20:.2f} MiB; "
        f"parse {parsed * 1000:.0f} ms, encode {encoded * 1000:.0f} ms"
    )


if __name__ == "__main__":
    main()
