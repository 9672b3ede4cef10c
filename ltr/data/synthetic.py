"""Synthetic LETOR datasets shaped like MQ2007, MQ2008, MSLR-WEB10K and Yahoo set 1.

Embedded defaults that need no download: the generator writes real LETOR files
(``FoldK/{train,vali,test}.txt``) that go through the same reader, cache and normalisation as the
real data sets. Deterministic for ``(preset, seed, n_queries)``.

How a preset is generated
- Lists: lengths drawn from a log-normal clipped to ``[min_len, max_len]`` (shaped like the real
  list-length distributions, but capped so that training on 2 CPU cores takes seconds to a minute).
- Features: correlated Gaussian latents ``u`` (doc = own noise + a few shared factors), then what the
  file holds depends on the real data set's release:
  ``normalised`` (MQ*) per-query min-max of ``u``, values in [0, 1];
  ``raw`` (WEB10K) ``a_qf * minmax_q(u) + b_qf`` with heavy-tailed per-feature scales and per-query
  gains/offsets, so a model without query-level normalisation sees badly scaled features;
  ``sparse`` (Yahoo) a sigmoid of ``u`` in [0, 1] with each feature missing (0, not written) at a
  per-feature rate.
- Labels carry real signal: the features as the model will see them (after the data set's
  query-level normalisation) go through a hidden random function of ``n_informative`` of them
  (``x = x_I - 0.5``):
  ``f(x) = v.x + w2.tanh(W1 x + b1) + (4 sum_{j<4} x_{4+j} x_{8+j} - sum_{j<4} (2 x_j)^2) / 2``
  (a linear part, a random tanh layer, non-monotone and interaction terms), plus a per-query
  offset (some queries end up with no relevant document, as in the real sets) and Gaussian noise;
  grades are cut at the quantiles that give the preset's grade distribution (skewed to 0).
- ``conflict=True`` plants a top/body trade-off, so that the surrogate's discount matters: the top
  grade is given by a second hidden direction ``t`` (what makes a document *the* answer), and among
  the other documents the lower grades come from ``f - 1.5 sd(f) t`` (what makes a document somewhat
  useful is partly opposed to ``t``). A ranker has to trade the order of the few best documents
  against the order of the many middling ones. It was designed expecting a steeper-than-log2 discount
  to win; measured (``bench/learndcg_identifiability.py``, synthetic-mq2007, 500 queries, 5 folds,
  MLP, fixed-shape arms) a *flatter* one does: discount power p = 0.5 beats log2 (p = 1) by +0.077
  NDCG@10 and p = 3 loses 0.199. Options ride in the name: ``...:conflict=1``.
- Folds: queries are split at random into 5 parts S1..S5; Fold k trains on three consecutive parts,
  validates on the next and tests on the last (LETOR's rotation), so each query is in exactly one
  fold's test set.
"""
from __future__ import annotations

import json
import zlib
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from core.atomic import publish_dir
from ltr.data.letor import query_minmax

GENERATOR_VERSION = 2
N_FOLDS = 5


@dataclass(frozen=True)
class SyntheticPreset:
    n_features: int
    grade_probs: tuple[float, ...]  # P(grade = g), g = 0..max_grade
    n_queries: int
    median_len: float
    len_sigma: float
    min_len: int
    max_len: int
    kind: str  # "normalised" | "raw" | "sparse"
    n_informative: int = 20  # >= 12 (the interaction terms use 12 of them)
    noise: float = 0.6  # noise sd relative to the sd of the hidden function

    @property
    def max_grade(self) -> int:
        return len(self.grade_probs) - 1


# Grade distributions approximate the published ones (Yahoo's peak is at grade 1, as in the real set).
PRESETS: dict[str, SyntheticPreset] = {
    "synthetic-mq2007": SyntheticPreset(46, (0.74, 0.20, 0.06), 800, 38, 0.45, 6, 147, "normalised"),
    "synthetic-mq2008": SyntheticPreset(46, (0.81, 0.13, 0.06), 800, 14, 0.6, 5, 121, "normalised"),
    "synthetic-web10k": SyntheticPreset(136, (0.52, 0.32, 0.13, 0.02, 0.01), 1000, 25, 1.0, 3, 240, "raw"),
    "synthetic-yahoo": SyntheticPreset(700, (0.25, 0.36, 0.28, 0.08, 0.03), 800, 18, 0.6, 2, 139, "sparse"),
}


def write_synthetic(preset: str, out_dir: str | Path, seed: int = 0, n_queries: int | None = None,
                    conflict: bool = False) -> Path:
    """Generate ``out_dir/FoldK/{train,vali,test}.txt`` (K = 1..5) and ``out_dir/meta.json``.

    Atomic: built in a temporary sibling folder and renamed to ``out_dir``; if ``out_dir`` already
    exists (another process was faster, or an earlier call), it is left as is.
    """
    spec = PRESETS[preset]
    n_queries = spec.n_queries if n_queries is None else int(n_queries)
    if n_queries < N_FOLDS:
        raise ValueError(f"{preset}: n_queries={n_queries}, need at least {N_FOLDS} (one per fold part)")
    out_dir = Path(out_dir)
    out_dir.parent.mkdir(parents=True, exist_ok=True)
    rng = np.random.default_rng([seed, zlib.crc32(preset.encode())])
    lengths, written, labels = _generate(spec, n_queries, rng, conflict=conflict)
    ptr = np.r_[0, np.cumsum(lengths)]
    blocks = [_format_query(q + 1, labels[ptr[q]:ptr[q + 1]], written[ptr[q]:ptr[q + 1]],
                            sparse=spec.kind == "sparse") for q in range(n_queries)]
    parts = np.array_split(rng.permutation(n_queries), N_FOLDS)
    part_text = ["".join(blocks[q] for q in np.sort(p)) for p in parts]
    with publish_dir(out_dir) as staging:
        for k in range(N_FOLDS):
            order = [(k + j) % N_FOLDS for j in range(N_FOLDS)]
            fold = staging / f"Fold{k + 1}"
            fold.mkdir()
            (fold / "train.txt").write_text("".join(part_text[i] for i in order[:3]))
            (fold / "vali.txt").write_text(part_text[order[3]])
            (fold / "test.txt").write_text(part_text[order[4]])
        (staging / "meta.json").write_text(json.dumps({
            "preset": preset, "seed": seed, "n_queries": n_queries, "conflict": bool(conflict),
            "generator_version": GENERATOR_VERSION,
            "n_documents": int(ptr[-1]),
            "grade_counts": np.bincount(labels, minlength=spec.max_grade + 1).tolist()}))
    return out_dir


