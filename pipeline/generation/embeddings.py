"""BERTScore from token embeddings, with the references' embeddings cached by content.

bert-score's ``BERTScorer.score`` encodes every reference again for every call, so a second generator's
H2G paid again for the references the first one had encoded (DL19, minilm: 88 s against 89 s), though
only its answers are new. Here the two halves of bert-score's own computation are taken apart:

1. token embeddings per text (``bert_score.utils.get_bert_embedding``: the encoder's chosen layer,
   special tokens weighted 0 and every other token 1, i.e. no idf), computed in bert-score's order
   (longest first, batches of 64) and cut to each text's length;
2. greedy matching (``bert_score.utils.greedy_cos_idf``) of each (answer, reference) pair.

Reference embeddings are stored in ``cache/bertscore_embeddings.sqlite`` keyed by the encoder's
identity (:meth:`pipeline.generation.bertscore.Encoder.identity`: model, revision, layer, library
versions) and the passage text, as float32 (the encoder's own dtype, so a cached reference scores
what a fresh one does); answers are encoded in the call. The F1 equals bert-score's own to float
tolerance (a text's embedding depends slightly on the padding of the batch it was encoded in).
"""
from __future__ import annotations

import hashlib
from collections import defaultdict
from pathlib import Path
from typing import Mapping, Sequence

import numpy as np

from core import db, paths

BATCH = 64  # bert-score's default batch size, for encoding and for greedy matching


class ReferenceEmbeddings(db.SchemaStore):
    """(encoder identity, passage text) -> (token embeddings [n, d], token weights [n]), in SQLite."""

    SCHEMA = db.Schema("bertscore-references", (db.Migration.tables(
        1, "reference token embeddings", "CREATE TABLE IF NOT EXISTS reference_embedding (key TEXT PRIMARY KEY, "
        "n_tokens INTEGER NOT NULL, dim INTEGER NOT NULL, embedding BLOB NOT NULL, weights BLOB NOT NULL)"),))

    def __init__(self, path: str | Path | None = None):
        super().__init__(path if path is not None else paths.cache_dir() / "bertscore_embeddings.sqlite")

    @staticmethod
    def key(identity: str, text: str) -> str:
        return hashlib.sha256(identity.encode() + b"\x00" + text.encode()).hexdigest()

    def get_many(self, keys: Sequence[str]):
        """``{key: (embedding, weights)}`` as float32 torch tensors, for the keys that are stored."""
        import torch

        out = {}
        for start in range(0, len(keys), 500):
            chunk = list(keys[start:start + 500])
            rows = self.conn.execute("SELECT key, n_tokens, dim, embedding, weights FROM reference_embedding "
                                     f"WHERE key IN ({','.join('?' * len(chunk))})", chunk).fetchall()
            for r in rows:
                emb = np.frombuffer(r["embedding"], dtype=np.float32).reshape(r["n_tokens"], r["dim"])
                out[r["key"]] = (torch.from_numpy(emb.copy()), torch.from_numpy(
                    np.frombuffer(r["weights"], dtype=np.float32).copy()))
        return out

    def put_many(self, items: Mapping[str, tuple]) -> None:
        rows = [(key, int(emb.shape[0]), int(emb.shape[1]), emb.numpy().astype(np.float32).tobytes(),
                 weights.numpy().astype(np.float32).tobytes()) for key, (emb, weights) in items.items()]
        with db.transaction(self.conn) as conn:
            conn.executemany("INSERT OR REPLACE INTO reference_embedding (key, n_tokens, dim, embedding, weights) "
                             "VALUES (?, ?, ?, ?, ?)", rows)


def token_embeddings(scorer, texts: Sequence[str]) -> dict:
    """``{text: (embedding [n, d], weights [n])}`` by bert-score's own embedding step (module docstring)."""
    from bert_score.utils import get_bert_embedding

    tokenizer = scorer._tokenizer
    weights = defaultdict(lambda: 1.0)  # no idf: bert-score's weights when idf=False
    weights[tokenizer.sep_token_id] = 0
    weights[tokenizer.cls_token_id] = 0
    ordered = sorted(set(texts), key=lambda t: (-len(t.split(" ")), t))
    out = {}
    for start in range(0, len(ordered), BATCH):
        batch = ordered[start:start + BATCH]
        emb, mask, idf = get_bert_embedding(batch, scorer._model, tokenizer, weights, device=scorer.device,
                                            all_layers=False)
        emb, mask, idf = emb.cpu(), mask.cpu(), idf.cpu()
        for i, text in enumerate(batch):
            n = int(mask[i].sum().item())
            out[text] = (emb[i, :n].clone(), idf[i, :n].clone())
    return out


def _pad(stats: list):
    from torch.nn.utils.rnn import pad_sequence
    import torch

    emb = pad_sequence([e for e, _ in stats], batch_first=True, padding_value=2.0)  # bert-score's padding
    idf = pad_sequence([w for _, w in stats], batch_first=True)
    lens = torch.tensor([e.shape[0] for e, _ in stats])
    mask = torch.arange(int(lens.max())).expand(len(stats), -1) < lens.unsqueeze(1)
    return emb, mask, idf


def greedy_f1(answer_stats: list, reference_stats: list) -> list[float]:
    """BERTScore F1 of each (answer, reference) pair of embeddings (bert-score's greedy matching)."""
    import torch
    from bert_score.utils import greedy_cos_idf

    out: list[float] = []
    with torch.no_grad():
        for start in range(0, len(answer_stats), BATCH):
            _, _, f1 = greedy_cos_idf(*_pad(reference_stats[start:start + BATCH]),
                                      *_pad(answer_stats[start:start + BATCH]))
            out += f1.tolist()
    return out


def score_pairs(scorer, identity: str, answers: Sequence[str], passages: Sequence[str],
                cache: ReferenceEmbeddings | None = None, answer_cache: dict | None = None) -> list[float]:
    """F1 of each (answer, passage) pair; passages' embeddings from ``cache`` (computed and stored when
    missing), answers' embeddings from ``answer_cache`` (a dict the caller keeps for one call) or computed."""
    cache = cache if cache is not None else ReferenceEmbeddings()
    answer_cache = answer_cache if answer_cache is not None else {}
    keys = {text: ReferenceEmbeddings.key(identity, text) for text in set(passages)}
    stored = cache.get_many(list(keys.values()))
    missing = [text for text, key in keys.items() if key not in stored]
    if missing:
        fresh = token_embeddings(scorer, missing)
        new = {keys[text]: stats for text, stats in fresh.items()}
        cache.put_many(new)
        stored.update(new)
    todo = [a for a in set(answers) if a not in answer_cache]
    if todo:
        answer_cache.update(token_embeddings(scorer, todo))
    return greedy_f1([answer_cache[a] for a in answers], [stored[keys[p]] for p in passages])
