"""Vectors of single words, to relate a question's words to the words a key's memories use.

A word's vector is the mean of its WordPiece tokens' rows in the static model distilled
from the bundled MiniLM (`distill.py`), scaled to unit length: "instrument" lies near
"cello" and "banjo", "pet" near "dog", "phone" near "iphone". Only the model's table and
tokenizer are read (about 15 MB), not the model2vec package.

The model is looked for in MEMORY_STATIC_CACHE_DIR (where `memroute embeddings
build-static` and the static source put it), then in the machine's cache
(`$XDG_CACHE_HOME/memroute`, else `~/.cache/memroute`). When neither has it, it is
distilled into the machine's cache once (~15 s of one core) by a background thread;
until then, or when that fails (logged once), no word has a vector and keyword search
uses the question's words alone.
"""

from __future__ import annotations

import json
import logging
import os
import threading
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from memroute.config import Config
from memroute.embeddings.base import FloatMatrix
from memroute.embeddings.static import DISTILLED_STATIC_NAME, is_model_folder
from memroute.masking import scrub

log = logging.getLogger("memroute.embeddings")

TABLE_FILE = "model.safetensors"
TOKENIZER_FILE = "tokenizer.json"
# The rows of the words asked last are kept (1 KB each at 256 dimensions): a question's
# words mostly came up before, and finding a word's tokens is most of what its row costs.
WORDS_KEPT = 4096


def machine_cache_dir() -> Path:
    """`$XDG_CACHE_HOME/memroute`, else `~/.cache/memroute`: shared by every data dir."""
    base = os.environ.get("XDG_CACHE_HOME", "").strip()
    return (Path(base).expanduser() if base else Path.home() / ".cache") / "memroute"


class WordVectors:
    """`vectors(words)`: one unit row per word (a word without known tokens: a zero row),
    or None while the model is not loaded; the rows of the last `kept` words are kept
    (the oldest replaced first). Thread-safe."""

    def __init__(self, folders: Sequence[Path], kept: int = WORDS_KEPT) -> None:
        """`folders`: where the distilled model may be, in order; it is built in the last."""
        self._folders = [Path(f).expanduser() for f in folders]
        self._lock = threading.Lock()
        self._kept = _KeptRows(kept)
        self._table: np.ndarray | None = None
        self._tokenizer: Any = None
        self._unknown: int | None = None
        self._started = False
        self._failed = False

    @property
    def state(self) -> str:
        """`ready`, `building` (being distilled), `failed` (see the log), or `idle` (loads
        with the first key index that asks)."""
        if self._table is not None:
            return "ready"
        if self._failed:
            return "failed"
        return "building" if self._started else "idle"

    def vectors(self, words: Sequence[str]) -> FloatMatrix | None:
        """A unit row per word, the mean of its tokens' rows (a word without known tokens:
        zeros); None while the model is not loaded."""
        if self._table is None and not self._load():
            return None
        return self._kept.rows(words, self._made)

    def _made(self, words: Sequence[str]) -> FloatMatrix:
        """`vectors` of `words`, made from the model's table."""
        table, tokenizer = self._table, self._tokenizer
        assert table is not None
        # One word at a time: `encode_batch` hands the words to a pool of threads that spin
        # on the cores after the work (milliseconds of CPU per call for microseconds of it).
        ids: list[int] = []
        starts: list[int] = []
        rows: list[int] = []
        for row, word in enumerate(words):
            known = [i for i in tokenizer.encode(word, add_special_tokens=False).ids if i != self._unknown]
            if known:
                starts.append(len(ids))
                rows.append(row)
                ids.extend(known)
        out = np.zeros((len(words), table.shape[1]), dtype=np.float32)
        if ids:
            sums = np.add.reduceat(table[ids].astype(np.float32), starts, axis=0)
            counts = np.diff([*starts, len(ids)]).astype(np.float32)
            out[rows] = sums / counts[:, None]
        norms = np.linalg.norm(out, axis=1, keepdims=True)
        np.divide(out, norms, out=out, where=norms > 0)
        return out

    def _load(self) -> bool:
        """Load the model if a folder has it, else start building it; True once loaded."""
        with self._lock:
            if self._table is not None:
                return True
            if self._failed:
                return False
            for folder in self._folders:
                if is_model_folder(folder / DISTILLED_STATIC_NAME):
                    return self._read(folder / DISTILLED_STATIC_NAME)
            if not self._started:
                self._started = True
                threading.Thread(target=self._build, name="memroute-word-vectors", daemon=True).start()
            return False

    def _read(self, folder: Path) -> bool:
        from safetensors.numpy import load_file
        from tokenizers import Tokenizer

        try:
            tensors = load_file(str(folder / TABLE_FILE))
            table = np.asarray(next(iter(tensors.values())))  # float16: half the RAM; rows widen when read
            tokenizer = Tokenizer.from_file(str(folder / TOKENIZER_FILE))
            vocab = json.loads((folder / TOKENIZER_FILE).read_text(encoding="utf-8"))["model"]["vocab"]
        except Exception as exc:
            self._failed = True
            log.warning("word vectors: could not read %s: %s", folder, scrub(f"{type(exc).__name__}: {exc}"))
            return False
        self._unknown = vocab.get("[UNK]")
        self._tokenizer = tokenizer
        self._table = table
        return True

    def _build(self) -> None:
        from memroute.embeddings.distill import build_static_model

        target = self._folders[-1] / DISTILLED_STATIC_NAME
        log.info("word vectors: distilling the bundled MiniLM into %s (~15 s, once)", target)
        try:
            build_static_model(target)
        except Exception as exc:
            with self._lock:
                self._failed = True
            log.warning(
                "word vectors: distilling into %s failed (%s); keyword search uses the words asked alone",
                target,
                scrub(f"{type(exc).__name__}: {exc}"),
            )
            return
        self._load()


