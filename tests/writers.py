"""Clients that write to a server until told to stop or until it dies, recording what it
acknowledged: for the tests that SIGKILL servers under load and then look for every
acknowledged write."""

from __future__ import annotations

import itertools
import threading

import httpx
import openai
from servers import AUTH, TLS


def rest_adds(base: str, owner: str, prefix: str, stop: threading.Event, added: list[str]) -> None:
    """REST adds (memory keys `prefix:0`, `prefix:1`, …) until `stop` or the server dies;
    each key whose add was answered 200 goes into `added`."""
    with httpx.Client(base_url=base, headers=AUTH, timeout=5, verify=TLS) as api:
        for i in itertools.count():
            if stop.is_set():
                return
            name = f"{prefix}:{i}"
            body = {"apiKeyId": owner, "content": f"note {name}", "key": name}
            try:
                if api.post("/api/memory", json=body).status_code == 200:
                    added.append(name)
            except httpx.HTTPError:
                return


def chat_turns(base: str, secret: str, prefix: str, stop: threading.Event, answered: list[str]) -> None:
    """Chat turns ("I prefer {prefix}x0.", …) until `stop` or the server dies; the topic of
    each answered turn goes into `answered`."""
    client = openai.OpenAI(
        base_url=base + "/v1",
        api_key=secret,
        max_retries=0,
        timeout=5,
        http_client=openai.DefaultHttpxClient(verify=TLS),
    )
    for i in itertools.count():
        if stop.is_set():
            return
        topic = f"{prefix}x{i}"
        try:
            client.chat.completions.create(
                model="echo-1", messages=[{"role": "user", "content": f"I prefer {topic}."}]
            )
        except openai.APIError:
            return
        answered.append(topic)
