"""`memroute store copy`: moving the SQLite file's memory to PostgreSQL."""

from __future__ import annotations

import click

from memroute.cli.common import cli_errors, print_json


@click.group()
def store() -> None:
    """The store: copy the SQLite file into PostgreSQL (docs/scaling.md)."""


@store.command("copy")
@click.option("--from", "source", required=True, type=click.Path(dir_okay=False), help="The SQLite file.")
@click.option("--to", "target", required=True, help="postgresql://user:password@host/database")
def copy(source: str, target: str) -> None:
    """Copy memories (ids, timestamps, history), keys (hashes), providers, settings and waiting
    jobs; run again to resume a copy that stopped. Ends with each table's counts."""
    from memroute.service.store_copy import copy_sqlite_to_postgres

    def progress(table: str, rows: int) -> None:
        click.echo(f"{table}: {rows} rows copied", err=True)

    with cli_errors():
        report = copy_sqlite_to_postgres(source, target, progress=progress)
        print_json(
            {
                "tables": [
                    {"table": t.name, "copied": t.copied, "source": t.source, "target": t.target}
                    for t in report
                ]
            }
        )
