"""Pre-retrieval predictors: one small function each, from the query and an index's term statistics.

Their input is a :class:`TermMatrix`: per query, the analyzed query terms (Anserini's analyzer: Porter
stemming, Lucene's English stopwords, the analyzer that built the index) with each term occurrence's
document frequency ``df`` and collection frequency ``cf``, padded with NaN; and the index's number of
documents ``N`` and of term occurrences ``T``. Read from a Lucene index by
:mod:`pipeline.predict.index_stats`.

Conventions (stated once, used by every function):

- a repeated query term counts once per occurrence (averages run over the query's term occurrences;
  for SCS this is exactly its sum over distinct terms weighted by P_ml(w|q) = qtf / |q|);
- a term the index has never seen (df = 0) has no IDF, SCQ, ICTF or collection probability: it is left
  out of those statistics (query length still counts it), and a query none of whose terms the index
  has gets NaN, which the evaluation leaves out and counts;
- logarithms are natural except where the source paper used log2 (ICTF and SCS), as written below.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from pipeline.predict.post_retrieval import quiet_nan


@dataclass(frozen=True)
class TermMatrix:
    """``df[q, j]``, ``cf[q, j]``: the j-th analyzed term occurrence of query ``qids[q]`` (NaN past its
    terms); ``term_ids[q, j]`` which term it is (equal ids: the same term; -1 past its terms);
    ``n_terms[q]``: its analyzed length; ``n_docs`` (N) and ``n_tokens`` (T) of the index."""
    qids: tuple[str, ...]
    df: np.ndarray  # float64 [Q, L]
    cf: np.ndarray  # float64 [Q, L]
    term_ids: np.ndarray  # int64 [Q, L]
    n_terms: np.ndarray  # int64 [Q]
    n_docs: int
    n_tokens: int

    @classmethod
    def from_counts(cls, counts: dict[str, list[tuple[str, int, int]]], n_docs: int, n_tokens: int
                    ) -> "TermMatrix":
        """From ``{qid: [(term, df, cf) per analyzed term occurrence]}``."""
        qids = tuple(counts)
        width = max((len(v) for v in counts.values()), default=0) or 1
        df = np.full((len(qids), width), np.nan)
        cf = np.full((len(qids), width), np.nan)
        term_ids = np.full((len(qids), width), -1, dtype=np.int64)
        vocabulary: dict[str, int] = {}
        for row, qid in enumerate(qids):
            for col, (term, d, c) in enumerate(counts[qid]):
                df[row, col], cf[row, col] = d, c
                term_ids[row, col] = vocabulary.setdefault(term, len(vocabulary))
        return cls(qids=qids, df=df, cf=cf, term_ids=term_ids, n_terms=np.array([len(counts[q]) for q in qids], dtype=np.int64),
                   n_docs=int(n_docs), n_tokens=int(n_tokens))

    def lengths(self) -> dict[str, int]:
        """``{qid: |q|}``, the analyzed query length (WIG's normaliser: the same analyzer as the index)."""
        return dict(zip(self.qids, self.n_terms.tolist()))

    def seen(self) -> np.ndarray:
        """Term occurrences the index has (df > 0); padding and unseen terms are False."""
        return np.nan_to_num(self.df) > 0

    def per_term(self, values: np.ndarray) -> np.ndarray:
        """``values`` where the term is seen, NaN elsewhere (so nan-reductions skip the rest)."""
        return np.where(self.seen(), values, np.nan)


def _idf(t: TermMatrix) -> np.ndarray:
    with quiet_nan():
        return t.per_term(np.log(t.n_docs / t.df))


def _scq(t: TermMatrix) -> np.ndarray:
    with quiet_nan():
        return t.per_term((1.0 + np.log(t.cf)) * np.log(1.0 + t.n_docs / t.df))


def _reduce(values: np.ndarray, how) -> np.ndarray:
    with quiet_nan():
        return how(values, axis=1)


def query_length(t: TermMatrix) -> np.ndarray:
    """The number of analyzed query terms |q| (after stopword removal and stemming, repeats counted);
    He and Ounis 2004 ("Inferring query performance using pre-retrieval predictors") list it among the
    pre-retrieval predictors. No normalisation; 0 for a query of stopwords only."""
    return t.n_terms.astype(float)


def avg_idf(t: TermMatrix) -> np.ndarray:
    """AvgIDF = (1/|q|) sum_{t in q} ln(N / df_t), over the query's seen terms (He and Ounis 2004;
    Cronen-Townsend et al. 2002 use it as a clarity baseline)."""
    return _reduce(_idf(t), np.nanmean)


def max_idf(t: TermMatrix) -> np.ndarray:
    """MaxIDF = max_{t in q} ln(N / df_t) over the query's seen terms (Scholer, Williams and Turpin
    2004; He and Ounis 2004's family)."""
    return _reduce(_idf(t), np.nanmax)


def sum_scq(t: TermMatrix) -> np.ndarray:
    """SumSCQ = sum_{t in q} (1 + ln cf_t) ln(1 + N / df_t): the query's similarity to the collection
    (Zhao, Scholer and Tsegay 2008, "Effective pre-retrieval query performance prediction using
    similarity and variability evidence"). Not normalised by length (that is AvgSCQ)."""
    values = _scq(t)
    return np.where(np.isnan(values).all(axis=1), np.nan, np.nansum(values, axis=1))


def avg_scq(t: TermMatrix) -> np.ndarray:
    """AvgSCQ = SumSCQ / |q| over the seen terms (Zhao, Scholer and Tsegay 2008)."""
    return _reduce(_scq(t), np.nanmean)


def max_scq(t: TermMatrix) -> np.ndarray:
    """MaxSCQ = max_{t in q} (1 + ln cf_t) ln(1 + N / df_t) (Zhao, Scholer and Tsegay 2008)."""
    return _reduce(_scq(t), np.nanmax)


def avg_ictf(t: TermMatrix) -> np.ndarray:
    """AvgICTF = (1/|q|) sum_{t in q} log2(T / cf_t), the average inverse collection term frequency
    (He and Ounis 2004), T the index's term occurrences, over the seen terms."""
    with quiet_nan():
        return _reduce(t.per_term(np.log2(t.n_tokens / t.cf)), np.nanmean)


def scs(t: TermMatrix) -> np.ndarray:
    """SCS, the simplified clarity score (He and Ounis 2004):
    sum_{w in q} P_ml(w|q) log2(P_ml(w|q) / P_coll(w)), with P_ml(w|q) = qtf_w / |q| and
    P_coll(w) = cf_w / T; summed over term occurrences each weighing 1/|q| (module docstring), |q| the
    seen terms (an unseen term has no P_coll)."""
    seen = t.seen()
    n_seen = seen.sum(axis=1)
    same = (t.term_ids[:, :, None] == t.term_ids[:, None, :]) & seen[:, :, None] & seen[:, None, :]
    qtf = same.sum(axis=2).astype(float)  # each occurrence's term's count among the seen terms
    with quiet_nan():
        p_q = qtf / n_seen[:, None]
        p_c = t.cf / t.n_tokens
        terms = t.per_term(np.log2(p_q / p_c)) / n_seen[:, None]
        return np.where(n_seen > 0, np.nansum(terms, axis=1), np.nan)

