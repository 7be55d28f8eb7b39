"""`memroute demo`: a scripted conversation through the real gateway, against a
built-in echo upstream, with the official openai SDK as the client. No API key and
no internet needed."""

from __future__ import annotations

import secrets
import time
from collections.abc import Callable
from pathlib import Path

CONVERSATION = [
    "Hi! I prefer TypeScript for new services, and I always write tests first.",
    "For this project I'll use Postgres. I don't like ORMs that hide SQL.",
]
QUESTION = "Which language and database should I pick for the billing service?"


def run_demo(data_dir: Path, echo: Callable[[str], None]) -> None:
    import openai

    from memroute.config import Config
    from memroute.gateway.echo import EchoUpstream
    from memroute.service import Memory
    from memroute.web.app import create_app
    from memroute.web.serve import serving

    upstream = EchoUpstream()
    with serving(upstream.app()) as upstream_url:
        env = {
            "MEMROUTE_UPSTREAM_BASE_URL": upstream_url + "/v1",
            "MEMROUTE_ADMIN_TOKEN": secrets.token_urlsafe(32),
        }
        config = Config.for_path(data_dir / "demo.db", environ=env)
        with Memory.open(config=config, start_workers=False) as setup:
            setup.update_settings(enabled=True)
            key, secret = setup.keys.create("demo")
        with (
            serving(create_app(config)) as gateway_url,
            Memory.open(config=config, start_workers=False) as mem,
        ):
            echo(f"memroute demo: gateway {gateway_url}, echo upstream {upstream_url}\n")
            client = openai.OpenAI(base_url=gateway_url + "/v1", api_key=secret, max_retries=0)
            for turn in CONVERSATION:
                echo(f"user> {turn}")
                reply = client.chat.completions.create(
                    model="echo", messages=[{"role": "user", "content": turn}]
                )
                echo(f"  assistant> {reply.choices[0].message.content}")
            _wait_for_extraction(mem, key.id)
            echo("\nlearned:")
            for memory in mem.list(api_key_id=key.id).items:
                label = memory.metadata.get("polarity") or "what was said"
                echo(f"   {memory.key:<36} {memory.content}  [{label}]")
            echo(f"\nuser> {QUESTION}")
            raw = client.chat.completions.with_raw_response.create(
                model="echo", messages=[{"role": "user", "content": QUESTION}]
            )
            echo(
                f"   injected {raw.headers['x-memroute-memory-count']} memories "
                f"({raw.headers['x-memroute-memory-tokens']} tokens); the request the upstream received:"
            )
            for message in (upstream.last_request or {}).get("messages", []):
                lines = str(message["content"]).splitlines()
                echo(f"   {message['role']:>6}: {lines[0]}")
                for line in lines[1:]:
                    echo(f"           {line}")


def _wait_for_extraction(mem: object, owner: str, timeout: float = 10.0) -> None:
    from memroute.service import Memory

    assert isinstance(mem, Memory)
    deadline = time.monotonic() + timeout
    while mem.extraction_queue().pending and time.monotonic() < deadline:
        time.sleep(0.05)
