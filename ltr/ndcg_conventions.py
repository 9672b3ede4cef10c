"""The NDCG the study reports: its cutoffs, the conventions results are computed and stored under, and the
stored metric names that carry them; importable without torch (the store and the Results page read them;
``ltr.metrics`` computes under them).

- ``NDCG_CUTOFFS``: the cutoffs reported everywhere (validation, test, store columns, tables).
- ``gain``: ``"exp"`` 2^y - 1 (default, allRank and LightGBM), ``"linear"`` y (trec_eval, ir_measures).
- ``no_relevant``: a query with no relevant document scores ``"one"`` (default), ``"zero"``, or is left
  out (``"exclude"``).
"""
NDCG_CUTOFFS = (1, 3, 5, 10)
GAINS = ("exp", "linear")
NO_RELEVANT = ("one", "zero", "exclude")
# How a convention is spelled inside a stored metric name (ir_measures style, e.g. nDCG(cutoff=10)).
_NOREL_SPELLING = {"one": "1", "zero": "0", "exclude": "excl"}
# Per-query test count of relevant documents (label > 0): lets a report leave such queries out.
N_RELEVANT = "n_relevant"


def metric_name(k: int, *, gain: str = "exp", no_relevant: str = "one") -> str:
    """The stored name of NDCG@k under a convention: ``ndcg@10(gain=exp,norel=1)``.

    Runs stored before names carried conventions used the bare ``ndcg@10`` for the default
    convention (exp gain, no-relevant = 1)."""
    if gain not in GAINS or no_relevant not in NO_RELEVANT:
        raise ValueError(f"unknown convention gain={gain!r}, no_relevant={no_relevant!r}")
    return f"ndcg@{k}(gain={gain},norel={_NOREL_SPELLING[no_relevant]})"
