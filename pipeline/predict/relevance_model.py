"""Predictors from the language models of a query's top-k documents (pyserini's document vectors): Clarity
and UEF, both over the relevance model RM1 of the top k.

Per query, the top-k documents of the run (its ranking) become a :class:`TopDocuments`: their term
counts over the vocabulary V of those documents (Anserini's analyzed terms, as the index stores them),
their lengths, and each term's collection probability P_coll(w) = cf_w / T from the index. Definitions
(Cronen-Townsend, Zhou and Croft 2002; Lavrenko and Croft 2001 for RM1):

- a document's model, Jelinek-Mercer smoothed: P(w|D) = λ tf(w, D) / |D| + (1 - λ) P_coll(w), λ = 0.6
  (Cronen-Townsend et al.'s value);
- the query's likelihood under it, P(Q|D) = prod_{q in Q} P(q|D) over the query's analyzed term
  occurrences the index has (a term it lacks has P_coll = 0 and no model: left out);
- the weight of a document, P(D|Q) = P(Q|D) / sum_{D' in R} P(Q|D') (uniform prior over the top k R);
- RM1, the query's model: P(w|R) = sum_{D in R} P(w|D) P(D|Q) over w in V.

Documents the index does not hold are left out of R (counted); a query with fewer than two documents
left, or no query term the index has, gets NaN.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Mapping, Sequence

import numpy as np

from pipeline.predict.post_retrieval import quiet_nan

LAMBDA = 0.6  # Jelinek-Mercer weight of the document (Cronen-Townsend et al. 2002)


@dataclass(frozen=True)
class TopDocuments:
    """One query's top documents: ``tf[d, v]`` the count of term ``vocabulary[v]`` in document ``d``
    (in rank order), ``lengths[d]`` its length, ``p_coll[v]`` = cf / T, ``scores[d]`` its retrieval
    score, ``query[v]`` how often the query holds term v (0 for a term of the documents only)."""
    vocabulary: tuple[str, ...]
    tf: np.ndarray  # [D, V]
    lengths: np.ndarray  # [D]
    p_coll: np.ndarray  # [V]
    scores: np.ndarray  # [D]
    query: np.ndarray  # [V]

    @classmethod
    def build(cls, vectors: Sequence[Mapping[str, int]], scores: Sequence[float], query_terms: Sequence[str],
              collection: Mapping[str, float]) -> "TopDocuments":
        """From the documents' term counts (rank order), their scores, the analyzed query terms and
        ``collection`` {term: P_coll} (a query term absent from ``collection`` or with 0 is left out)."""
        vocabulary = {}
        for vector in vectors:
            for term in vector:
                vocabulary.setdefault(term, len(vocabulary))
        for term in query_terms:
            if collection.get(term, 0) > 0:
                vocabulary.setdefault(term, len(vocabulary))
        tf = np.zeros((len(vectors), len(vocabulary)))
        for d, vector in enumerate(vectors):
            for term, count in vector.items():
                tf[d, vocabulary[term]] = count
        query = np.zeros(len(vocabulary))
        for term in query_terms:
            if term in vocabulary and collection.get(term, 0) > 0:
                query[vocabulary[term]] += 1
        return cls(tuple(vocabulary), tf, tf.sum(axis=1), np.array([collection.get(t, 0.0) for t in vocabulary]),
                   np.asarray(scores, float), query)

    def document_models(self, lam: float = LAMBDA) -> np.ndarray:
        """P(w|D) [D, V], Jelinek-Mercer smoothed (module docstring)."""
        with quiet_nan():
            return lam * self.tf / np.maximum(self.lengths, 1)[:, None] + (1 - lam) * self.p_coll[None, :]

    def defined(self) -> bool:
        return self.tf.shape[0] >= 2 and self.query.sum() > 0

    def rm1(self, lam: float = LAMBDA) -> tuple[np.ndarray, np.ndarray]:
        """``(P(w|R) [V], P(D|Q) [D])``: RM1 and the documents' weights (module docstring), the
        likelihoods normalised in log space (products of small probabilities underflow)."""
        models = self.document_models(lam)
        with quiet_nan():
            log_likelihood = np.log(models) @ self.query  # sum over the query's term occurrences
        weights = np.exp(log_likelihood - log_likelihood.max())
        weights /= weights.sum()
        return weights @ models, weights


def clarity(top: TopDocuments, lam: float = LAMBDA) -> float:
    """Clarity (Cronen-Townsend, Zhou and Croft 2002, "Predicting query performance"): the KL divergence, in
    bits, of the query's relevance model from the collection's model over the top documents' vocabulary V,
    sum_{w in V} P(w|R) log2(P(w|R) / P_coll(w)), with P(w|R) RM1 of the top k (module docstring);
    higher = the top documents' language is further from the collection's = a clearer query. NaN when
    undefined (fewer than two documents, no query term in the index)."""
    if not top.defined():
        return float("nan")
    p_r, _ = top.rm1(lam)
    keep = (p_r > 0) & (top.p_coll > 0)
    return float(np.sum(p_r[keep] * np.log2(p_r[keep] / top.p_coll[keep])))


def uef_similarity(top: TopDocuments, lam: float = LAMBDA) -> float:
    """The UEF factor (Shtok, Kurland and Carmel 2010, "Using statistical decision theory and relevance
    models for query-performance prediction"): the Pearson correlation between the run's scores of its
    top-k documents and their scores under the relevance model, -CE(P(.|R) || P(.|D)) =
    sum_{w in V} P(w|R) ln P(w|D): how much re-ranking the list by RM1 agrees with the list (1 = fully).
    NaN when undefined or when either score vector is constant."""
    if not top.defined():
        return float("nan")
    p_r, _ = top.rm1(lam)
    with quiet_nan():
        rm_scores = np.log(top.document_models(lam)) @ p_r
    if np.ptp(rm_scores) == 0 or np.ptp(top.scores) == 0:
        return float("nan")
    return float(np.corrcoef(top.scores, rm_scores)[0, 1])


def uef(similarity: float, base: float) -> float:
    """UEF(Pred) = Sim(L, π(L; RM1)) × Pred(q) (Shtok, Kurland and Carmel 2010): a predictor ``base``
    (NQC, WIG, SMV of the same run and k) weighted by :func:`uef_similarity`."""
    return similarity * base


def top_documents(stats, ranking: Mapping[str, float], query_text: str, k: int) -> tuple[TopDocuments, int]:
    """``(TopDocuments, documents missing)`` of one query's top k from an open
    :class:`pipeline.predict.index_stats.IndexStatistics` (pyserini's stored document vectors; every term's cf
    looked up once per process)."""
    top = sorted(ranking.items(), key=lambda item: -item[1])[:k]
    vectors, scores, missing = [], [], 0
    for pid, score in top:
        vector = stats.document_vector(pid)
        if vector is None:
            missing += 1
            continue
        vectors.append(vector)
        scores.append(score)
    query_terms = stats.analyze(query_text)
    seen: dict[str, int] = {}
    for vector in vectors:
        for term, count in vector.items():
            seen[term] = seen.get(term, 0) + count
    # a stored term whose lookup fails (measured: a mis-encoded term of one DL19 passage reads cf 0) is at
    # least as frequent in the collection as in these documents: cf is floored at that count, never 0
    collection = {t: max(stats.counts(t)[1], seen.get(t, 0)) / stats.n_tokens for t in set(query_terms) | set(seen)}
    return TopDocuments.build(vectors, scores, query_terms, collection), missing
