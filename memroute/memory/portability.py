"""Export and import of memories (JSONL lines or dicts), used by the library, CLI and REST API.

An import upserts record by record: a bad record is reported with its line
number and skipped, and every good one is kept. A record whose id is already
this owner's updates that memory; otherwise it upserts by key. Re-importing an
export changes nothing (identical memories are counted as skipped).

Records are read as they come and written in batches of `BATCH_RECORDS`, one
transaction each, so an import of any size holds neither all its records in memory
nor the write lock for long.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Iterator, Mapping
from typing import IO, Any

from memroute.clock import normalize_time
from memroute.errors import Conflict, InvalidInput
from memroute.memory import validate
from memroute.models.owners import owner_of
from memroute.models.records import ImportFailure, ImportReport
from memroute.store import NewMemory, Store

BATCH_RECORDS = 500


def json_lines(text: str) -> list[str]:
    """The lines of a JSON Lines text: split at "\n" (and "\r\n") only. `str.splitlines`
    would also split inside a string at U+2028, U+0085 or U+001C, which JSON leaves as they are."""
    return [line.removesuffix("\r") for line in text.split("\n")]


def file_lines(handle: IO[bytes]) -> Iterator[str]:
    """The lines of a JSON Lines file of valid UTF-8, one at a time (split at "\n" only, as
    `json_lines`; a byte-order mark at the start is dropped)."""
    for number, raw in enumerate(handle):
        line = raw.decode("utf-8").removesuffix("\n").removesuffix("\r")
        yield line.removeprefix("\ufeff") if number == 0 else line


def parse_record(
    record: str | Mapping[str, Any], api_key_id: str | None, *, content: Callable[[object], str]
) -> NewMemory:
    """A validated memory from one export record (camelCase fields, as `to_wire` of a
    `MemoryRecord`); `content(value)` validates the content (and masks its secrets)."""
    if isinstance(record, str):
        try:
            record = json.loads(record)
        except json.JSONDecodeError as exc:
            raise InvalidInput(f"not valid JSON ({exc.msg})") from None
        except RecursionError:
            raise InvalidInput("not valid JSON (nested too deeply)") from None
    if not isinstance(record, Mapping):
        raise InvalidInput("each record must be a JSON object")
    owner = api_key_id if api_key_id is not None else record.get("apiKeyId", record.get("api_key_id"))
    created = normalize_time(record.get("createdAt"), "createdAt")
    user = validate.end_user(record.get("userId", record.get("user_id")))
    return NewMemory(
        api_key_id=validate.owner(owner_of(validate.owner(owner), user)),
        content=content(record.get("content")),
        key=validate.key(record.get("key")),
        type=validate.memory_type(record.get("type")),
        session_id=validate.session(record.get("sessionId", record.get("session_id"))),
        metadata=validate.metadata(record.get("metadata")),
        expires_at=validate.expires_at(record.get("expiresAt", record.get("expires_at"))),
        created_at=created,
        updated_at=normalize_time(record.get("updatedAt"), "updatedAt") or created,
        id=validate.imported_id(record["id"]) if record.get("id") is not None else None,
    )


def import_records(
    store: Store,
    records: Iterable[str | Mapping[str, Any]],
    *,
    now: Callable[[], str],
    actor: str,
    api_key_id: str | None,
    content: Callable[[object], str],
    admit: Callable[[str, str], None] = lambda owner, key: None,
) -> ImportReport:
    """Upsert `records`; `content(value)` turns a record's content into what is stored
    (validated, secrets masked), as `Memory.add` stores it, and `admit(owner, key)` may
    refuse (Conflict) a new memory, as the per-key cap does. Records are parsed outside
    the write lock and written `BATCH_RECORDS` at a time, each batch in one transaction."""
    report = ImportReport()
    batch: list[tuple[int, NewMemory]] = []
    for number, record in enumerate(records, start=1):
        if isinstance(record, str) and not record.strip():
            continue
        try:
            batch.append((number, parse_record(record, api_key_id, content=content)))
        except InvalidInput as exc:
            report.errors.append(ImportFailure(number, exc.message))
        if len(batch) >= BATCH_RECORDS:
            _write_batch(store, batch, now(), actor, report, admit)
            batch = []
    _write_batch(store, batch, now(), actor, report, admit)
    report.errors.sort(key=lambda failure: failure.line)
    return report


def _write_batch(
    store: Store,
    batch: list[tuple[int, NewMemory]],
    now: str,
    actor: str,
    report: ImportReport,
    admit: Callable[[str, str], None],
) -> None:
    """Upsert a batch of parsed records in one transaction; a record that conflicts is
    reported and leaves nothing behind (each write is a savepoint of its own)."""
    if not batch:
        return
    with store.transaction():
        for number, new in batch:
            try:
                outcome = _import_one(store, new, now, actor, admit)
            except (InvalidInput, Conflict) as exc:
                report.errors.append(ImportFailure(number, exc.message))
                continue
            if outcome == "skipped":
                report.skipped += 1
            else:
                report.imported += 1


def _import_one(store: Store, new: NewMemory, now: str, actor: str, admit: Callable[[str, str], None]) -> str:
    """Upsert one imported memory; "skipped" when an identical one is already there."""
    repo = store.memories
    by_id = repo.get(new.id) if new.id else None
    if by_id is not None and by_id.api_key_id != new.api_key_id:
        new.id, by_id = None, None  # the id belongs to another owner: import as a new memory
    existing = by_id or (repo.get_by_key(new.api_key_id, new.key) if new.key else None)
    if existing is not None and (existing.content, existing.type, existing.key) == (
        new.content,
        new.type,
        new.key,
    ):
        return "skipped"
    if by_id is None:
        admit(new.api_key_id, new.key)
        repo.upsert(new, now=now, actor=actor)
        return "imported"
    changes = {
        "content": new.content,
        "key": new.key,
        "type": new.type,
        "metadata": new.metadata or {},
        "expires_at": new.expires_at,
        "session_id": new.session_id,
    }
    repo.update(by_id.id, changes, now=now, actor=actor)
    return "imported"
