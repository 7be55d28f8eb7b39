"""The dashboard's pages: `/` and `/dashboard` lead to Memory Studio, the
pages need a session (else the login page), static files are public (no data in them).
The API's reference pages `/docs` (Swagger UI) and `/redoc` load their scripts from a
CDN, so they need the admin token or a session too; `/openapi.json` stays public.

Every page is sent with a strict Content-Security-Policy (scripts, styles and requests
only from this origin, no framing), so injected markup could not run or phone home.
"""

from __future__ import annotations

from html import escape
from importlib import resources
from pathlib import Path
from urllib.parse import quote

from fastapi import APIRouter, FastAPI, Request
from fastapi.openapi.docs import get_redoc_html, get_swagger_ui_html
from fastapi.responses import FileResponse, HTMLResponse, RedirectResponse, Response
from fastapi.staticfiles import StaticFiles

from memroute.config import Config
from memroute.errors import Unauthorized
from memroute.web.auth import (
    admin_throttle,
    admin_token_path,
    bearer_token,
    check_admin_token,
    client_address,
    has_session,
)
from memroute.web.routes.session import set_session_cookie

PAGES = {"memory": "memory.html", "keys": "keys.html", "providers": "providers.html"}
CSP = (
    "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; "
    "connect-src 'self'; frame-ancestors 'none'; base-uri 'none'; form-action 'self'"
)
SECURITY_HEADERS = {
    "Content-Security-Policy": CSP,
    "X-Frame-Options": "DENY",
    "X-Content-Type-Options": "nosniff",
    "Referrer-Policy": "no-referrer",
    "Cache-Control": "no-store",
}

# The reference pages run inline scripts from a CDN, so they get these headers, not the CSP.
DOCS_HEADERS = {k: v for k, v in SECURITY_HEADERS.items() if k != "Content-Security-Policy"}
DOC_PAGES = ("/docs", "/redoc")

router = APIRouter(include_in_schema=False)


def dashboard_dir() -> Path:
    return Path(str(resources.files("memroute.web.dashboard")))


def _page(name: str) -> Response:
    return FileResponse(dashboard_dir() / name, media_type="text/html", headers=SECURITY_HEADERS)


def _safe_next(target: str | None) -> str:
    """Only a path of this dashboard: never another site (open redirect)."""
    if target in DOC_PAGES:
        return target
    if target and target.startswith("/dashboard/") and not target.startswith("//") and "\\" not in target:
        return target
    return "/dashboard/memory"


@router.get("/")
def root() -> RedirectResponse:
    return RedirectResponse("/dashboard/memory", status_code=307)


@router.get("/dashboard")
def dashboard_root() -> RedirectResponse:
    return RedirectResponse("/dashboard/memory", status_code=307)


@router.get("/dashboard/login")
def login_page(request: Request) -> Response:
    if has_session(request):
        return RedirectResponse(_safe_next(request.query_params.get("next")), status_code=303)
    page = (dashboard_dir() / "login.html").read_text(encoding="utf-8")
    help_text = token_help(request.app.state.config)
    return HTMLResponse(page.replace("{token_help}", help_text), headers=SECURITY_HEADERS)


def token_help(config: Config) -> str:
    """Where this server's admin token comes from, as HTML: its environment, or the file
    in its data directory (the home directory written `~`)."""
    if config.admin_token:
        return "Set in the server's environment as <code>MEMROUTE_ADMIN_TOKEN</code>."
    path = admin_token_path(config)
    home = Path.home()
    shown = f"~/{path.relative_to(home)}" if path.is_relative_to(home) else str(path)
    return (
        f"Printed by <code>memroute serve</code> on first start and stored in <code>{escape(shown)}</code>."
    )


LINK_REFUSED = (
    "<!doctype html><title>memroute: login link refused</title>"
    "<p>This login link is unknown, already used or expired (links last 5 minutes). "
    "Run <code>memroute dashboard-link</code> on the server's machine for a new one, "
    'or <a href="/dashboard/login">sign in with the admin token</a>.</p>'
)


@router.get("/dashboard/login/link")
def login_link(request: Request, code: str = "") -> Response:
    """Exchange a one-time code from `memroute dashboard-link` for a session. The code is
    checked before the admin-token throttle and never needs the token, so the console
    gets in even while wrong tokens keep the throttle closed."""
    memory = request.app.state.memory
    if not memory.sessions.redeem_login_link(code):
        admin_throttle(request).fail(client_address(request))
        return HTMLResponse(LINK_REFUSED, status_code=400, headers=SECURITY_HEADERS)
    secret, _ = memory.sessions.open(request.app.state.admin_token)
    response = RedirectResponse("/dashboard/memory", status_code=303, headers=SECURITY_HEADERS)
    set_session_cookie(response, request, secret)
    return response


@router.get("/dashboard/{name}")
def page(request: Request, name: str) -> Response:
    file = PAGES.get(name)
    if file is None:
        return RedirectResponse("/dashboard/memory", status_code=307)
    if not has_session(request):
        wanted = request.url.path + (f"?{request.url.query}" if request.url.query else "")
        return RedirectResponse(f"/dashboard/login?next={quote(wanted, safe='')}", status_code=303)
    return _page(file)


def _doc_page(request: Request, page: HTMLResponse) -> Response:
    """The page for the admin (Bearer token, through the throttle, or a session); a
    browser without a session is sent to the login page, which comes back here."""
    given = bearer_token(request)
    if given is not None:
        if not check_admin_token(request, given):
            raise Unauthorized("wrong admin token (Authorization: Bearer <admin token>)")
    elif not has_session(request):
        return RedirectResponse(f"/dashboard/login?next={quote(request.url.path, safe='')}", status_code=303)
    page.headers.update(DOCS_HEADERS)
    return page


@router.get("/docs")
def swagger_ui(request: Request) -> Response:
    return _doc_page(request, get_swagger_ui_html(openapi_url="/openapi.json", title="memroute API"))


@router.get("/redoc")
def redoc(request: Request) -> Response:
    return _doc_page(request, get_redoc_html(openapi_url="/openapi.json", title="memroute API"))


def mount_static(app: FastAPI) -> None:
    """The dashboard's static files under /dashboard/static (its pages are `router`'s)."""
    app.mount("/dashboard/static", StaticFiles(directory=dashboard_dir()), name="dashboard-static")
