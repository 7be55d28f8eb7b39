"""Memory per end user through the gateway: one client key serving many people, each
with a memory of their own, on all three routes (the official openai and anthropic SDKs
against the scripted upstream)."""

from __future__ import annotations

import logging
import time

import httpx
import openai
import pytest
from gateways import Gateway
from servers import AUTH, TLS

from memroute.models.owners import owner_of

PEANUTS = "I'm allergic to peanuts."
SAID = [{"role": "user", "content": PEANUTS}]


def injected(gateway: Gateway) -> str:
    """Every memory line the upstream received with the last request."""
    body = gateway.upstream.last["body"]
    texts = [m.get("content") for m in body.get("messages", []) if m.get("role") == "system"]
    texts += [body.get("instructions"), body.get("system")]
    return "\n".join(t for t in texts if isinstance(t, str))


def learned(gateway: Gateway, user: str = "") -> list[str]:
    """What the key's end user `user` (the key itself for "") holds."""
    return [m.content for m in gateway.memory.list(gateway.key_id, user_id=user, limit=200).items]


def test_each_end_user_of_a_key_has_a_memory_of_their_own(gateway: Gateway) -> None:
    client = gateway.client()
    client.chat.completions.create(
        model="echo-1", messages=[{"role": "user", "content": PEANUTS}], user="ana"
    )
    gateway.wait_for(lambda: PEANUTS in learned(gateway, "ana"))
    assert gateway.memory.wait_for_extraction(10)
    assert learned(gateway, "") == [] and learned(gateway, "ben") == []  # neither the key's nor Ben's

    question = [{"role": "user", "content": "Am I allergic to anything?"}]
    client.chat.completions.create(model="echo-1", messages=question, user="ben")
    assert "peanuts" not in injected(gateway)
    client.chat.completions.create(model="echo-1", messages=question)  # the key itself, no user
    assert "peanuts" not in injected(gateway)
    client.chat.completions.create(model="echo-1", messages=question, user="ana")
    assert "peanuts" in injected(gateway)
    # Every memory learned for Ana says whose it is.
    ana = gateway.memory.list(gateway.key_id, user_id="ana").items
    assert ana and {(m.key_id, m.user_id) for m in ana} == {(gateway.key_id, "ana")}


def test_the_header_wins_over_the_body_and_every_route_reads_its_own_field(gateway: Gateway) -> None:
    gateway.add_anthropic_provider()
    gateway.memory.add(owner_of(gateway.key_id, "ana"), "lives in Lisbon")
    gateway.memory.add(owner_of(gateway.key_id, "ben"), "lives in Porto")
    ask = "Where do I live?"

    gateway.client().responses.create(model="echo-1", input=ask, safety_identifier="ben")
    assert "Porto" in injected(gateway) and "Lisbon" not in injected(gateway)
    gateway.anthropic().messages.create(
        model="claude/claude-test",
        max_tokens=16,
        messages=[{"role": "user", "content": ask}],
        metadata={"user_id": "ana"},
    )
    assert "Lisbon" in injected(gateway) and "Porto" not in injected(gateway)
    assert gateway.upstream.last["body"]["metadata"] == {"user_id": "ana"}  # passed on untouched
    gateway.client(**{"x-memroute-user-id": "ben"}).chat.completions.create(
        model="echo-1", messages=[{"role": "user", "content": ask}], user="ana"
    )
    assert "Porto" in injected(gateway) and "Lisbon" not in injected(gateway)


def test_a_user_header_sent_twice_names_the_first_user(gateway: Gateway) -> None:
    gateway.memory.add(owner_of(gateway.key_id, "ana"), "lives in Lisbon")
    gateway.memory.add(owner_of(gateway.key_id, "ben"), "lives in Porto")
    body = {"model": "echo-1", "messages": [{"role": "user", "content": "Where do I live?"}]}
    headers = [("authorization", f"Bearer {gateway.secret}"), ("x-memroute-user-id", "ben")]
    headers.append(("x-memroute-user-id", "ana"))
    answer = httpx.post(gateway.url + "/v1/chat/completions", json=body, headers=headers, timeout=10)
    assert answer.status_code == 200
    assert "Porto" in injected(gateway) and "Lisbon" not in injected(gateway)


