"""The `memroute` command line. Errors print one line to stderr; bad input exits 2."""

from __future__ import annotations

import json
import sys
import tempfile
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any, TypeVar

import click

from memroute.config import Config
from memroute.errors import InvalidInput, MemrouteError, NotFound
from memroute.models.records import MEMORY_TYPES
from memroute.models.wire import to_wire

F = TypeVar("F", bound=Callable[..., Any])


def _config(ctx: click.Context) -> Config:
    db, data_dir = ctx.obj["db"], ctx.obj["data_dir"]
    if db:
        return Config.for_path(db)
    return Config.from_env(data_dir=data_dir)


@contextmanager
def _memory(ctx: click.Context) -> Iterator[Any]:
    from memroute.service import Memory  # imported here so `memroute --help` stays instant

    with _errors():
        mem = Memory.open(config=_config(ctx), start_workers=False)
        try:
            yield mem
        finally:
            mem.close()


@contextmanager
def _errors() -> Iterator[None]:
    try:
        yield
    except InvalidInput as exc:
        click.echo(f"error: {exc.message}", err=True)
        sys.exit(2)
    except NotFound as exc:
        click.echo(f"error: {exc.message}", err=True)
        sys.exit(1)
    except MemrouteError as exc:
        click.echo(f"error: {exc.message}", err=True)
        sys.exit(1)


def _json(value: Any) -> None:
    click.echo(json.dumps(value, indent=2, ensure_ascii=False))


def _json_option(name: str, value: str | None) -> Any:
    if value is None:
        return None
    try:
        return json.loads(value)
    except json.JSONDecodeError as exc:
        raise InvalidInput(f"is not valid JSON ({exc.msg})", name) from None


api_key_option = click.option("--api-key-id", "-k", "api_key_id", help="Owner id (the API key's id).")


@click.group()
@click.option(
    "--db",
    type=click.Path(dir_okay=False),
    envvar="MEMROUTE_DB",
    help="Database file (default: $MEMROUTE_DATA_DIR/memroute.db).",
)
@click.option(
    "--data-dir",
    type=click.Path(file_okay=False),
    default=None,
    help="Data directory (default: $MEMROUTE_DATA_DIR or ~/.memroute).",
)
@click.version_option(package_name="memroute")
@click.pass_context
def main(ctx: click.Context, db: str | None, data_dir: str | None) -> None:
    """memroute: persistent per-API-key memory for OpenAI-compatible LLM clients."""
    ctx.ensure_object(dict)
    ctx.obj.update(db=db, data_dir=data_dir)


# -- memory ------------------------------------------------------------------


@main.group()
def memory() -> None:
    """Add, find, inspect, export and import memories."""


@memory.command("add")
@api_key_option
@click.option("--content", "-c", required=True, help="The memory text.")
@click.option("--key", default="", help="Upsert key, e.g. preference:editor (same key replaces).")
@click.option("--type", "type_", type=click.Choice(MEMORY_TYPES), default="factual", show_default=True)
@click.option("--session-id", default="")
@click.option("--metadata", default=None, help="A JSON object.")
@click.option("--expires-at", default=None, help="ISO-8601 timestamp.")
@click.pass_context
def memory_add(
    ctx: click.Context,
    api_key_id: str | None,
    content: str,
    key: str,
    type_: str,
    session_id: str,
    metadata: str | None,
    expires_at: str | None,
) -> None:
    """Store a memory (upsert by key) and print it."""
    with _memory(ctx) as mem:
        stored = mem.add(
            api_key_id or "",
            content,
            key=key,
            type=type_,
            session_id=session_id,
            metadata=_json_option("metadata", metadata),
            expires_at=expires_at,
            actor="cli",
        )
        _json(to_wire(stored))


