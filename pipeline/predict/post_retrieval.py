"""Post-retrieval predictors: one small function each, over a run's scores (any run: imported files too).

A run ``{qid: {pid: score}}`` becomes a :class:`ScoreMatrix`: one row per query, the scores sorted
descending (ties in any order: the predictors read only the values), padded with NaN to the longest
list. Every predictor is a numpy expression over the whole matrix (no per-query Python), returning one
value per row; a query whose value is undefined (too few scores, a zero normaliser, a non-positive
score where a logarithm needs a positive one) gets NaN, which the evaluation leaves out and counts.

The corpus score. NQC, WIG and SMV were defined with the retrieval score of the whole collection
taken as one document (``score(D, q)``), which a run file does not hold. Two normalisers, named:

- ``corpus`` (the papers' own, the canonical ``nqc@k``, ``wig@k``, ``smv@k``): ``score(D, q)`` computed
  from the index's statistics with the run's retrieval model (:mod:`pipeline.predict.corpus_score`),
  given to :meth:`ScoreMatrix.from_run` as ``corpus_scores``; a query without one gets NaN;
- ``list_mean`` (the variant ``nqc_listmean@k`` ...): the mean of the query's retrieved scores over the
  whole list the run gives (its depth, e.g. 100), the only normaliser when the run's model or an index
  is unknown (a dense or imported run). With a depth equal to ``k`` it makes NQC@k the coefficient of
  variation of the top k, and WIG@k vanishes as k nears the depth.

WIG is taken at a smaller cut-off (``wig_k``, 5 by default as in Zhou and Croft's evaluation). Each
docstring states its normalisation.
"""
from __future__ import annotations

import warnings
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Mapping

import numpy as np

CORPUS, LIST_MEAN = "corpus", "list_mean"  # the two normalisers of NQC, WIG and SMV (module docstring)


@contextmanager
def quiet_nan():
    """numpy's NaN-aware reductions warn on an all-NaN row; here such a row is an undefined value (NaN)."""
    with warnings.catch_warnings(), np.errstate(invalid="ignore", divide="ignore"):
        warnings.simplefilter("ignore", RuntimeWarning)
        yield


@dataclass(frozen=True)
class ScoreMatrix:
    """``scores[q, i]``: the i-th highest score of query ``qids[q]`` (NaN past its list);
    ``lengths[q]``: how many scores it has; ``query_terms[q]``: its analyzed query length |q| (WIG's
    normaliser: the terms the index's Lucene analyzer leaves, repeats counted, as
    :meth:`pipeline.predict.pre_retrieval.TermMatrix.lengths` gives them; NaN when not given or 0, so WIG
    is undefined rather than normalised by a guess); ``corpus[q]``: its corpus score ``score(D, q)`` from
    the index (NaN when unknown or not given)."""
    qids: tuple[str, ...]
    scores: np.ndarray  # float64 [Q, L]
    lengths: np.ndarray  # int64 [Q]
    query_terms: np.ndarray  # float64 [Q]
    corpus: np.ndarray | None = None  # float64 [Q]

    @classmethod
    def from_run(cls, run: Mapping[str, Mapping[str, float]], query_lengths: Mapping[str, int] | None = None,
                 corpus_scores: Mapping[str, float] | None = None) -> "ScoreMatrix":
        qids = tuple(run)
        lengths = np.array([len(run[q]) for q in qids], dtype=np.int64)
        width = int(lengths.max()) if len(qids) else 0
        scores = np.full((len(qids), max(width, 1)), np.nan)
        for row, qid in enumerate(qids):  # filling is per query; every predictor below is vectorised
            values = np.fromiter(run[qid].values(), dtype=np.float64, count=lengths[row])
            scores[row, :lengths[row]] = -np.sort(-values)
        terms = np.array([(query_lengths or {}).get(q, np.nan) for q in qids], float)
        corpus = None if corpus_scores is None else np.array([corpus_scores.get(q, np.nan) for q in qids], float)
        return cls(qids=qids, scores=scores, lengths=lengths, query_terms=np.where(terms > 0, terms, np.nan),
                   corpus=corpus)

    def top(self, k: int) -> np.ndarray:
        """The first ``k`` columns (NaN-padded when the lists are shorter)."""
        if self.scores.shape[1] >= k:
            return self.scores[:, :k]
        pad = np.full((self.scores.shape[0], k - self.scores.shape[1]), np.nan)
        return np.hstack([self.scores, pad])

    def has(self, k: int) -> np.ndarray:
        """Rows with at least ``k`` scores."""
        return self.lengths >= k

    def corpus_score(self, normaliser: str = CORPUS) -> np.ndarray:
        """``score(D, q)`` per query: the index's corpus score (``corpus``: NaN where not given) or the
        mean of each query's whole retrieved list (``list_mean``), module docstring."""
        if normaliser == LIST_MEAN:
            return _nanmean_rows(self.scores)
        if normaliser != CORPUS:
            raise ValueError(f"unknown normaliser {normaliser!r} (corpus, list_mean)")
        return self.corpus if self.corpus is not None else np.full(len(self.qids), np.nan)