def test_a_key_that_requires_an_end_user_gives_none_without_one(gateway: Gateway) -> None:
    gateway.memory.keys.set_limits(
        gateway.key_id, max_concurrent=None, requests_per_minute=None, requires_user_id=True
    )
    gateway.memory.add(gateway.key_id, "the key's own note: prefers tea")
    raw = gateway.client().chat.completions.with_raw_response.create(
        model="echo-1", messages=[{"role": "user", "content": "I prefer coffee now."}]
    )
    assert raw.headers["x-memroute-memory-skipped"] == "user-id-required"
    assert raw.headers["x-memroute-memory-count"] == "0" and "tea" not in injected(gateway)
    time.sleep(0.3)
    assert learned(gateway, "") == ["the key's own note: prefers tea"]  # nothing learned either
    named = gateway.client().chat.completions.with_raw_response.create(
        model="echo-1", messages=[{"role": "user", "content": "I prefer coffee now."}], user="ana"
    )
    assert "x-memroute-memory-skipped" not in named.headers
    gateway.wait_for(lambda: "I prefer coffee now." in learned(gateway, "ana"))


def test_a_long_or_odd_body_user_is_still_one_user_and_a_bad_header_is_a_400(gateway: Gateway) -> None:
    long_a, long_b = "a" * 300, "a" * 299 + "b"
    client = gateway.client()
    client.chat.completions.create(
        model="echo-1", messages=[{"role": "user", "content": PEANUTS}], user=long_a
    )
    gateway.wait_for(lambda: len({m.api_key_id for m in gateway.memory.list(limit=200).items}) == 1)
    owners = {m.api_key_id for m in gateway.memory.list(limit=200).items}
    (owner,) = owners
    assert owner.startswith(gateway.key_id) and owner.split("\x1f")[1].startswith("sha256:")
    client.chat.completions.create(
        model="echo-1", messages=[{"role": "user", "content": "Am I allergic to anything?"}], user=long_b
    )
    assert "peanuts" not in injected(gateway)  # another long value: another user
    client.chat.completions.create(
        model="echo-1", messages=[{"role": "user", "content": "Am I allergic to anything?"}], user=long_a
    )
    assert "peanuts" in injected(gateway)
    with pytest.raises(openai.BadRequestError, match="x-memroute-user-id"):
        gateway.client(**{"x-memroute-user-id": "u" * 129}).chat.completions.create(
            model="echo-1", messages=[{"role": "user", "content": "Hi"}]
        )


def test_the_rest_api_shows_and_filters_by_end_user(gateway: Gateway) -> None:
    gateway.memory.add(gateway.key_id, "the key's own")
    with httpx.Client(base_url=gateway.url, headers=AUTH, verify=TLS) as api:
        made = api.post("/api/memory", json={"apiKeyId": gateway.key_id, "userId": "ana", "content": "Ana's"})
        assert made.status_code == 200 and made.json()["memory"]["userId"] == "ana"
        assert made.json()["memory"]["apiKeyId"] == gateway.key_id
        every = api.get("/api/memory", params={"apiKeyId": gateway.key_id}).json()["data"]
        assert sorted((m["userId"], m["content"]) for m in every) == [("", "the key's own"), ("ana", "Ana's")]
        own = api.get("/api/memory", params={"apiKeyId": gateway.key_id, "userId": ""}).json()["data"]
        assert [m["content"] for m in own] == ["the key's own"]
        anas = api.get("/api/memory", params={"apiKeyId": gateway.key_id, "userId": "ana"}).json()["data"]
        assert [m["content"] for m in anas] == ["Ana's"]
        preview = api.post(
            "/api/memory/retrieve-preview",
            json={"apiKeyId": gateway.key_id, "userId": "ana", "query": "own Ana", "strategy": "exact"},
        ).json()["memories"]
        assert [(m["userId"], m["content"]) for m in preview] == [("ana", "Ana's")]


def test_no_log_line_names_an_end_user(gateway: Gateway, caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.DEBUG, logger="memroute")
    person = "ana.silva@example.com"
    gateway.client().chat.completions.create(model="echo-1", messages=SAID, user=person)
    gateway.wait_for(lambda: PEANUTS in learned(gateway, person))
    assert gateway.memory.wait_for_extraction(10)
    gateway.memory.clear(owner_of(gateway.key_id, person))
    assert "memory.capture.complete" in caplog.text and "memory.cleared" in caplog.text
    assert person not in caplog.text and "ana.silva" not in caplog.text
