"""Every predictor by name, and their per-query values as results that say what they were read from.

A :class:`Predictor` is a name, its family and the function of :mod:`pipeline.predict.pre_retrieval`
or :mod:`pipeline.predict.post_retrieval` (whose docstring is its definition); adding one is one
function there and one line here. A :class:`PredictorValues` is one predictor's values over one
dataset's queries, named ``PREDICTOR`` (pre-retrieval) or ``PREDICTOR[COMPONENT]`` (the run, generator
or judge it reads), with the queries it could not score (NaN) listed and the ``partial`` mark of
statistics read from the data folder's partial corpus.
"""
from __future__ import annotations

import math

import numpy as np
from dataclasses import asdict, dataclass, field
from functools import partial
from typing import Callable, Mapping

from pipeline.predict import post_retrieval as post
from pipeline.predict import pre_retrieval as pre

PRE, POST, GENERATION, JUDGING = "pre-retrieval", "post-retrieval", "generation", "judging"
DEFAULT_K = 100
DEFAULT_WIG_K = 5


@dataclass(frozen=True)
class Predictor:
    key: str
    family: str
    function: Callable = field(repr=False)
    reads_index: bool = True  # reads the index's statistics (so carries its partial and pool marks)

    def definition(self) -> str:
        """The function's docstring, joined into one paragraph (formula, normalisation, source)."""
        target = self.function.func if isinstance(self.function, partial) else self.function
        return " ".join((target.__doc__ or "").split())


PRE_RETRIEVAL = (
    Predictor("query_length", PRE, pre.query_length, reads_index=False),  # the analyzer only, no statistics
    Predictor("avg_idf", PRE, pre.avg_idf),
    Predictor("max_idf", PRE, pre.max_idf),
    Predictor("sum_scq", PRE, pre.sum_scq),
    Predictor("avg_scq", PRE, pre.avg_scq),
    Predictor("max_scq", PRE, pre.max_scq),
    Predictor("avg_ictf", PRE, pre.avg_ictf),
    Predictor("scs", PRE, pre.scs),
)


LIST_MEAN_SUFFIX = "_listmean"  # nqc_listmean@k: NQC normalised by the list's mean, not the corpus score


def post_retrieval(k: int = DEFAULT_K, wig_k: int = DEFAULT_WIG_K, *, canonical: bool = True
                   ) -> tuple[Predictor, ...]:
    """The post-retrieval predictors at cut-off ``k`` (WIG at ``wig_k``: :mod:`pipeline.predict.post_retrieval`):
    NQC, WIG and SMV in the list-mean variant (``nqc_listmean@k``) and, with ``canonical`` (a corpus score
    is known: the run's model and an index), in the papers' own form (``nqc@k``, normalised by the corpus score)."""
    if k < 2 or wig_k < 1:
        raise ValueError(f"cut-offs must be k >= 2 and wig_k >= 1, got k={k}, wig_k={wig_k}")
    normalised = []
    for normaliser, suffix in ([(post.CORPUS, "")] if canonical else []) + [(post.LIST_MEAN, LIST_MEAN_SUFFIX)]:
        normalised += [Predictor(f"nqc{suffix}@{k}", POST, partial(post.nqc_at_k, k=k, normaliser=normaliser)),
                       Predictor(f"wig{suffix}@{wig_k}", POST, partial(post.wig_at_k, k=wig_k, normaliser=normaliser)),
                       Predictor(f"smv{suffix}@{k}", POST, partial(post.smv_at_k, k=k, normaliser=normaliser))]
    return (Predictor(f"sd@{k}", POST, partial(post.sd_at_k, k=k)), *normalised,
            Predictor(f"sigma_max@{k}", POST, partial(post.sigma_max, k=k)),
            Predictor("top_score", POST, post.top_score))


def uses_corpus_score(predictor: Predictor) -> bool:
    """Whether the predictor reads the index's corpus score (and so inherits its statistics' marks)."""
    return isinstance(predictor.function, partial) and predictor.function.keywords.get("normaliser") == post.CORPUS


@dataclass
class PredictorValues:
    """One predictor's values over one dataset's queries (``values``: the queries it could score)."""
    name: str  # PREDICTOR or PREDICTOR[COMPONENT]
    predictor: str
    family: str
    component: str  # the run, generator or judge read ("" for pre-retrieval: the index is in the provenance)
    values: dict[str, float]
    undefined: list[str] = field(default_factory=list)  # queries it could not score (NaN)
    partial: bool = False  # read from the data folder's partial corpus
    definition: str = ""
    pool: bool = False  # reads an index built from these topics' pools (left out of verdicts by default)
    k: int | None = None  # the cut-off the value was taken at (None: no cut-off)
    normaliser: str = ""  # NQC/WIG/SMV: "corpus" (the index's corpus score under model) or "list_mean"
    model: str = ""  # the retrieval model the corpus score was computed with
    beside: str = ""  # a pool-marked NQC@k: the name of its index-free numerator sd@k (σ@k), shown beside it
    gate: str = ""  # why a verdict cannot rest on it: its model is sub-1B or of unknown size ("" when it can)

    def as_dict(self, with_values: bool = False) -> dict:
        out = asdict(self)
        if not with_values:
            out.pop("values")
        out["n_queries"] = len(self.values)
        return out