@memory.command("remember")
@api_key_option
@click.argument("text")
@click.option("--session-id", default="")
@click.option("--source", type=click.Choice(["user_message", "llm_response"]), default="user_message")
@click.pass_context
def memory_remember(
    ctx: click.Context, api_key_id: str | None, text: str, session_id: str, source: str
) -> None:
    """Extract facts from TEXT and store them."""
    with _memory(ctx) as mem:
        stored = mem.remember(api_key_id or "", text, session_id, source)
        _json([to_wire(m) for m in stored])


@memory.command("list")
@api_key_option
@click.option("--type", "type_", type=click.Choice(MEMORY_TYPES), default=None)
@click.option("--session-id", default=None)
@click.option("--q", default=None, help="Case-insensitive text filter.")
@click.option("--limit", default=50, show_default=True, type=int)
@click.option("--page", default=1, show_default=True, type=int)
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
@click.pass_context
def memory_list(
    ctx: click.Context,
    api_key_id: str | None,
    type_: str | None,
    session_id: str | None,
    q: str | None,
    limit: int,
    page: int,
    as_json: bool,
) -> None:
    """List memories, newest first (every key unless --api-key-id)."""
    with _memory(ctx) as mem:
        result = mem.list(api_key_id, type_, session_id, q, limit, page)
        if as_json:
            _json(
                {
                    "data": [to_wire(m) for m in result.items],
                    "total": result.total,
                    "page": result.page,
                    "limit": result.limit,
                    "totalPages": result.total_pages,
                }
            )
            return
        for m in result.items:
            click.echo(f"{m.id}  {m.api_key_id or '-':<12} {m.type:<10} {m.key or '-':<32} {m.content[:80]}")
        click.echo(f"{result.total} memories, page {result.page} of {max(result.total_pages, 1)}")


@memory.command("search")
@api_key_option
@click.argument("query")
@click.option("--strategy", type=click.Choice(["exact", "semantic", "hybrid"]), default=None)
@click.option("--max-tokens", type=int, default=None)
@click.option(
    "--scope",
    type=click.Choice(["apiKey", "session", "global"]),
    default=None,
    help="apiKey (the default with -k), session, or global (the default without -k).",
)
@click.option("--session-id", default=None)
@click.pass_context
def memory_search(
    ctx: click.Context,
    api_key_id: str | None,
    query: str,
    strategy: str | None,
    max_tokens: int | None,
    scope: str | None,
    session_id: str | None,
) -> None:
    """Retrieve what would be injected for QUERY (ranked, within the token budget);
    every key's memories unless --api-key-id."""
    with _errors():
        if api_key_id is None and scope in ("apiKey", "session"):
            raise InvalidInput(f"--scope {scope} needs --api-key-id (-k)")
    with _memory(ctx) as mem:
        items = mem.retrieve(
            api_key_id or "",
            query,
            strategy,
            max_tokens,
            scope or ("apiKey" if api_key_id is not None else "global"),
            session_id,
            record_access=False,
        )
    if api_key_id is None:
        click.echo("searched every key's memories (-k KEY_ID searches one key)", err=True)
    _json([to_wire(item) for item in items])


@memory.command("get")
@click.argument("memory_id")
@click.pass_context
def memory_get(ctx: click.Context, memory_id: str) -> None:
    """Print one memory."""
    with _memory(ctx) as mem:
        found = mem.get(memory_id)
        if found is None:
            raise NotFound(f"memory {memory_id} not found")
        _json(to_wire(found))


@memory.command("delete")
@click.argument("memory_id")
@click.pass_context
def memory_delete(ctx: click.Context, memory_id: str) -> None:
    """Delete one memory (its text stays in history)."""
    with _memory(ctx) as mem:
        if not mem.delete(memory_id, actor="cli"):
            raise NotFound(f"memory {memory_id} not found")
        click.echo(f"deleted {memory_id}")


