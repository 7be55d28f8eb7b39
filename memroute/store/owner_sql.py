"""Which memories a read may see, as SQL: one text for both stores, so the owner rules
that keep keys and their end users apart are written once (`MemoryFilter`, and the
listing filters of `page`). A `Dialect` holds what SQLite and PostgreSQL spell apart."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from memroute.models.owners import USER_SEPARATOR, owner_of, users_range
from memroute.models.records import MemoryFilter


@dataclass(frozen=True, slots=True)
class Dialect:
    mark: str  # a parameter's placeholder
    user_at: str  # where the end user's id starts in the owner id of column `{p}api_key_id` (0: none)
    fold: str  # a text column `{}` folded for a case-insensitive search
    fold_param: Callable[[str], str]  # the searched text, folded the same way
    contains: str  # whether text `{0}` holds text `{1}`
    # Before the expiry test: keeps SQLite's planner on the owner/updated_at indexes instead
    # of an OR over expires_at ("+" disqualifies the column from index use).
    no_index: str


SQLITE = Dialect(
    mark="?",
    user_at=f"instr({{p}}api_key_id, char({ord(USER_SEPARATOR)}))",
    fold="mr_fold({})",
    fold_param=str.casefold,
    contains="instr({0}, {1}) > 0",
    no_index="+",
)
POSTGRES = Dialect(
    mark="%s",
    user_at=f"strpos({{p}}api_key_id, chr({ord(USER_SEPARATOR)}))",
    fold="lower({})",
    fold_param=str.lower,
    contains="strpos({0}, {1}) > 0",
    no_index="",
)


def key_and_users(d: Dialect) -> str:
    """A key's own memories and its end users' (parameters: the key, then `users_range(key)`)."""
    return f"(api_key_id = {d.mark} OR (api_key_id >= {d.mark} AND api_key_id < {d.mark}))"


def filter_sql(flt: MemoryFilter, alias: str = "", d: Dialect = SQLITE) -> tuple[str, list[Any]]:
    """The WHERE clause (and its parameters) of what `flt` admits."""
    p = f"{alias}." if alias else ""
    m = d.mark
    clauses = [f"({d.no_index}{p}expires_at IS NULL OR {d.no_index}{p}expires_at > {m})"]
    params: list[Any] = [flt.now]
    if flt.api_key_id is not None:
        clauses.append(f"{p}api_key_id = {m}")
        params.append(flt.api_key_id)
    elif not flt.admin_view:  # a key's global read: every key's own memories
        clauses.append(f"{p}api_key_id <> '' AND {d.user_at.format(p=p)} = 0")
    if flt.session_id:
        clauses.append(f"{p}session_id = {m}")
        params.append(flt.session_id)
    if flt.updated_since:
        clauses.append(f"{p}updated_at >= {m}")
        params.append(flt.updated_since)
    if flt.type:
        clauses.append(f"{p}type = {m}")
        params.append(flt.type)
    return " AND ".join(clauses), params


def page_where(
    d: Dialect,
    *,
    api_key_id: str | None,
    type: str | None,
    session_id: str | None,
    q: str | None,
    user_id: str | None,
) -> tuple[str, list[Any]]:
    """The WHERE clause (empty when nothing is filtered) of a page of memories: of the owner
    `api_key_id` (None: every key); with `user_id` None, also of each end user of that key
    (of every key), with "" the keys' own only, else that end user's only; of a type, a
    session, holding `q` in its content or key (case-insensitive)."""
    m = d.mark
    clauses: list[str] = []
    params: list[Any] = []
    if api_key_id is not None:
        if user_id is None:
            clauses.append(key_and_users(d))
            params += [api_key_id, *users_range(api_key_id)]
        else:
            clauses.append(f"api_key_id = {m}")
            params.append(owner_of(api_key_id, user_id))
    elif user_id == "":
        clauses.append(f"{d.user_at.format(p='')} = 0")
    elif user_id is not None:
        user_at = d.user_at.format(p="")
        clauses.append(f"{user_at} > 0 AND substr(api_key_id, {user_at} + 1) = {m}")
        params.append(user_id)
    if type:
        clauses.append(f"type = {m}")
        params.append(type)
    if session_id:
        clauses.append(f"session_id = {m}")
        params.append(session_id)
    if q and q.strip():
        content, key = d.fold.format("content"), d.fold.format("key")
        clauses.append(f"({d.contains.format(content, m)} OR {d.contains.format(key, m)})")
        folded = d.fold_param(q.strip())
        params += [folded, folded]
    return (f"WHERE {' AND '.join(clauses)}" if clauses else ""), params
