"""What every `memroute` command shares: the database it opens, how errors end it
(one line on stderr; bad input exits 2), JSON output and the owner option."""

from __future__ import annotations

import json
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import click

from memroute.config import Config
from memroute.errors import InvalidInput, MemrouteError, NotFound
from memroute.models.owners import owner_of


def config_of(ctx: click.Context) -> Config:
    db, data_dir = ctx.obj["db"], ctx.obj["data_dir"]
    if db:
        return Config.for_path(db)
    return Config.from_env(data_dir=data_dir)


@contextmanager
def memory_for(ctx: click.Context) -> Iterator[Any]:
    from memroute.service import Memory  # imported here so `memroute --help` stays instant

    with cli_errors():
        mem = Memory.open(config=config_of(ctx), start_workers=False)
        try:
            yield mem
        finally:
            mem.close()


@contextmanager
def cli_errors() -> Iterator[None]:
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


def print_json(value: Any) -> None:
    click.echo(json.dumps(value, indent=2, ensure_ascii=False))


def json_option(name: str, value: str | None) -> Any:
    if value is None:
        return None
    try:
        return json.loads(value)
    except json.JSONDecodeError as exc:
        raise InvalidInput(f"is not valid JSON ({exc.msg})", name) from None


api_key_option = click.option("--api-key-id", "-k", "api_key_id", help="Owner id (the API key's id).")
user_option = click.option(
    "--user-id", "-u", "user_id", default=None, help="An end user of the key: that user's memories alone."
)


def owner_option_value(api_key_id: str | None, user_id: str | None) -> str:
    """The owner of `-k` and `-u`: the key, or its end user."""
    return owner_of(api_key_id or "", user_id or "")
