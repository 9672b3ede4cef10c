"""The corpus score of a query, ``score(D, q)``: the retrieval model's score of the whole collection
taken as one document, the normaliser NQC, WIG and SMV were defined with (Shtok et al. 2012, Zhou and
Croft 2007, Tao and Wu 2014).

A run file does not hold it, so it is computed here from the index's statistics (a
:class:`pipeline.predict.pre_retrieval.TermMatrix`: per analyzed query term its ``df`` and ``cf``, the
index's ``N`` documents and ``T`` term occurrences) with the run's own retrieval model, as the public
QPP toolkits do (qpptk scores the collection with the run's query-likelihood model,
sum_t qtf_t ln(cf_t / T); for a BM25 run the same document is scored by BM25). Only BM25 is known
here (:class:`RetrievalModel`); a run whose model is not known (an imported file, a dense retriever)
has no corpus score, and its NQC/WIG/SMV exist only in the list-mean variant
(:mod:`pipeline.predict.post_retrieval`).
"""
from __future__ import annotations

from dataclasses import asdict, dataclass

import numpy as np

from pipeline.predict.post_retrieval import quiet_nan
from pipeline.predict.pre_retrieval import TermMatrix

# the data folder's imported runs whose model its README states (runs/run.bm25.dlYY.txt: Anserini's
# BM25 defaults for MS MARCO passage, k1 = 0.9, b = 0.4)
DATA_FOLDER_MODELS = {"bm25": ("bm25", 0.9, 0.4, "the data folder's README: Anserini's BM25 defaults")}


@dataclass(frozen=True)
class RetrievalModel:
    """The model a run was scored with, as far as the corpus score needs it."""
    name: str  # "bm25"
    k1: float
    b: float
    source: str  # who says so: the computed run's settings, or the data folder's README

    def as_dict(self) -> dict:
        return asdict(self)

    def describe(self) -> str:
        return f"BM25 (k1={self.k1:g}, b={self.b:g}; {self.source})"


def run_model(run) -> RetrievalModel | None:
    """The retrieval model of a :class:`pipeline.retrieval.retrievers.RetrieverRun`, or None when unknown:
    a BM25 run computed here (its settings), or the data folder's own BM25 run (its README)."""
    settings = (run.details or {}).get("settings", {})
    if run.kind == "computed" and run.name.startswith("bm25") and "k1" in settings:
        return RetrievalModel("bm25", float(settings["k1"]), float(settings["b"]), "the computed run's settings")
    # retrievers.imported_run words a data-folder run "imported full-corpus run (PATH)"; a user's file "imported run"
    if run.kind == "imported" and run.provenance.startswith("imported full-corpus run") and run.name in DATA_FOLDER_MODELS:
        name, k1, b, source = DATA_FOLDER_MODELS[run.name]
        return RetrievalModel(name, k1, b, source)
    return None


def bm25_corpus_score(terms: TermMatrix, k1: float, b: float) -> np.ndarray:
    """score(D, q) under Lucene's BM25 (Anserini's scorer: Lucene 9 ``BM25Similarity``, without the
    (k1 + 1) factor) of the collection D as one document of length |D| = T whose term frequencies are the
    collection frequencies, with avgdl = T / N (Lucene's sumTotalTermFreq / docCount), so |D| / avgdl = N:

        score(D, q) = sum_{t in q} ln(1 + (N - df_t + 0.5) / (df_t + 0.5)) * cf_t / (cf_t + k1 (1 - b + b N))

    summed over the query's analyzed term occurrences (a repeated term counts each time, as Lucene's
    boolean query of repeated clauses does); a term the index lacks adds 0. A query with no term the
    index has gets NaN (its NQC/WIG/SMV are undefined)."""
    with quiet_nan():
        idf = np.log(1.0 + (terms.n_docs - terms.df + 0.5) / (terms.df + 0.5))
        tf = terms.cf / (terms.cf + k1 * (1.0 - b + b * terms.n_docs))
        per_term = terms.per_term(idf * tf)
    seen = terms.seen().any(axis=1)
    return np.where(seen, np.nansum(per_term, axis=1), np.nan)


def corpus_scores(terms: TermMatrix, model: RetrievalModel) -> dict[str, float]:
    """``{qid: score(D, q)}`` of ``terms``' queries under ``model`` (queries with NaN left out)."""
    if model.name != "bm25":
        raise ValueError(f"no corpus score for retrieval model {model.name!r} (known: bm25)")
    values = bm25_corpus_score(terms, model.k1, model.b)
    return {qid: float(v) for qid, v in zip(terms.qids, values.tolist()) if np.isfinite(v)}
