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

    def definition(self) -> str:
        """The function's docstring, joined into one paragraph (formula, normalisation, source)."""
        target = self.function.func if isinstance(self.function, partial) else self.function
        return " ".join((target.__doc__ or "").split())


PRE_RETRIEVAL = (
    Predictor("query_length", PRE, pre.query_length),
    Predictor("avg_idf", PRE, pre.avg_idf),
    Predictor("max_idf", PRE, pre.max_idf),
    Predictor("sum_scq", PRE, pre.sum_scq),
    Predictor("avg_scq", PRE, pre.avg_scq),
    Predictor("max_scq", PRE, pre.max_scq),
    Predictor("avg_ictf", PRE, pre.avg_ictf),
    Predictor("scs", PRE, pre.scs),
)


def post_retrieval(k: int = DEFAULT_K, wig_k: int = DEFAULT_WIG_K) -> tuple[Predictor, ...]:
    """The post-retrieval predictors at cut-off ``k`` (WIG at ``wig_k``: :mod:`pipeline.predict.post_retrieval`)."""
    if k < 2 or wig_k < 1:
        raise ValueError(f"cut-offs must be k >= 2 and wig_k >= 1, got k={k}, wig_k={wig_k}")
    return (Predictor(f"sd@{k}", POST, partial(post.sd_at_k, k=k)),
            Predictor(f"nqc@{k}", POST, partial(post.nqc_at_k, k=k)),
            Predictor(f"wig@{wig_k}", POST, partial(post.wig_at_k, k=wig_k)),
            Predictor(f"smv@{k}", POST, partial(post.smv_at_k, k=k)),
            Predictor(f"sigma_max@{k}", POST, partial(post.sigma_max, k=k)),
            Predictor("top_score", POST, post.top_score))


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


def pre_retrieval_values(terms: pre.TermMatrix, *, partial_corpus: bool) -> list[PredictorValues]:
    """Every pre-retrieval predictor over ``terms``' queries."""
    out = []
    for p in PRE_RETRIEVAL:
        values, undefined = _values(terms.qids, p.function(terms))
        out.append(PredictorValues(p.key, p.key, PRE, "", values, undefined, partial_corpus, p.definition()))
    return out


def post_retrieval_values(retriever: str, run: Mapping[str, Mapping[str, float]],
                          queries: Mapping[str, str] | None = None, *, k: int = DEFAULT_K,
                          wig_k: int = DEFAULT_WIG_K, only: set[str] | None = None) -> list[PredictorValues]:
    """Every post-retrieval predictor of ``retriever``'s run (over ``only``'s queries when given)."""
    scoped = {q: r for q, r in run.items() if only is None or q in only}
    matrix = post.ScoreMatrix.from_run(scoped, queries)
    out = []
    for p in post_retrieval(k, wig_k):
        values, undefined = _values(matrix.qids, p.function(matrix))
        out.append(PredictorValues(f"{p.key}[{retriever}]", p.key, POST, retriever, values, undefined, False,
                                   p.definition()))
    return out