@memory.command("history")
@click.argument("memory_id")
@click.pass_context
def memory_history(ctx: click.Context, memory_id: str) -> None:
    """Print every change of a memory, oldest first."""
    with _memory(ctx) as mem:
        entries = mem.history(memory_id)
        if not entries:
            raise NotFound(f"no history for memory {memory_id}")
        _json([to_wire(e) for e in entries])


@memory.command("export")
@api_key_option
@click.option(
    "--output",
    "-o",
    type=click.Path(dir_okay=False, writable=True),
    default="-",
    help="File to write (default: stdout).",
)
@click.pass_context
def memory_export(ctx: click.Context, api_key_id: str | None, output: str) -> None:
    """Write memories as JSONL, one per line (every key unless --api-key-id)."""
    with _memory(ctx) as mem, click.open_file(output, "w", encoding="utf-8") as out:
        count = 0
        for record in mem.export(api_key_id):
            out.write(json.dumps(record, ensure_ascii=False) + "\n")
            count += 1
    if output != "-":
        click.echo(f"exported {count} memories to {output}", err=True)


@memory.command("import")
@click.argument("source", type=click.Path(dir_okay=False, allow_dash=True))
@api_key_option
@click.pass_context
def memory_import(ctx: click.Context, source: str, api_key_id: str | None) -> None:
    """Upsert memories from a JSONL file (or a JSON array); reports what happened.

    Exits 2 when some lines were rejected (the good lines are still imported)."""
    with _errors():
        try:
            with click.open_file(source, "r", encoding="utf-8") as handle:
                text = handle.read()
        except OSError as exc:
            raise InvalidInput(f"cannot read {source}: {exc.strerror}") from None
    from memroute.memory.portability import json_lines

    records: list[Any] = json_lines(text)
    if text.lstrip().startswith("["):
        try:
            records = json.loads(text)
        except json.JSONDecodeError as exc:
            with _errors():
                raise InvalidInput(f"not a valid JSON array ({exc.msg})") from None
        except RecursionError:
            with _errors():
                raise InvalidInput("not a valid JSON array (nested too deeply)") from None
    with _memory(ctx) as mem:
        report = mem.import_(records, actor="cli", api_key_id=api_key_id)
    _json(to_wire(report))
    if report.errors:
        sys.exit(2)


# -- keys and providers -------------------------------------------------------------


@main.group()
def keys() -> None:
    """Client API keys (the key's id owns its memories)."""


@keys.command("create")
@click.argument("name")
@click.pass_context
def keys_create(ctx: click.Context, name: str) -> None:
    """Create a key and print its secret once (only its SHA-256 is stored)."""
    with _memory(ctx) as mem:
        key, secret = mem.keys.create(name)
    _json({**to_wire(key), "secret": secret})
    click.echo("Store the secret now: it cannot be shown again.", err=True)


@keys.command("list")
@click.pass_context
def keys_list(ctx: click.Context) -> None:
    """List keys (never their secrets)."""
    with _memory(ctx) as mem:
        _json([to_wire(k) for k in mem.keys.list()])


@keys.command("revoke")
@click.argument("key_id")
@click.pass_context
def keys_revoke(ctx: click.Context, key_id: str) -> None:
    """Revoke a key: requests with it get 401; its memories stay."""
    with _memory(ctx) as mem:
        _json(to_wire(mem.keys.revoke(key_id)))


@main.group()
def providers() -> None:
    """Upstream LLM providers (`provider/model` routes to a provider)."""


@providers.command("add")
@click.argument("provider_id")
@click.option("--base-url", required=True, help="OpenAI-compatible base URL, e.g. https://api.openai.com/v1")
@click.option("--api-key-env", default=None, help="Name of the environment variable holding the API key.")
@click.option("--api-key-stdin", is_flag=True, help="Read an API key to store from stdin (never echoed).")
@click.option("--default", "is_default", is_flag=True, help="Send models without a provider prefix here.")
@click.pass_context
def providers_add(
    ctx: click.Context,
    provider_id: str,
    base_url: str,
    api_key_env: str | None,
    api_key_stdin: bool,
    is_default: bool,
) -> None:
    """Add or replace a provider. Secrets are only ever shown masked."""
    secret = sys.stdin.readline().strip() if api_key_stdin else None
    with _memory(ctx) as mem:
        record = mem.providers.add(
            provider_id, base_url, api_key_env=api_key_env, api_key=secret, default=is_default
        )
        _json(to_wire(record))


