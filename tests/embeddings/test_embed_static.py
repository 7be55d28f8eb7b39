"""The static source: models distilled from the bundled MiniLM by `build_static_model`,
loaded from a local folder, and the offline stand-in for a repo id the Hub cannot serve."""

from __future__ import annotations

import json
import logging
import shutil
from pathlib import Path

import numpy as np
import pytest
from embed_helpers import SMALL_VOCAB, cosine, make_config, no_routes

from memroute.embeddings import (
    DEFAULT_STATIC_MODEL,
    DISTILLED_STATIC_MODEL,
    DISTILLED_STATIC_NAME,
    EmbeddingSources,
    SourceChoice,
)
from memroute.errors import EmbeddingError

RELATED = ("the man is eating food", "a man eats some bread")
UNRELATED = "the city was hit by a storm"


def static_choice(model: str, dims: int | None = None) -> SourceChoice:
    return SourceChoice("static", model, dims, "test")


def test_build_writes_a_model2vec_folder(small_static_model: Path) -> None:
    names = {p.name for p in small_static_model.iterdir()}
    assert {"config.json", "model.safetensors", "tokenizer.json", "README.md", "NOTICE"} <= names
    config = json.loads((small_static_model / "config.json").read_text())
    assert config["embedding_dtype"] == "float16" and config["normalize"] is True
    assert config["hidden_dim"] == 256
    vocab = json.loads((small_static_model / "tokenizer.json").read_text())["model"]["vocab"]
    assert len(vocab) == SMALL_VOCAB
    assert not any(token.startswith("[unused") for token in vocab)
    assert vocab["[PAD]"] == 0 and "[UNK]" in vocab
    assert "license: apache-2.0" in (small_static_model / "README.md").read_text()


def test_local_folder_loads_with_unit_vectors(tmp_path: Path, small_static_model: Path) -> None:
    config = make_config(tmp_path, static_model=str(small_static_model))
    sources = EmbeddingSources(config, no_routes)
    chosen = static_choice(str(small_static_model))
    embedder = sources.embedder(chosen)
    assert (embedder.source, embedder.model, embedder.dimensions) == ("static", str(small_static_model), 256)
    vectors = sources.embed_documents(chosen, [*RELATED, UNRELATED, "", "   "])
    assert vectors.shape == (5, 256) and vectors.dtype == np.float32
    assert np.allclose(np.linalg.norm(vectors[:3], axis=1), 1.0, atol=1e-5)
    assert not vectors[3].any() and not vectors[4].any()
    assert cosine(vectors[0], vectors[1]) > cosine(vectors[0], vectors[2])
    query = sources.embed_query(chosen, RELATED[0])
    assert query.shape == (256,) and np.allclose(query, vectors[0], atol=1e-6)


def test_pca_dims_and_vocab_limit(tmp_path: Path) -> None:
    from memroute.embeddings import build_static_model

    folder = build_static_model(tmp_path / "tiny", pca_dims=32, vocab_limit=400)
    config = json.loads((folder / "config.json").read_text())
    assert config["hidden_dim"] == 32
    vocab = json.loads((folder / "tokenizer.json").read_text())["model"]["vocab"]
    assert set(vocab) >= {"[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"}
    sources = EmbeddingSources(make_config(tmp_path), no_routes)
    vector = sources.embed_query(static_choice(str(folder)), "!!! ??? ...")
    assert vector.shape == (32,)


def test_not_a_model_folder(tmp_path: Path) -> None:
    (tmp_path / "empty").mkdir()
    sources = EmbeddingSources(make_config(tmp_path), no_routes)
    with pytest.raises(EmbeddingError) as info:
        sources.embedder(static_choice(str(tmp_path / "empty")))
    assert (info.value.reason, info.value.source) == ("model_load_failed", "static")
    status = {s.source: s for s in sources.local_sources()}["static"]
    assert status.model == DEFAULT_STATIC_MODEL  # the config's model, not the failed one


def test_repo_id_in_cache_dir_is_used_without_the_hub(
    tmp_path: Path, small_static_model: Path, offline_hub: None
) -> None:
    cache = tmp_path / "cache"
    shutil.copytree(small_static_model, cache / "minishlab__potion-base-8M")
    sources = EmbeddingSources(make_config(tmp_path, static_cache_dir=cache), no_routes)
    embedder = sources.embedder(static_choice(DEFAULT_STATIC_MODEL, 256))
    assert embedder.model == DEFAULT_STATIC_MODEL
    assert not (cache / DISTILLED_STATIC_NAME).exists()


def test_offline_repo_id_uses_an_existing_distilled_model(
    tmp_path: Path, small_static_model: Path, offline_hub: None, caplog: pytest.LogCaptureFixture
) -> None:
    cache = tmp_path / "cache"
    shutil.copytree(small_static_model, cache / DISTILLED_STATIC_NAME)
    sources = EmbeddingSources(make_config(tmp_path, static_cache_dir=cache), no_routes)
    status = {s.source: s for s in sources.local_sources()}["static"]
    assert status.available and "already distilled" in status.reason
    with caplog.at_level(logging.WARNING, logger="memroute.embeddings"):
        embedder = sources.embedder(static_choice(DEFAULT_STATIC_MODEL, 256))
    assert embedder.model == DISTILLED_STATIC_MODEL
    assert not caplog.records  # nothing was built
    status = {s.source: s for s in sources.local_sources()}["static"]
    assert status.reason == f"loaded: {DISTILLED_STATIC_MODEL}"


@pytest.mark.slow(seconds=45)
def test_offline_default_distils_the_full_model(
    tmp_path: Path, offline_hub: None, caplog: pytest.LogCaptureFixture
) -> None:
    """The real default path with no Hub: the full vocabulary distilled once (~15 s), with a
    warning, then MiniLM-like quality from a table lookup."""
    cache = tmp_path / "cache"
    sources = EmbeddingSources(make_config(tmp_path, static_cache_dir=cache), no_routes)
    chosen = static_choice(DEFAULT_STATIC_MODEL, 256)
    with caplog.at_level(logging.WARNING, logger="memroute.embeddings"):
        embedder = sources.embedder(chosen)
    assert embedder.model == DISTILLED_STATIC_MODEL and embedder.dimensions == 256
    assert (cache / DISTILLED_STATIC_NAME / "model.safetensors").is_file()
    assert (
        len(json.loads((cache / DISTILLED_STATIC_NAME / "tokenizer.json").read_text())["model"]["vocab"])
        == 29528
    )
    size = sum(p.stat().st_size for p in (cache / DISTILLED_STATIC_NAME).rglob("*") if p.is_file())
    assert size < 25_000_000  # float16
    assert any("unreachable" in r.getMessage() and "building" in r.getMessage() for r in caplog.records)
    eat, bread, cheetah, dog, puppy, tax = sources.embed_documents(
        chosen,
        [
            "A man is eating food.",
            "A man is eating a piece of bread.",
            "A cheetah is running behind its prey.",
            "What is the user's dog called?",
            "My puppy's name is Biscuit.",
            "Income tax returns are due in April.",
        ],
    )
    assert np.allclose(np.linalg.norm(np.stack([eat, bread, cheetah]), axis=1), 1.0, atol=1e-5)
    assert cosine(eat, bread) > cosine(eat, cheetah) + 0.2
    assert cosine(dog, puppy) > cosine(dog, tax)
