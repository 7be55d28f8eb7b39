"""`memroute memory …`: add, find, inspect, export and import memories."""

from __future__ import annotations

import json
import sys
from typing import Any

import click

from memroute.cli.common import (
    api_key_option,
    cli_errors,
    json_option,
    memory_for,
    owner_option_value,
    print_json,
    user_option,
)
from memroute.errors import InvalidInput, NotFound
from memroute.models.records import MEMORY_TYPES
from memroute.models.wire import to_wire


@click.group()
def memory() -> None:
    """Add, find, inspect, export and import memories."""


@memory.command("add")
@api_key_option
@user_option
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
    user_id: str | None,
    content: str,
    key: str,
    type_: str,
    session_id: str,
    metadata: str | None,
    expires_at: str | None,
) -> None:
    """Store a memory (upsert by key) and print it."""
    with memory_for(ctx) as mem:
        stored = mem.add(
            owner_option_value(api_key_id, user_id),
            content,
            key=key,
            type=type_,
            session_id=session_id,
            metadata=json_option("metadata", metadata),
            expires_at=expires_at,
            actor="cli",
        )
        print_json(to_wire(stored))


@memory.command("remember")
@api_key_option
@user_option
@click.argument("text")
@click.option("--session-id", default="")
@click.option("--source", type=click.Choice(["user_message", "llm_response"]), default="user_message")
@click.pass_context
def memory_remember(
    ctx: click.Context, api_key_id: str | None, user_id: str | None, text: str, session_id: str, source: str
) -> None:
    """Extract facts from TEXT and store them."""
    with memory_for(ctx) as mem:
        stored = mem.remember(owner_option_value(api_key_id, user_id), text, session_id, source)
        print_json([to_wire(m) for m in stored])


@memory.command("list")
@api_key_option
@user_option
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
    user_id: str | None,
    type_: str | None,
    session_id: str | None,
    q: str | None,
    limit: int,
    page: int,
    as_json: bool,
) -> None:
    """List memories, newest first (every key unless --api-key-id; a key's with its end
    users' unless --user-id, "" for the key's own)."""
    with memory_for(ctx) as mem:
        result = mem.list(api_key_id, type_, session_id, q, limit, page, user_id=user_id)
        if as_json:
            print_json(
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
            owner = f"{m.key_id}/{m.user_id}" if m.user_id else m.key_id or "-"
            click.echo(f"{m.id}  {owner:<12} {m.type:<10} {m.key or '-':<32} {m.content[:80]}")
        click.echo(f"{result.total} memories, page {result.page} of {max(result.total_pages, 1)}")


@memory.command("search")
@api_key_option
@user_option
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
    user_id: str | None,
    query: str,
    strategy: str | None,
    max_tokens: int | None,
    scope: str | None,
    session_id: str | None,
) -> None:
    """Retrieve what would be injected for QUERY (ranked, within the token budget);
    every key's memories unless --api-key-id."""
    with cli_errors():
        if api_key_id is None and scope in ("apiKey", "session"):
            raise InvalidInput(f"--scope {scope} needs --api-key-id (-k)")
    with memory_for(ctx) as mem:
        items = mem.retrieve(
            owner_option_value(api_key_id, user_id),
            query,
            strategy,
            max_tokens,
            scope or ("apiKey" if api_key_id is not None else "global"),
            session_id,
            record_access=False,
        )
    if api_key_id is None:
        click.echo("searched every key's memories (-k KEY_ID searches one key)", err=True)
    print_json([to_wire(item) for item in items])


@memory.command("get")
@click.argument("memory_id")
@click.pass_context
def memory_get(ctx: click.Context, memory_id: str) -> None:
    """Print one memory (JSON), and where it came from ("learned from request … at …")
    on stderr when its metadata says."""
    with memory_for(ctx) as mem:
        found = mem.get(memory_id)
        if found is None:
            raise NotFound(f"memory {memory_id} not found")
        print_json(to_wire(found))
        if found.provenance is not None:
            click.echo(found.provenance.summary, err=True)


@memory.command("delete")
@click.argument("memory_id")
@click.pass_context
def memory_delete(ctx: click.Context, memory_id: str) -> None:
    """Delete one memory (its text stays in history)."""
    with memory_for(ctx) as mem:
        if not mem.delete(memory_id, actor="cli"):
            raise NotFound(f"memory {memory_id} not found")
        click.echo(f"deleted {memory_id}")


@memory.command("history")
@click.argument("memory_id")
@click.pass_context
def memory_history(ctx: click.Context, memory_id: str) -> None:
    """Print every change of a memory, oldest first."""
    with memory_for(ctx) as mem:
        entries = mem.history(memory_id)
        if not entries:
            raise NotFound(f"no history for memory {memory_id}")
        print_json([to_wire(e) for e in entries])


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
    with memory_for(ctx) as mem, click.open_file(output, "w", encoding="utf-8") as out:
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
    with cli_errors():
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
            with cli_errors():
                raise InvalidInput(f"not a valid JSON array ({exc.msg})") from None
        except RecursionError:
            with cli_errors():
                raise InvalidInput("not a valid JSON array (nested too deeply)") from None
    with memory_for(ctx) as mem:
        report = mem.import_(records, actor="cli", api_key_id=api_key_id)
    print_json(to_wire(report))
    if report.errors:
        sys.exit(2)
