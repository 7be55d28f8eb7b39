"""The `static` source: a Model2Vec model (a token-vector table, averaged per text).

MEMORY_STATIC_MODEL is a local folder or a Hugging Face repo id. A repo id is used from
`<cache dir>/<owner>__<name>` when it has been downloaded before, else downloaded there.
When the Hub cannot be reached at all, a stand-in is distilled from the bundled MiniLM
into `<cache dir>/minilm-static-256` (once; ~15 s) and used instead, and the embedder's
`model` says so.
"""

from __future__ import annotations

import importlib.util
import logging
import threading
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from memroute.embeddings.base import FloatMatrix, empty_matrix, l2_normalize
from memroute.embeddings.hub import (
    HubUnreachable,
    cache_folder_name,
    download_into,
    ensure_reachable,
    looks_like_repo_id,
)
from memroute.errors import EmbeddingError
from memroute.masking import scrub

log = logging.getLogger("memroute.embeddings")

SOURCE = "static"
DISTILLED_STATIC_NAME = "minilm-static-256"
DISTILLED_STATIC_MODEL = "memroute/minilm-static-256 (distilled from all-MiniLM-L6-v2)"
#: The folder layouts model2vec can load (config, vectors, tokenizer).
_LAYOUTS = (
    ("config.json", "model.safetensors", "tokenizer.json"),
    ("config_sentence_transformers.json", "model.safetensors", "tokenizer.json"),
    (
        "config_sentence_transformers.json",
        "0_StaticEmbedding/model.safetensors",
        "0_StaticEmbedding/tokenizer.json",
    ),
)
_HUB_FILES = sorted({name for layout in _LAYOUTS for name in layout} | {"README.md"})

_warn_lock = threading.Lock()
_warned = False


def _fail(message: str) -> EmbeddingError:
    return EmbeddingError(scrub(message), reason="model_load_failed", source=SOURCE)


def is_model_folder(folder: Path) -> bool:
    return folder.is_dir() and any(all((folder / name).is_file() for name in layout) for layout in _LAYOUTS)


def runtime_missing() -> str | None:
    if importlib.util.find_spec("model2vec") is None:
        return "model2vec"
    return None


class StaticEmbedder:
    """A loaded Model2Vec model. model2vec's `encode` reconfigures the tokenizer on every
    call (truncation), which is not safe across threads, so calls are serialised; a call
    takes well under a millisecond per text."""

    source = SOURCE

    def __init__(self, static_model: Any, model: str) -> None:
        self._model = static_model
        self.model = model
        self._lock = threading.Lock()

    @property
    def dimensions(self) -> int:
        return int(self._model.dim)

    def embed(self, texts: Sequence[str]) -> FloatMatrix:
        if not texts:
            return empty_matrix(self.dimensions)
        try:
            with self._lock:
                raw = self._model.encode(
                    list(texts), normalize=False, use_multiprocessing=False, show_progress_bar=False
                )
        except Exception as exc:
            raise EmbeddingError(
                scrub(f"the static model {self.model} failed: {type(exc).__name__}: {exc}"),
                reason="request_failed",
                source=SOURCE,
            ) from exc
        # Normalise in float32: model2vec would normalise in the table's dtype (float16).
        return l2_normalize(np.asarray(raw, dtype=np.float32).reshape(len(texts), -1))


def _load_folder(folder: Path, model: str) -> StaticEmbedder:
    from model2vec import StaticModel

    if not is_model_folder(folder):
        raise _fail(
            f"{folder} is not a Model2Vec model folder (config.json, model.safetensors, tokenizer.json)"
        )
    try:
        loaded = StaticModel.from_pretrained(folder)
    except Exception as exc:
        raise _fail(f"could not load the static model {model}: {type(exc).__name__}: {exc}") from exc
    return StaticEmbedder(loaded, model)


def _download(repo_id: str, folder: Path) -> None:
    from huggingface_hub import snapshot_download

    snapshot_download(repo_id, local_dir=folder, allow_patterns=_HUB_FILES)
    if not is_model_folder(folder):
        raise FileNotFoundError(f"{repo_id} is not a Model2Vec model")


def _warn_distilling(repo_id: str, why: str, target: Path) -> None:
    global _warned
    with _warn_lock:
        if _warned:
            return
        _warned = True
    log.warning(
        "static model %s: the Hugging Face Hub is unreachable (%s); building a static model from the "
        "local all-MiniLM-L6-v2 into %s instead (~20 s, once)",
        repo_id,
        why,
        target,
    )


def distilled_folder(cache_dir: Path) -> Path:
    return cache_dir / DISTILLED_STATIC_NAME


def locate(spec: str, cache_dir: Path) -> Path | None:
    """The folder that would be loaded for `spec` right now, without network or building."""
    path = Path(spec).expanduser()
    if path.exists():
        return path if is_model_folder(path) else None
    if looks_like_repo_id(spec):
        cached = cache_dir / cache_folder_name(spec)
        if is_model_folder(cached):
            return cached
    return None


def load_static(spec: str, cache_dir: Path) -> StaticEmbedder:
    """The embedder for MEMORY_STATIC_MODEL (see the module docstring for the order)."""
    missing = runtime_missing()
    if missing is not None:
        raise _fail(f"the static source needs the Python package {missing!r}")
    path = Path(spec).expanduser()
    if path.exists():
        return _load_folder(path, spec)
    if not looks_like_repo_id(spec):
        raise _fail(f"MEMORY_STATIC_MODEL {spec}: no such folder")
    cached = cache_dir / cache_folder_name(spec)
    if is_model_folder(cached):
        return _load_folder(cached, spec)
    try:
        ensure_reachable()
    except HubUnreachable as exc:
        return _load_distilled(spec, str(exc), cache_dir)
    try:
        download_into(cached, lambda tmp: _download(spec, tmp))
    except Exception as exc:
        raise _fail(
            f"could not download the static model {spec} from the Hugging Face Hub "
            f"({type(exc).__name__}); set MEMORY_STATIC_MODEL to a local Model2Vec folder, or build "
            "one offline with `memroute embeddings build-static`"
        ) from None
    return _load_folder(cached, spec)


def _load_distilled(spec: str, why: str, cache_dir: Path) -> StaticEmbedder:
    from memroute.embeddings.distill import build_static_model

    target = distilled_folder(cache_dir)
    if not is_model_folder(target):
        _warn_distilling(spec, why, target)
        try:
            build_static_model(target)
        except Exception as exc:
            raise _fail(
                f"the static model {spec} is not in {cache_dir} and the Hugging Face Hub could not be "
                f"reached ({why}); building one from the local MiniLM failed too: "
                f"{type(exc).__name__}: {exc}"
            ) from exc
    return _load_folder(target, DISTILLED_STATIC_MODEL)