def _values(qids, array) -> tuple[dict[str, float], list[str]]:
    values, undefined = {}, []
    for qid, value in zip(qids, array.tolist()):
        if value is None or math.isnan(value):
            undefined.append(qid)
        else:
            values[qid] = float(value)
    return values, undefined


def pre_retrieval_values(terms: pre.TermMatrix, *, partial_corpus: bool, pool: bool = False) -> list[PredictorValues]:
    """Every pre-retrieval predictor over ``terms``' queries (``pool``: the index is built from their pools;
    both marks only on those that read the index's statistics, not on the analyzed query length)."""
    out = []
    for p in PRE_RETRIEVAL:
        values, undefined = _values(terms.qids, p.function(terms))
        out.append(PredictorValues(p.key, p.key, PRE, "", values, undefined, partial_corpus and p.reads_index,
                                   p.definition(), pool=pool and p.reads_index))
    return out


def post_retrieval_values(retriever: str, run: Mapping[str, Mapping[str, float]],
                          query_lengths: Mapping[str, int] | None = None, *, k: int = DEFAULT_K,
                          wig_k: int = DEFAULT_WIG_K, only: set[str] | None = None,
                          corpus_scores: Mapping[str, float] | None = None, model: str = "",
                          partial_corpus: bool = False, pool: bool = False) -> list[PredictorValues]:
    """Every post-retrieval predictor of ``retriever``'s run (over ``only``'s queries when given); WIG
    divides by ``query_lengths`` (``{qid: analyzed |q|}``: :meth:`pipeline.predict.pre_retrieval.TermMatrix.lengths`;
    without it WIG is undefined); the canonical NQC/WIG/SMV only with ``corpus_scores`` (``{qid: score(D, q)}``
    under ``model``, from an index whose ``partial_corpus`` and ``pool`` marks they carry). A pool-marked
    NQC@k names sd@k, its numerator, which reads no index, as the value ``beside`` it."""
    scoped = {q: r for q, r in run.items() if only is None or q in only}
    matrix = post.ScoreMatrix.from_run(scoped, query_lengths, corpus_scores)
    out = []
    for p in post_retrieval(k, wig_k, canonical=corpus_scores is not None):
        values, undefined = _values(matrix.qids, p.function(matrix))
        keywords = p.function.keywords if isinstance(p.function, partial) else {}
        corpus = uses_corpus_score(p)
        beside = f"sd@{k}[{retriever}]" if pool and corpus and p.key.startswith("nqc@") else ""
        out.append(PredictorValues(f"{p.key}[{retriever}]", p.key, POST, retriever, values, undefined,
                                   partial_corpus and corpus, p.definition(), k=keywords.get("k"),
                                   normaliser=keywords.get("normaliser", ""), model=model if corpus else "",
                                   pool=pool and corpus, beside=beside))
    return out


def relevance_model_values(retriever: str, run: Mapping[str, Mapping[str, float]], queries: Mapping[str, str],
                           stats, k: int, bases: Mapping[str, PredictorValues]) -> tuple[list[PredictorValues], int]:
    """Clarity@k and UEF of each NQC/WIG/SMV in ``bases`` (``{predictor key: values}`` of the same run)
    from the index's document vectors (:mod:`pipeline.predict.relevance_model`); with how many top-k
    documents the index lacked. The index's ``partial`` and ``pool`` marks carry over."""
    from pipeline.predict import relevance_model as rm

    clarity, similarity, missing = {}, {}, 0
    for qid, text in queries.items():
        if not run.get(qid):
            continue
        top, lacked = rm.top_documents(stats, run[qid], text, k)
        missing += lacked
        clarity[qid], similarity[qid] = rm.clarity(top), rm.uef_similarity(top)
    qids = tuple(clarity)
    out = []

    def add(key: str, values: dict, definition: str, base: PredictorValues | None = None):
        found, undefined = _values(qids, np.array([values.get(q, np.nan) for q in qids], float))
        out.append(PredictorValues(f"{key}[{retriever}]", key, POST, retriever, found, undefined, stats.partial,
                                   " ".join(definition.split()), pool=stats.pool, k=k if base is None else base.k,
                                   normaliser=base.normaliser if base else "", model=base.model if base else ""))

    add(f"clarity@{k}", clarity, rm.clarity.__doc__)
    for key, base in bases.items():
        uef = {q: rm.uef(similarity[q], base.values[q]) for q in qids if q in base.values}
        add(f"uef_{key}", uef, f"UEF over {key} with the similarity at k={k}: {rm.uef.__doc__} "
                               f"{rm.uef_similarity.__doc__}", base)
    return out, missing
