"""The transformers source with the real packaged all-MiniLM-L6-v2 (int8 ONNX)."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import numpy as np
import pytest
from embed_helpers import cosine, make_config, no_routes
from wire_servers import ConnectProxy

from memroute.embeddings import DEFAULT_TRANSFORMERS_MODEL, EmbeddingSources, SourceChoice
from memroute.embeddings.onnx_minilm import (
    DEFAULT_TOKENIZER,
    TELEMETRY_SWITCH,
    OnnxEmbedder,
    default_model_path,
)
from memroute.errors import EmbeddingError

EATING = "A man is eating food."
BREAD = "A man is eating a piece of bread."
CHEETAH = "A cheetah is running behind its prey."


def choice(model: str = DEFAULT_TRANSFORMERS_MODEL, dims: int | None = 384) -> SourceChoice:
    return SourceChoice("transformers", model, dims, "test")


def test_default_model(minilm: OnnxEmbedder) -> None:
    assert (minilm.source, minilm.model, minilm.dimensions) == (
        "transformers",
        DEFAULT_TRANSFORMERS_MODEL,
        384,
    )
    vectors = minilm.embed([EATING, BREAD, CHEETAH])
    assert vectors.shape == (3, 384) and vectors.dtype == np.float32
    assert np.allclose(np.linalg.norm(vectors, axis=1), 1.0, atol=1e-5)
    assert cosine(vectors[0], vectors[1]) > 0.6  # stack-notes §8.3: 0.753
    assert cosine(vectors[0], vectors[2]) < 0.3  # 0.137


def test_batch_equals_single(minilm: OnnxEmbedder) -> None:
    texts = [EATING, "short", CHEETAH + " " + BREAD * 3, "What is the user's dog called?"]
    batch = minilm.embed(texts)
    singles = np.stack([minilm.embed([t])[0] for t in texts])
    assert np.allclose(batch, singles, atol=1e-4)


def test_blank_text_is_a_zero_row(minilm: OnnxEmbedder) -> None:
    vectors = minilm.embed(["", EATING, "   \n"])
    assert not vectors[0].any() and not vectors[2].any()
    assert np.isclose(np.linalg.norm(vectors[1]), 1.0, atol=1e-5)
    assert minilm.embed([]).shape == (0, 384)


def test_long_text_is_truncated_not_rejected(minilm: OnnxEmbedder) -> None:
    vector = minilm.embed(["word " * 2000])[0]
    assert np.isclose(np.linalg.norm(vector), 1.0, atol=1e-5)


def test_local_folder_copy(tmp_path: Path, minilm: OnnxEmbedder) -> None:
    folder = tmp_path / "my-minilm"
    (folder / "onnx").mkdir(parents=True)
    shutil.copy(default_model_path(), folder / "onnx" / "model_quantized.onnx")
    shutil.copy(DEFAULT_TOKENIZER, folder / "tokenizer.json")
    sources = EmbeddingSources(make_config(tmp_path, transformers_model=str(folder)), no_routes)
    try:
        embedder = sources.embedder(choice(str(folder), None))
        assert (embedder.model, embedder.dimensions) == (str(folder), 384)
        ours = sources.embed_documents(choice(str(folder), None), [EATING, CHEETAH])
        assert np.allclose(ours, minilm.embed([EATING, CHEETAH]), atol=1e-5)
        status = {s.source: s for s in sources.local_sources()}["transformers"]
        assert status.available and status.reason.startswith("loaded")
    finally:
        sources.close()


def test_folder_without_tokenizer_fails_to_load(tmp_path: Path) -> None:
    folder = tmp_path / "half"
    folder.mkdir()
    shutil.copy(default_model_path(), folder / "model.onnx")
    sources = EmbeddingSources(make_config(tmp_path), no_routes)
    with pytest.raises(EmbeddingError) as info:
        sources.embedder(choice(str(folder), None))
    assert (info.value.reason, info.value.source) == ("model_load_failed", "transformers")
    assert "tokenizer.json" in info.value.message


def test_missing_folder_fails_to_load(tmp_path: Path) -> None:
    sources = EmbeddingSources(make_config(tmp_path), no_routes)
    with pytest.raises(EmbeddingError) as info:
        sources.embedder(choice(str(tmp_path / "nope" / "model-dir"), None))
    assert info.value.reason == "model_load_failed"
    assert "no such folder" in info.value.message


def test_bogus_repo_id_fails_quickly_with_help(tmp_path: Path) -> None:
    """Whatever the network: offline the probe fails at once, online the Hub says 401/404."""
    sources = EmbeddingSources(make_config(tmp_path), no_routes)
    started = time.monotonic()
    with pytest.raises(EmbeddingError) as info:
        sources.embedder(choice("memroute-tests/no-such-model-xyz", None))
    assert time.monotonic() - started < 30
    error = info.value
    assert (error.reason, error.source) == ("model_load_failed", "transformers")
    assert "Hugging Face Hub" in error.message
    assert "local folder" in error.message and "MEMORY_TRANSFORMERS_MODEL" in error.message
    assert not (tmp_path / "embeddings" / "memroute-tests__no-such-model-xyz").exists()


def test_bogus_repo_id_offline(tmp_path: Path, offline_hub: None) -> None:
    sources = EmbeddingSources(make_config(tmp_path), no_routes)
    with pytest.raises(EmbeddingError) as info:
        sources.embedder(choice("memroute-tests/no-such-model-xyz", None))
    assert "HF_HUB_OFFLINE" in info.value.message


def test_repo_id_already_in_the_cache_dir_loads_offline(tmp_path: Path, offline_hub: None) -> None:
    cache = tmp_path / "models"
    folder = cache / "sentence-transformers__all-MiniLM-L6-v2"
    (folder / "onnx").mkdir(parents=True)
    shutil.copy(default_model_path(), folder / "onnx" / "model.onnx")
    shutil.copy(DEFAULT_TOKENIZER, folder / "tokenizer.json")
    sources = EmbeddingSources(make_config(tmp_path, static_cache_dir=cache), no_routes)
    embedder = sources.embedder(choice("sentence-transformers/all-MiniLM-L6-v2", None))
    assert embedder.dimensions == 384


# A background thread inside the model (as the re-index worker is while it embeds) when the
# process's main thread returns.
_EXIT_WHILE_EMBEDDING = textwrap.dedent(
    """
    import threading
    import time
    from memroute.embeddings.onnx_minilm import load_transformers

    embedder = load_transformers("", None)
    embedded = threading.Event()

    def embed_forever():
        while True:
            embedder.embed(["the user's dog is called Rex"] * 8)  # short calls: one ends during the exit
            embedded.set()

    threading.Thread(target=embed_forever, daemon=True).start()
    embedded.wait()
    time.sleep(0.05)
    print("main thread done", flush=True)
    """
)


def test_a_process_that_exits_while_a_background_thread_embeds_ends_cleanly() -> None:
    """onnxruntime aborts a process whose daemon thread it still runs when the interpreter
    ends (exit status 134): the exit waits for the call in flight instead."""
    done = subprocess.run(
        [sys.executable, "-c", _EXIT_WHILE_EMBEDDING], capture_output=True, text=True, timeout=60
    )
    assert "main thread done" in done.stdout
    assert "terminate called" not in done.stderr
    assert done.returncode == 0, done.stderr[-2000:]


# A process that runs the bundled model, then stays up (onnxruntime's usage events left ~9 s
# after a session was made, and again ~5 s later).
_RUN_THE_MODEL_A_WHILE = textwrap.dedent(
    """
    import time
    from memroute.embeddings.onnx_minilm import load_transformers

    load_transformers("", None).embed(["the user's dog is called Rex"])
    time.sleep(12)
    """
)


@pytest.mark.slow(seconds=15)
def test_a_process_that_runs_the_model_sends_nothing_anywhere() -> None:
    """onnxruntime sends usage events to Microsoft from a process that has made a session,
    through the environment's proxy: memroute's model sends none."""
    with ConnectProxy() as proxy:
        env = {name: value for name, value in os.environ.items() if name.upper() != "NO_PROXY"}
        env.pop(TELEMETRY_SWITCH, None)
        env.update({name: proxy.url for name in ("HTTPS_PROXY", "https_proxy", "HTTP_PROXY", "http_proxy")})
        done = subprocess.run(
            [sys.executable, "-c", _RUN_THE_MODEL_A_WHILE],
            env=env,
            capture_output=True,
            text=True,
            timeout=60,
        )
    assert done.returncode == 0, done.stderr[-2000:]
    assert proxy.heads == []
