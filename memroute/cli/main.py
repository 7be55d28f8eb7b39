"""The `memroute` command line: the top-level group and its commands, one module per
group of commands."""

from __future__ import annotations

import click

from memroute.cli.admin import dashboard_link, keys, providers, settings_group
from memroute.cli.maintenance import decay, doctor, embeddings, health, reindex, summarize
from memroute.cli.memory import memory
from memroute.cli.run import demo, mcp_stdio, serve
from memroute.cli.store import store


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


for command in (memory, keys, providers, settings_group, summarize, decay, reindex, embeddings):
    main.add_command(command)
for command in (health, doctor, mcp_stdio, demo, serve, dashboard_link, store):
    main.add_command(command)