@providers.command("list")
@click.pass_context
def providers_list(ctx: click.Context) -> None:
    """List providers (secrets masked)."""
    with _memory(ctx) as mem:
        _json([to_wire(p) for p in mem.providers.list()])


@providers.command("remove")
@click.argument("provider_id")
@click.pass_context
def providers_remove(ctx: click.Context, provider_id: str) -> None:
    """Remove a provider."""
    with _memory(ctx) as mem:
        mem.providers.remove(provider_id)
    click.echo(f"removed {provider_id}")


# -- settings, maintenance ---------------------------------------------------------


@main.group("settings")
def settings_group() -> None:
    """Show or change memory settings."""


@settings_group.command("get")
@click.pass_context
def settings_get(ctx: click.Context) -> None:
    """Print the memory settings."""
    with _memory(ctx) as mem:
        _json(to_wire(mem.settings()))


@settings_group.command("set")
@click.argument("assignments", nargs=-1, required=True)
@click.pass_context
def settings_set(ctx: click.Context, assignments: tuple[str, ...]) -> None:
    """Change settings: NAME=VALUE ..., values in JSON (e.g. enabled=true maxTokens=1500)."""
    changes: dict[str, Any] = {}
    with _errors():
        for assignment in assignments:
            name, sep, raw = assignment.partition("=")
            if not sep or not name:
                raise InvalidInput(f"expected NAME=VALUE, got {assignment!r}")
            try:
                changes[name] = json.loads(raw)
            except ValueError:
                changes[name] = raw  # a bare word such as hybrid
    with _memory(ctx) as mem:
        _json(to_wire(mem.update_settings(changes)))


@main.command()
@click.option("--older-than-days", type=int, default=30, show_default=True)
@api_key_option
@click.option("--all-keys", is_flag=True, help="Summarise every key (one summary per key).")
@click.option("--dry-run", is_flag=True, help="Only list what would be compacted.")
@click.pass_context
def summarize(
    ctx: click.Context, older_than_days: int, api_key_id: str | None, all_keys: bool, dry_run: bool
) -> None:
    """Compact old memories into one summary memory per key."""
    with _memory(ctx) as mem:
        report = mem.summarize(older_than_days, api_key_id, all_keys=all_keys, dry_run=dry_run)
        _json({**to_wire(report), "candidates": [c.id for c in report.candidates]})


@main.command()
@click.option("--dry-run", is_flag=True, help="Only report what would decay.")
@api_key_option
@click.pass_context
def decay(ctx: click.Context, dry_run: bool, api_key_id: str | None) -> None:
    """Delete decayed episodic memories (needs MEMORY_TYPED_DECAY_ENABLED=true)."""
    with _memory(ctx) as mem:
        _json(to_wire(mem.decay(dry_run=dry_run, api_key_id=api_key_id)))


@main.command()
@click.option("--force", is_flag=True, help="Re-embed every memory, not only those waiting for a vector.")
@click.pass_context
def reindex(ctx: click.Context, force: bool) -> None:
    """Embed memories waiting for a vector with the configured embedding source, to the end."""
    with _memory(ctx) as mem:
        report = mem.reindex(force=force, wait=True)
        _json(to_wire(report))
        if not report.started or report.errors:
            ctx.exit(1)


@main.group()
def embeddings() -> None:
    """Local embedding models."""


