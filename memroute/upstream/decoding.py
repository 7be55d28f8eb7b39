"""A compressed answer's body decoded as it arrives (gzip and deflate, the encodings the
gateway accepts), a bounded piece at a time so a small compressed body cannot become one
huge piece in memory."""

from __future__ import annotations

import zlib
from collections.abc import Iterator

from memroute.upstream.failures import InvalidAnswer

#: The encodings asked for (`accept-encoding`); an answer in any other is passed on as it is.
ACCEPTED_ENCODINGS = "gzip, deflate"
PIECE_BYTES = 256 * 1024  # the most one decoded piece holds


class BodyDecoder:
    """Decodes one answer's body of the given `content-encoding` (gzip or deflate)."""

    __slots__ = ("_start", "_z")

    def __init__(self, encoding: str) -> None:
        deflate = encoding == "deflate"
        # deflate's first bytes are kept until they tell zlib's header from a raw stream.
        self._start: bytes | None = b"" if deflate else None
        self._z = zlib.decompressobj(zlib.MAX_WBITS | (0 if deflate else 16))

    def decode(self, data: bytes) -> Iterator[bytes]:
        """The decoded pieces of `data`, the next part of the encoded body."""
        if self._start is not None:
            data = self._start + data
            if len(data) < 2:  # zlib's header is two bytes
                self._start = data
                return
            self._start = None
            if (data[0] * 256 + data[1]) % 31 or data[0] & 0x0F != 8:
                self._z = zlib.decompressobj(-zlib.MAX_WBITS)  # some servers send deflate raw
        out = self._decompress(data)
        while True:
            if out:
                yield out
            if not self._z.unconsumed_tail:
                return
            out = self._decompress(self._z.unconsumed_tail)

    def _decompress(self, data: bytes) -> bytes:
        try:
            return self._z.decompress(data, PIECE_BYTES)
        except zlib.error:
            raise InvalidAnswer("the answer's compressed body cannot be decoded") from None


def decoder_for(encoding: str | None) -> BodyDecoder | None:
    """The decoder for a `content-encoding` header's value (None: the body is passed on as it is)."""
    if encoding is None:
        return None
    encoding = encoding.strip().lower()
    return BodyDecoder(encoding) if encoding in ("gzip", "x-gzip", "deflate") else None
