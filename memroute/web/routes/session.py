"""`/api/session`: the dashboard's login. The admin token is exchanged for an HttpOnly,
SameSite=Strict session cookie; the token itself never goes into a cookie."""

from __future__ import annotations

import threading
import time
from collections import deque

from fastapi import APIRouter, Request, Response

from memroute.errors import TooManyAttempts, Unauthorized
from memroute.service.sessions import SESSION_TTL
from memroute.web.auth import SESSION_COOKIE, admin_token_matches, session_secret
from memroute.web.routes.memory import memory_of
from memroute.web.schemas.errors import ERROR_RESPONSES
from memroute.web.schemas.session import LoginRequest, SessionOut

router = APIRouter(prefix="/api/session", tags=["session"], responses=ERROR_RESPONSES)

FAILURES_ALLOWED = 10  # wrong tokens per client address per window
FAILURE_WINDOW_S = 60.0


class _Throttle:
    """Wrong admin tokens per client address: guessing is slowed to 10 tries a minute."""

    def __init__(self) -> None:
        self._failures: dict[str, deque[float]] = {}
        self._lock = threading.Lock()

    def check(self, client: str) -> None:
        with self._lock:
            recent = self._recent(client)
            if len(recent) >= FAILURES_ALLOWED:
                wait = int(FAILURE_WINDOW_S - (time.monotonic() - recent[0])) + 1
                raise TooManyAttempts(f"too many wrong admin tokens: try again in {wait} s")

    def fail(self, client: str) -> None:
        with self._lock:
            self._recent(client).append(time.monotonic())

    def _recent(self, client: str) -> deque[float]:
        recent = self._failures.setdefault(client, deque())
        while recent and time.monotonic() - recent[0] > FAILURE_WINDOW_S:
            recent.popleft()
        return recent


def _throttle(request: Request) -> _Throttle:
    state = request.app.state
    if not hasattr(state, "login_throttle"):
        state.login_throttle = _Throttle()
    throttle: _Throttle = state.login_throttle
    return throttle


def _set_cookie(response: Response, request: Request, secret: str) -> None:
    response.set_cookie(
        SESSION_COOKIE,
        secret,
        max_age=int(SESSION_TTL.total_seconds()),
        path="/",
        httponly=True,
        samesite="strict",
        secure=request.url.scheme == "https",
    )


@router.post("", response_model=SessionOut, responses={429: ERROR_RESPONSES[400]})
def login(request: Request, response: Response, body: LoginRequest) -> SessionOut:
    """Open a dashboard session with the admin token (cookie `memroute_session`, HttpOnly,
    SameSite=Strict, 12 h). A wrong token is a 401; 10 wrong tokens a minute from one
    address are a 429."""
    client = request.client.host if request.client else "?"
    throttle = _throttle(request)
    throttle.check(client)
    if not admin_token_matches(request, body.token):
        throttle.fail(client)
        raise Unauthorized("wrong admin token")
    secret, expires = memory_of(request).sessions.open(request.app.state.admin_token)
    _set_cookie(response, request, secret)
    return SessionOut(authenticated=True, expiresAt=expires)


@router.get("", response_model=SessionOut)
def current(request: Request) -> SessionOut:
    """Whether the request carries a live session, and until when."""
    secret = session_secret(request)
    expires = (
        memory_of(request).sessions.expires_at(secret, request.app.state.admin_token) if secret else None
    )
    return SessionOut(authenticated=expires is not None, expiresAt=expires)


@router.delete("", response_model=SessionOut)
def logout(request: Request, response: Response) -> SessionOut:
    """End the session (in every process) and clear the cookie."""
    secret = session_secret(request)
    if secret:
        memory_of(request).sessions.close(secret)
    response.delete_cookie(SESSION_COOKIE, path="/", httponly=True, samesite="strict")
    return SessionOut(authenticated=False, expiresAt=None)
