"""What the scripted upstream answers in the OpenAI Responses and Anthropic Messages
formats: the echo upstream's own answers and events (`memroute.gateway.echo`, whose shapes
tests/test_echo_formats.py checks with the official SDKs), for a request body."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

from memroute.gateway import echo
from memroute.memory.injection import last_user_text, parts_text


def responses_user_text(body: dict[str, Any]) -> str:
    return last_user_text({"input": body.get("input")})


def response(body: dict[str, Any], text: str) -> dict[str, Any]:
    return echo.response(body.get("model", "echo"), text)


def response_events(body: dict[str, Any], text: str) -> AsyncIterator[bytes]:
    return echo.response_events(body.get("model", "echo"), text)


def messages_user_text(body: dict[str, Any]) -> str:
    for message in reversed(body.get("messages") or []):
        if isinstance(message, dict) and message.get("role") == "user":
            content = message.get("content")
            text = content if isinstance(content, str) else parts_text(content or [])
            if text:
                return text
    return ""


def message(body: dict[str, Any], text: str) -> dict[str, Any]:
    return echo.message(body.get("model", "echo"), text)


def message_events(body: dict[str, Any], text: str) -> AsyncIterator[bytes]:
    return echo.message_events(body.get("model", "echo"), text)