@embeddings.command("build-static")
@click.option(
    "--dir",
    "target",
    type=click.Path(file_okay=False),
    default=None,
    help="Where to write the model (default: the static model cache dir).",
)
@click.pass_context
def embeddings_build_static(ctx: click.Context, target: str | None) -> None:
    """Distil a static (Model2Vec) model from the bundled MiniLM, offline (~20 s)."""
    from memroute.embeddings import DISTILLED_STATIC_NAME, build_static_model, static_cache_dir

    config = _config(ctx)
    folder = Path(target) if target else static_cache_dir(config) / DISTILLED_STATIC_NAME
    with _errors():
        path = build_static_model(folder)
    click.echo(f"static model written to {path}")
    click.echo(f"use it with MEMORY_STATIC_MODEL={path} (or leave the default: it is found there)")


@main.command("mcp")
@click.pass_context
def mcp_stdio(ctx: click.Context) -> None:
    """Serve the memory tools over MCP stdio (for Claude Desktop, Cursor, VS Code …)."""
    from memroute.mcp.server import build_server
    from memroute.service import Memory

    with _errors():
        mem = Memory.open(config=_config(ctx))
    try:
        build_server(lambda: mem).run()  # stdio; logs go to stderr, stdout is the protocol
    finally:
        mem.close()


@main.command()
@click.pass_context
def health(ctx: click.Context) -> None:
    """Run the memory pipeline on a private owner id; exit 1 if it is broken."""
    with _memory(ctx) as mem:
        report = mem.verify()
    _json(to_wire(report))
    if not report.working:
        sys.exit(1)


@main.command()
@click.pass_context
def doctor(ctx: click.Context) -> None:
    """Report SQLite, FTS5, extension loading, sqlite-vec and the database in use."""
    from memroute.service.diagnostics import diagnose

    with _errors():
        report = diagnose(_config(ctx))
    for name, value in report.items():
        click.echo(f"{name:<22} {value}")


@main.command()
@click.option(
    "--keep",
    type=click.Path(file_okay=False),
    default=None,
    help="Keep the demo's data in this folder (default: a temporary folder).",
)
def demo(keep: str | None) -> None:
    """A scripted conversation through the gateway and a built-in echo upstream:
    facts are learned, then injected into the next request."""
    from memroute.cli.demo import run_demo

    with _errors():
        if keep:
            run_demo(Path(keep), click.echo)
            return
        with tempfile.TemporaryDirectory() as tmp:
            run_demo(Path(tmp), click.echo)


@main.command()
@click.option("--host", default=None, help="Interface to bind (default 127.0.0.1, or MEMROUTE_HOST).")
@click.option("--port", type=int, default=None, help="Port (default 20128, or MEMROUTE_PORT).")
@click.option("--db", "serve_db", type=click.Path(dir_okay=False), default=None, help="Database file.")
@click.pass_context
def serve(ctx: click.Context, host: str | None, port: int | None, serve_db: str | None) -> None:
    """Run the gateway and the management API."""
    import uvicorn

    from memroute.cli.banner import StartState, banner, self_command
    from memroute.web.app import create_app
    from memroute.web.serve import free_port

    if serve_db:
        ctx.obj["db"] = serve_db
    with _errors():
        config = _config(ctx)
        config = config.with_overrides(host=host or config.host, port=config.port if port is None else port)
        if config.port == 0:  # any free port: chosen here, so the banner can name it
            config = config.with_overrides(port=free_port(config.host))
        app = create_app(config)
    with _memory(ctx) as mem:
        memory_enabled = mem.settings().enabled
    state = StartState(
        admin_token=app.state.admin_token,
        token_created=app.state.admin_token_created,
        memory_enabled=memory_enabled,
        command=self_command(sys.argv[0], sys.executable),
    )
    for line in banner(config, state):
        click.echo(line)
    # Idle client connections stay open 30 s: clients such as the openai SDK keep theirs for
    # 5 s, and with the same 5 s on both sides a reused connection can be closed under them.
    uvicorn.run(app, host=config.host, port=config.port, log_level="info", timeout_keep_alive=30)