def _generate(spec: SyntheticPreset, n_queries: int, rng: np.random.Generator, conflict: bool = False):
    """(list lengths [Q], written features [N, F] float64, grades [N] int)."""
    lengths = np.clip(np.round(spec.median_len * np.exp(spec.len_sigma * rng.standard_normal(n_queries))),
                      spec.min_len, spec.max_len).astype(np.int64)
    ptr = np.r_[0, np.cumsum(lengths)]
    n, F = int(ptr[-1]), spec.n_features
    factors = rng.standard_normal((n, 4)) @ rng.standard_normal((4, F)) / 2
    u = rng.standard_normal((n, F)) + factors
    if spec.kind == "normalised":
        written = query_minmax(u, ptr)
    elif spec.kind == "raw":
        scale = 10.0 ** rng.uniform(0, 3, F)  # counts, BM25 scores, PageRank... differ by orders
        gain = np.exp(0.5 * rng.standard_normal((n_queries, F)))
        offset = np.abs(rng.standard_normal((n_queries, F)))
        written = (np.repeat(gain, lengths, 0) * query_minmax(u, ptr) + np.repeat(offset, lengths, 0)) * scale
    else:
        density = rng.uniform(0.02, 0.4, F)
        written = np.where(rng.random((n, F)) < density, 1 / (1 + np.exp(-u)), 0.0)
    seen = written if spec.kind == "normalised" else query_minmax(written, ptr)

    k = min(spec.n_informative, F)
    # sparse: the signal sits in the denser features (as in Yahoo, where the useful ones are common)
    candidates = np.argsort(-density)[:2 * k] if spec.kind == "sparse" else np.arange(F)
    informative = rng.choice(candidates, size=k, replace=False)
    x = seen[:, informative] - 0.5
    hidden = 16
    W1 = rng.standard_normal((k, hidden)) * 2 / np.sqrt(k)
    f = x @ rng.standard_normal(k) / np.sqrt(k) \
        + np.tanh(x @ W1 + rng.standard_normal(hidden) * 0.5) @ rng.standard_normal(hidden) / np.sqrt(hidden)
    # non-monotone and interaction terms: what a linear model cannot express (a tree or a net can)
    f += 0.5 * (-((2 * x[:, :4]) ** 2).sum(1) + 4 * (x[:, 4:8] * x[:, 8:12]).sum(1))
    sd = f.std() or 1.0
    relevance = f + np.repeat(rng.standard_normal(n_queries) * 0.5 * sd, lengths) \
        + rng.standard_normal(n) * spec.noise * sd
    if conflict:  # drawn after everything else, so the default data stay bit-identical
        return lengths, written, _conflict_grades(spec, x, relevance, f.std() or 1.0, rng)
    cuts = np.quantile(relevance, np.cumsum(spec.grade_probs)[:-1])
    return lengths, written, np.searchsorted(cuts, relevance, side="right")


def _conflict_grades(spec: SyntheticPreset, x: np.ndarray, relevance: np.ndarray, sd: float,
                     rng: np.random.Generator) -> np.ndarray:
    """Grades of the ``conflict`` option (module docstring): top grade from ``t``, the others from
    ``relevance - 1.5 sd t``, each at the preset's grade proportions."""
    t = x @ rng.standard_normal(x.shape[1]) / np.sqrt(x.shape[1])
    t = (t - t.mean()) / (t.std() or 1.0) + 0.3 * rng.standard_normal(len(t))
    top = t >= np.quantile(t, 1.0 - spec.grade_probs[-1])
    body = relevance - 1.5 * sd * t
    lower = np.asarray(spec.grade_probs[:-1]) / sum(spec.grade_probs[:-1])
    cuts = np.quantile(body[~top], np.cumsum(lower)[:-1])
    return np.where(top, spec.max_grade, np.searchsorted(cuts, body, side="right"))


def _format_query(qid: int, labels: np.ndarray, features: np.ndarray, sparse: bool) -> str:
    """LETOR lines of one query; 5 significant digits (labels were cut on the exact values)."""
    templates = [f"{i + 1}:%.5g" for i in range(features.shape[1])]
    head = f" qid:{qid} "
    if sparse:
        rows = []
        for label, row in zip(labels, features):
            nz = np.flatnonzero(row)
            rows.append(f"{label}{head}" + " ".join([templates[i] for i in nz]) % tuple(row[nz]) + "\n")
        return "".join(rows)
    fmt = " ".join(templates) + "\n"
    return "".join(f"{label}{head}" + fmt % tuple(row) for label, row in zip(labels, features))
