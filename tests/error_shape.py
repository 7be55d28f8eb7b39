"""The error shape every API error has: `{"error": {"message", "type"}}`, and OpenAI's two
extra fields on the gateway (`/v1/*`), with no stack trace in the body."""

from __future__ import annotations

from typing import Any

import httpx

TRACE_MARKERS = ("Traceback", 'File "')


def assert_error(response: httpx.Response, status: int, *, openai: bool = False) -> dict[str, Any]:
    """The response is `status` with the error shape and a non-empty message and type;
    returns the `error` object."""
    assert response.status_code == status, response.text
    body = response.json()
    assert set(body) == {"error"}, body
    error = body["error"]
    expected = {"message", "type", "param", "code"} if openai else {"message", "type"}
    assert set(error) == expected, body
    assert isinstance(error["message"], str) and error["message"], body
    assert isinstance(error["type"], str) and error["type"], body
    assert_no_trace(response)
    return error  # type: ignore[no-any-return]


def assert_no_trace(response: httpx.Response) -> None:
    for marker in TRACE_MARKERS:
        assert marker not in response.text, response.text[:500]
