"""`/api/session`: the dashboard's login. The admin token is exchanged for an HttpOnly,
SameSite=Strict session cookie; the token itself never goes into a cookie."""

from __future__ import annotations

from fastapi import APIRouter, Request, Response

from memroute.errors import Unauthorized
from memroute.service.sessions import SESSION_TTL
from memroute.web.auth import SESSION_COOKIE, check_admin_token, session_secret
from memroute.web.routes.memory import memory_of
from memroute.web.schemas.errors import ERROR_RESPONSES
from memroute.web.schemas.session import LoginRequest, SessionOut

router = APIRouter(prefix="/api/session", tags=["session"], responses=ERROR_RESPONSES)


def set_session_cookie(response: Response, request: Request, secret: str) -> None:
    """The session cookie: HttpOnly, SameSite=Strict, Secure over https, 12 h."""
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
    SameSite=Strict, 12 h). A wrong token is a 401; past the limit of wrong admin tokens
    (per address or over all, shared with `/api/*` and `/mcp`) a 429 with `Retry-After`."""
    if not check_admin_token(request, body.token):
        raise Unauthorized("wrong admin token")
    secret, expires = memory_of(request).sessions.open(request.app.state.admin_token)
    set_session_cookie(response, request, secret)
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