def _nanmean_rows(matrix: np.ndarray) -> np.ndarray:
    counts = (~np.isnan(matrix)).sum(axis=1)
    sums = np.nansum(matrix, axis=1)
    with quiet_nan():
        return np.where(counts > 0, sums / np.maximum(counts, 1), np.nan)


def _defined(values: np.ndarray, ok: np.ndarray) -> np.ndarray:
    return np.where(ok & np.isfinite(values), values, np.nan)


def top_score(m: ScoreMatrix) -> np.ndarray:
    """The highest retrieval score, s_1 (no normalisation). A simple baseline of the post-retrieval
    family (e.g. Tao and Wu 2014 compare against it); an empty list gives NaN."""
    return _defined(m.scores[:, 0], m.has(1))


def sd_at_k(m: ScoreMatrix, k: int = 100) -> np.ndarray:
    """``sd@k``: the population standard deviation (ddof 0) of the top-k scores,
    sqrt((1/k) sum_{i<=k} (s_i - mean_k)^2), unnormalised (Cummins, Jose and O'Riordan 2011; the
    numerator of Shtok et al.'s NQC). Queries with fewer than k scores use all they have (at least 2)."""
    top = m.top(k)
    n = np.minimum(m.lengths, k)
    with quiet_nan():
        values = np.nanstd(top, axis=1, ddof=0) if top.size else np.full(len(n), np.nan)
    return _defined(values, n >= 2)


def nqc_at_k(m: ScoreMatrix, k: int = 100, normaliser: str = CORPUS) -> np.ndarray:
    """NQC@k (Shtok, Kurland, Carmel, Raiber and Markovits 2012, "Predicting query performance by
    query-drift estimation"): sd@k / |score(D, q)|, the population standard deviation of the top-k scores
    divided by the corpus score. ``corpus``: the collection scored as one document by the run's model
    from the index (the paper's); ``list_mean``: the mean of the query's whole retrieved list (so a
    depth-k run gives the top k's coefficient of variation). NaN when the normaliser is 0 or unknown."""
    sd = sd_at_k(m, k)
    corpus = np.abs(m.corpus_score(normaliser))
    with quiet_nan():
        return _defined(sd / corpus, corpus > 0)


def wig_at_k(m: ScoreMatrix, k: int = 5, normaliser: str = CORPUS) -> np.ndarray:
    """WIG@k (Zhou and Croft 2007, "Query performance prediction in web search environments"):
    (1/k) sum_{i<=k} (s_i - score(D, q)) / sqrt(|q|), the top k's mean gain over the corpus score,
    normalised by the square root of the query length |q| (the analyzed query terms: the index's Lucene
    analyzer, stopwords removed, repeats counted); the corpus score is the index's (``corpus``, the
    paper's) or the mean of the whole retrieved list (``list_mean``), module docstring. Needs k scores
    and |q| >= 1."""
    with quiet_nan():
        gain = np.nanmean(m.top(k), axis=1) - m.corpus_score(normaliser)
    return _defined(gain / np.sqrt(m.query_terms), m.has(k))


def smv_at_k(m: ScoreMatrix, k: int = 100, normaliser: str = CORPUS) -> np.ndarray:
    """SMV@k (Tao and Wu 2014, "Query performance prediction by considering score magnitude and
    variance together"): (1/k) sum_{i<=k} s_i |ln(s_i / mean_k)| / score(D, q), with mean_k the top k's
    mean and the corpus score the index's (``corpus``, the paper's) or the mean of the whole retrieved
    list (``list_mean``), module docstring. Needs positive scores (the logarithm): a query with a
    non-positive score among its top k gets NaN."""
    corpus = m.corpus_score(normaliser)
    top = m.top(k)
    n = np.minimum(m.lengths, k)
    with quiet_nan():
        mean_k = np.nanmean(top, axis=1)
        terms = top * np.abs(np.log(top / mean_k[:, None]))
        positive = np.all(np.isnan(top) | (top > 0), axis=1)
        value = np.nansum(terms, axis=1) / np.maximum(n, 1) / corpus
        return _defined(value, positive & (n >= 1) & (corpus > 0))


def sigma_max(m: ScoreMatrix, k: int = 100) -> np.ndarray:
    """σ_max@k (Pérez-Iglesias and Araujo 2010, "Standard deviation as a query hardness estimator"):
    max over cut-offs 2 <= j <= min(k, list length) of the population sd of the top-j scores,
    unnormalised (their σ_max; dividing by the query length gives their normalised variant). All
    cut-offs at once from running sums: var_j = E_j[s^2] - E_j[s]^2, centred on s_1 for stability."""
    top = m.top(k)
    centred = top - top[:, :1]  # shifting every score by s_1 leaves each sd unchanged
    filled = np.nan_to_num(centred)
    j = np.arange(1, top.shape[1] + 1, dtype=float)
    mean = np.cumsum(filled, axis=1) / j
    var = np.maximum(np.cumsum(filled ** 2, axis=1) / j - mean ** 2, 0.0)
    valid = (j[None, :] >= 2) & (j[None, :] <= np.minimum(m.lengths, k)[:, None])
    best = np.where(valid, np.sqrt(var), -np.inf).max(axis=1)
    return _defined(best, np.isfinite(best))
