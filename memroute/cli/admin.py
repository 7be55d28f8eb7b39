"""`memroute keys|providers|settings|dashboard-link …`: client keys, upstream providers,
memory settings and the console's way into the dashboard."""

from __future__ import annotations

import json
import sys
from typing import Any

import click

from memroute.cli.common import cli_errors, config_of, memory_for, print_json
from memroute.config import Config
from memroute.errors import InvalidInput
from memroute.models.wire import to_wire


@click.group()
def keys() -> None:
    """Client API keys (the key's id owns its memories)."""


@keys.command("create")
@click.argument("name")
@click.pass_context
def keys_create(ctx: click.Context, name: str) -> None:
    """Create a key and print its secret once (only its SHA-256 is stored)."""
    with memory_for(ctx) as mem:
        key, secret = mem.keys.create(name)
    print_json({**to_wire(key), "secret": secret})
    click.echo("Store the secret now: it cannot be shown again.", err=True)


@keys.command("list")
@click.pass_context
def keys_list(ctx: click.Context) -> None:
    """List keys (never their secrets)."""
    with memory_for(ctx) as mem:
        print_json([to_wire(k) for k in mem.keys.list()])


@keys.command("revoke")
@click.argument("key_id")
@click.pass_context
def keys_revoke(ctx: click.Context, key_id: str) -> None:
    """Revoke a key: requests with it get 401; its memories stay."""
    with memory_for(ctx) as mem:
        print_json(to_wire(mem.keys.revoke(key_id)))


#: What `keys limits` takes for "the server's default" instead of a number.
DEFAULT_LIMIT = "default"


def _limit(value: str | None, current: int | None, option: str) -> int | None:
    """An option of `keys limits`: absent keeps `current`, "default" clears it."""
    if value is None:
        return current
    if value.strip().lower() == DEFAULT_LIMIT:
        return None
    try:
        return int(value)
    except ValueError:
        raise InvalidInput(f"must be an integer or '{DEFAULT_LIMIT}', got {value!r}", option) from None


@keys.command("limits")
@click.argument("key_id")
@click.option("--max-concurrent", default=None, help="Upstream calls at once (>= 1), or 'default'.")
@click.option("--rpm", default=None, help="Requests a minute (0: no limit), or 'default'.")
@click.option(
    "--require-user-id/--no-require-user-id",
    default=None,
    help="Whether a request must name an end user (x-memroute-user-id, user, safety_identifier or"
    " metadata.user_id) to get memory.",
)
@click.pass_context
def keys_limits(
    ctx: click.Context, key_id: str, max_concurrent: str | None, rpm: str | None, require_user_id: bool | None
) -> None:
    """Show or set a key's own gateway settings: its limits ('default' gives it the server's
    default, MEMROUTE_KEY_MAX_CONCURRENT or MEMROUTE_KEY_RPM, again) and whether its requests
    must name an end user. A running server applies a change from the key's next request."""
    with memory_for(ctx) as mem:
        key = mem.keys.get(key_id)
        if max_concurrent is not None or rpm is not None or require_user_id is not None:
            key = mem.keys.set_limits(
                key_id,
                max_concurrent=_limit(max_concurrent, key.max_concurrent, "--max-concurrent"),
                requests_per_minute=_limit(rpm, key.requests_per_minute, "--rpm"),
                requires_user_id=require_user_id,
            )
        print_json(to_wire(key))


@click.group()
def providers() -> None:
    """Upstream LLM providers (`provider/model` routes to a provider)."""