class _KeptRows:
    """The rows of the last `capacity` words made, in one matrix (allocated on first use;
    a slot is reused for a new word once every other slot was filled after it)."""

    def __init__(self, capacity: int) -> None:
        if capacity < 1:
            raise ValueError("capacity must be at least 1")
        self.capacity = capacity
        self._slots: dict[str, int] = {}
        self._words: list[str | None] = [None] * capacity
        self._matrix: np.ndarray | None = None
        self._next = 0
        self._lock = threading.Lock()

    def rows(self, words: Sequence[str], make: Callable[[Sequence[str]], FloatMatrix]) -> FloatMatrix:
        """The rows of `words`: those kept, and the others from `make` (then kept)."""
        if not words:
            return make(words)
        with self._lock:
            slots = self._slots
            missing = [word for word in dict.fromkeys(words) if word not in slots]
            made = make(missing) if missing else None
            fresh = dict(zip(missing, made, strict=True)) if made is not None else {}
            if made is not None and len(missing) == len(words):
                out = made
            else:  # some words were kept, or some come twice
                kept = self._matrix
                width = made.shape[1] if made is not None else kept.shape[1] if kept is not None else 0
                out = np.empty((len(words), width), dtype=np.float32)
                for position, word in enumerate(words):
                    row = fresh.get(word)
                    if row is None:
                        assert kept is not None
                        row = kept[slots[word]]
                    out[position] = row
            for word, row in fresh.items():
                self._keep(word, row)
            return out

    def _keep(self, word: str, row: np.ndarray) -> None:
        if self._matrix is None or self._matrix.shape[1] != row.shape[0]:
            self._matrix = np.zeros((self.capacity, row.shape[0]), dtype=np.float32)
            self._slots.clear()
            self._words = [None] * self.capacity
        slot = self._next
        self._next = (slot + 1) % self.capacity
        old = self._words[slot]
        if old is not None:
            del self._slots[old]
        self._words[slot] = word
        self._slots[word] = slot
        self._matrix[slot] = row


def word_vectors_for(config: Config) -> WordVectors | None:
    """The word model for `config` (None when both MEMROUTE_RELATED_WORDS and
    MEMROUTE_MEANINGS are off)."""
    if not (config.related_words or config.meanings):
        return None
    folders = [machine_cache_dir()]
    if config.static_cache_dir is not None:
        folders.insert(0, config.static_cache_dir)
    return WordVectors(folders)
