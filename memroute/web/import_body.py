"""The body of `POST /api/memory/import`, read as it streams in.

The body is staged in a temporary file (in memory up to `SPOOL_BYTES`, then on disk),
checked on the way: valid UTF-8, and JSON Lines whose every line, or a JSON array
that as a whole, is within the ordinary body limit (`MEMROUTE_MAX_BODY_BYTES`). Only
a body received completely and passing these checks is imported, so an upload that is
cut off, too large or not UTF-8 writes nothing. The total is capped by the
BodyLimit middleware (`MEMROUTE_MAX_IMPORT_BYTES`).
"""

from __future__ import annotations

import codecs
import json
import tempfile
from collections.abc import Iterator
from typing import IO, Any

import anyio
from starlette.exceptions import HTTPException
from starlette.requests import ClientDisconnect, Request

from memroute.errors import InvalidInput
from memroute.memory.portability import file_lines

SPOOL_BYTES = 1024 * 1024  # kept in memory up to this size, then in a temporary file
FEED_BYTES = 1024 * 1024  # received chunks are handed to the worker thread this many at a time
EMPTY = "the body is empty: send JSON Lines (one memory per line) or a JSON array"
_BLANK = b" \t\r\n"


class StagedImport:
    """A body being received: `feed` it chunks, then `finish`; `records()` reads it back."""

    def __init__(self, record_limit: int) -> None:
        self.record_limit = record_limit
        self.file: IO[bytes] = tempfile.SpooledTemporaryFile(max_size=SPOOL_BYTES)  # noqa: SIM115 - closed by close()
        self.size = 0
        self.array: bool | None = None  # None until the first byte that is not blank
        self._utf8 = codecs.getincrementaldecoder("utf-8-sig")()
        self._lines = 0  # complete lines so far
        self._line_bytes = 0  # bytes of the line being received

    def feed(self, chunk: bytes) -> None:
        try:
            self._utf8.decode(chunk)
        except UnicodeDecodeError:
            raise InvalidInput("the body must be UTF-8 text") from None
        if self.array is None:
            start = (chunk.removeprefix(codecs.BOM_UTF8) if self.size == 0 else chunk).lstrip(_BLANK)
            if start:
                self.array = start.startswith(b"[")
        self.size += len(chunk)
        if self.array:
            if self.size > self.record_limit:
                raise HTTPException(
                    413,
                    f"a JSON array is read whole and may be at most {self.record_limit} bytes; send JSON"
                    " Lines (one memory per line, as the export writes them) for a larger import",
                )
        else:
            self._count_lines(chunk)
        self.file.write(chunk)

    def _count_lines(self, chunk: bytes) -> None:
        """Refuse a line over the record limit as soon as it is seen."""
        first = chunk.find(b"\n")
        if first < 0:
            self._check_line(self._lines + 1, self._line_bytes + len(chunk))
            self._line_bytes += len(chunk)
            return
        self._check_line(self._lines + 1, self._line_bytes + first)
        if len(chunk) > self.record_limit:  # a whole line may lie inside this chunk
            for offset, segment in enumerate(chunk.split(b"\n")[1:-1], start=2):
                self._check_line(self._lines + offset, len(segment))
        self._lines += chunk.count(b"\n")
        self._line_bytes = len(chunk) - chunk.rfind(b"\n") - 1
        self._check_line(self._lines + 1, self._line_bytes)

    def _check_line(self, number: int, size: int) -> None:
        if size > self.record_limit:
            raise HTTPException(
                413,
                f"line {number} is longer than {self.record_limit} bytes (MEMROUTE_MAX_BODY_BYTES):"
                " send one memory per line",
            )

    def finish(self) -> None:
        try:
            self._utf8.decode(b"", final=True)
        except UnicodeDecodeError:
            raise InvalidInput("the body must be UTF-8 text") from None
        if self.array is None:
            raise InvalidInput(EMPTY)
        self.file.seek(0)

    def records(self) -> Iterator[str] | list[Any]:
        """The JSON Lines one at a time, or the records of the JSON array."""
        if not self.array:
            return file_lines(self.file)
        try:
            parsed = json.loads(self.file.read().decode("utf-8-sig"))
        except json.JSONDecodeError as exc:
            raise InvalidInput(
                f"Invalid JSON body: {exc.msg} (line {exc.lineno} column {exc.colno})"
            ) from None
        except RecursionError:
            raise InvalidInput("Invalid JSON body: arrays or objects are nested too deeply") from None
        # A string in an array is a wrong record, not JSON text to parse again: wrap it so the
        # importer reports it as "must be a JSON object".
        return [(item,) if isinstance(item, str) else item for item in parsed]

    def close(self) -> None:
        self.file.close()


async def receive_import(request: Request, record_limit: int) -> StagedImport:
    """Receive the whole body into a StagedImport (the caller closes it). Raises
    InvalidInput (400) or HTTPException (413) with nothing written."""
    staged = StagedImport(record_limit)
    pending = bytearray()
    try:
        async for chunk in request.stream():
            pending += chunk
            if len(pending) >= FEED_BYTES:
                await anyio.to_thread.run_sync(staged.feed, bytes(pending))
                pending.clear()
        await anyio.to_thread.run_sync(staged.feed, bytes(pending))
        staged.finish()
    except ClientDisconnect:
        staged.close()
        raise InvalidInput("the upload was cut off before its end: nothing was imported") from None
    except BaseException:
        staged.close()
        raise
    return staged