@providers.command("add")
@click.argument("provider_id")
@click.option("--base-url", required=True, help="OpenAI-compatible base URL, e.g. https://api.openai.com/v1")
@click.option(
    "--api-key-env",
    default=None,
    help="Name of the environment variable holding the API key: upper case, ending in _API_KEY, _KEY"
    " or _TOKEN, not MEMROUTE_*, MEMORY_*, VECTOR_STORE_* or QDRANT_*.",
)
@click.option("--api-key-stdin", is_flag=True, help="Read an API key to store from stdin (never echoed).")
@click.option("--default", "is_default", is_flag=True, help="Send models without a provider prefix here.")
@click.option(
    "--format",
    "wire_format",
    type=click.Choice(["openai", "anthropic"]),
    default=None,
    help="The wire format it speaks: openai (/v1/chat/completions, /v1/responses; a new provider's"
    " default) or anthropic (/v1/messages, e.g. --base-url https://api.anthropic.com/v1).",
)
@click.pass_context
def providers_add(
    ctx: click.Context,
    provider_id: str,
    base_url: str,
    api_key_env: str | None,
    api_key_stdin: bool,
    is_default: bool,
    wire_format: str | None,
) -> None:
    """Add or replace a provider. Secrets are only ever shown masked."""
    secret = sys.stdin.readline().strip() if api_key_stdin else None
    with memory_for(ctx) as mem:
        record = mem.providers.add(
            provider_id,
            base_url,
            api_key_env=api_key_env,
            api_key=secret,
            default=is_default,
            format=wire_format,
        )
        print_json(to_wire(record))


@providers.command("list")
@click.pass_context
def providers_list(ctx: click.Context) -> None:
    """List providers (secrets masked)."""
    with memory_for(ctx) as mem:
        print_json([to_wire(p) for p in mem.providers.list()])


@providers.command("remove")
@click.argument("provider_id")
@click.pass_context
def providers_remove(ctx: click.Context, provider_id: str) -> None:
    """Remove a provider."""
    with memory_for(ctx) as mem:
        mem.providers.remove(provider_id)
    click.echo(f"removed {provider_id}")


@click.group("settings")
def settings_group() -> None:
    """Show or change memory settings."""


@settings_group.command("get")
@click.pass_context
def settings_get(ctx: click.Context) -> None:
    """Print the memory settings."""
    with memory_for(ctx) as mem:
        print_json(to_wire(mem.settings()))


@settings_group.command("set")
@click.argument("assignments", nargs=-1, required=True)
@click.pass_context
def settings_set(ctx: click.Context, assignments: tuple[str, ...]) -> None:
    """Change settings: NAME=VALUE ..., values in JSON (e.g. enabled=true maxTokens=1500)."""
    changes: dict[str, Any] = {}
    with cli_errors():
        for assignment in assignments:
            name, sep, raw = assignment.partition("=")
            if not sep or not name:
                raise InvalidInput(f"expected NAME=VALUE, got {assignment!r}")
            try:
                changes[name] = json.loads(raw)
            except ValueError:
                changes[name] = raw  # a bare word such as hybrid
    with memory_for(ctx) as mem:
        print_json(to_wire(mem.update_settings(changes)))


@click.command("dashboard-link")
@click.option("--url", default=None, help="The server's base URL (default: MEMROUTE_HOST and MEMROUTE_PORT).")
@click.pass_context
def dashboard_link(ctx: click.Context, url: str | None) -> None:
    """Print a one-time dashboard login link (valid 5 minutes). It is written straight into
    the database, so it works without the admin token and while wrong tokens have closed
    the login throttle."""
    base = (url or local_url(config_of(ctx))).rstrip("/")
    with memory_for(ctx) as mem:
        code, expires = mem.sessions.open_login_link()
    click.echo(f"{base}/dashboard/login/link?code={code}")
    click.echo(f"Open it in a browser before {expires}; it works once.", err=True)


def local_url(config: Config) -> str:
    """The URL of this machine's server: a wildcard bind address becomes loopback."""
    host = {"0.0.0.0": "127.0.0.1", "::": "::1", "": "127.0.0.1"}.get(config.host, config.host)
    shown = f"[{host}]" if ":" in host else host
    return f"http://{shown}:{config.port}"
