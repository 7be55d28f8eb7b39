"""`memroute summarize|decay|reindex|embeddings|health|doctor`: keeping the memory in shape."""

from __future__ import annotations

import sys
from pathlib import Path

import click

from memroute.cli.common import api_key_option, cli_errors, config_of, memory_for, print_json
from memroute.models.wire import to_wire


@click.command()
@click.option("--older-than-days", type=int, default=30, show_default=True)
@api_key_option
@click.option("--all-keys", is_flag=True, help="Summarise every key (each into its own summaries).")
@click.option("--dry-run", is_flag=True, help="Only list what would be compacted.")
@click.pass_context
def summarize(
    ctx: click.Context, older_than_days: int, api_key_id: str | None, all_keys: bool, dry_run: bool
) -> None:
    """Compact old memories into summary memories per key (several when they do not fit in one)."""
    with memory_for(ctx) as mem:
        report = mem.summarize(older_than_days, api_key_id, all_keys=all_keys, dry_run=dry_run)
        print_json({**to_wire(report), "candidates": [c.id for c in report.candidates]})


@click.command()
@click.option("--dry-run", is_flag=True, help="Only report what would decay.")
@api_key_option
@click.pass_context
def decay(ctx: click.Context, dry_run: bool, api_key_id: str | None) -> None:
    """Delete decayed episodic memories (needs MEMORY_TYPED_DECAY_ENABLED=true)."""
    with memory_for(ctx) as mem:
        print_json(to_wire(mem.decay(dry_run=dry_run, api_key_id=api_key_id)))


@click.command()
@click.option("--force", is_flag=True, help="Re-embed every memory, not only those waiting for a vector.")
@click.pass_context
def reindex(ctx: click.Context, force: bool) -> None:
    """Embed memories waiting for a vector with the configured embedding source, to the end."""
    with memory_for(ctx) as mem:
        report = mem.reindex(force=force, wait=True)
        print_json(to_wire(report))
        if not report.started or report.errors:
            ctx.exit(1)


@click.group()
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

    config = config_of(ctx)
    folder = Path(target) if target else static_cache_dir(config) / DISTILLED_STATIC_NAME
    with cli_errors():
        path = build_static_model(folder)
    click.echo(f"static model written to {path}")
    click.echo(f"use it with MEMORY_STATIC_MODEL={path} (or leave the default: it is found there)")


@click.command()
@click.pass_context
def health(ctx: click.Context) -> None:
    """Run the memory pipeline on a private owner id; exit 1 if it is broken."""
    with memory_for(ctx) as mem:
        report = mem.verify()
    print_json(to_wire(report))
    if not report.working:
        sys.exit(1)


@click.command()
@click.pass_context
def doctor(ctx: click.Context) -> None:
    """Report SQLite, FTS5, extension loading, sqlite-vec and the database in use."""
    from memroute.service.diagnostics import diagnose

    with cli_errors():
        report = diagnose(config_of(ctx))
    for name, value in report.items():
        click.echo(f"{name:<22} {value}")
