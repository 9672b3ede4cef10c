"""How well each predictor foresees each task's failure: one row per (scope, predictor, target).

For a predictor x and a target y (a task's per-query value: nDCG@10 of a retriever, BERTScore F1 of a
generator, disagreement of a judge in a setup), over the queries that have both values (``n``; each
task's own queries, not only the three tasks' common universe):

- Kendall τ-b and Pearson r with their two-sided p-values (``scipy.stats.kendalltau``, ``pearsonr``),
  and Holm's correction of each across the whole table (every scope, predictor and target:
  :func:`core.multiple_testing.holm_adjust`);
- ROC AUC of the task's hard set (``sklearn.metrics.roc_auc_score``), *oriented so that a higher
  predictor value predicts an easier query*: the positive class is "not in the hard set", so AUC > 0.5
  means the expected direction (higher predictor, easier query) and AUC < 0.5 the opposite;
- ``tau_easier``: τ signed so that positive means the same (τ for a target whose higher value is
  easier, -τ for one whose higher value is harder, such as disagreement), the heatmap's colour;
- sMARE, the scaled mean absolute rank error (Faggioli, Zendel, Culpepper, Ferro and Scholer, ECIR 2021,
  "An enhanced evaluation framework for query performance prediction"): each query's scaled absolute rank
  error sARE = |r_pred(q) - r_easy(q)| / n between its rank by the predictor and by the target's easiness
  (average ranks for ties), and sMARE their mean: 0 = the same order, about 1/3 for an unrelated
  predictor, lower is better; its interval resamples the queries' sARE (the per-query unit of the paper's
  analysis of variance);
- 95% percentile bootstrap intervals of τ, r and AUC over queries (``n_boot`` resamples, a seeded
  ``numpy.random.default_rng(seed)``, both recorded); the resampled statistics are computed at once
  over the resamples (each a count vector: τ-b and AUC as quadratic forms of the counts, r from
  count-weighted moments), equal to
  scipy's and scikit-learn's on the same sample (tests).

Pooled over datasets, with the dataset as a stratum: the pooled τ, r and AUC are the n-weighted means
of the per-dataset values (queries are compared only within their dataset: the datasets' scales
differ), their intervals come from a stratified bootstrap (each dataset's queries resampled within
it), and their p-values combine the per-dataset tests by Stouffer's method with weights sqrt(n)
(``scipy.stats.combine_pvalues`` on one-sided p-values in the direction of the pooled estimate,
doubled back to two-sided).
"""
from __future__ import annotations

import math
from functools import lru_cache
from dataclasses import asdict, dataclass, field
from typing import Mapping, Sequence

import numpy as np
from scipy import stats

from core.multiple_testing import holm_adjust
from pipeline.predict import verdict

N_BOOT = 1000
SEED = 0
CONFIDENCE = 0.95
MIN_QUERIES = 5  # fewer shared queries: no row figures (n shown, reason given)
MIN_VERDICT_N = verdict.MIN_VERDICT_N  # fewer shared queries: figures, and an inconclusive verdict
POOLED = "pooled"
POOL_LEFT_OUT = "left out (pool statistics)"
GATED = "no verdict (model gate)"  # a target or predictor made by a sub-1B or unknown-size model
POOL_NOTE = ("pool: statistics from an index built from these topics' own judged pools and top lists (the data "
             "folder's passages), conditioned on the queries being predicted; such predictors are left out of "
             "every 'foresees' verdict (a full-corpus index, --index or irdash.toml [qpp_index], removes the mark)")
K_SWEEP = (5, 10, 20, 50, 100, 500)
K_SWEEP_NOTE = ("k sweep: τ-b [95% bootstrap interval] and sMARE per cut-off on the same queries the table is "
                "measured on, to show how k matters; the table's k is fixed beforehand (--k, --wig-k), never "
                "chosen from this sweep; 'pool' marks values that read a pool-built index")
SMARE_NOTE = "sMARE: scaled mean absolute rank error (Faggioli et al. 2021), 0 = the target's order, ~1/3 = unrelated"
AUC_NOTE = "AUC: hard-set membership, oriented so that a higher predictor value predicts an easier query " \
           "(AUC > 0.5 = the expected direction)"


@dataclass(frozen=True)
class Target:
    """One task's per-query values on one dataset, with its direction and hard set."""
    name: str  # e.g. nDCG@10[bm25], BERTScore F1[embedded:smollm2], disagreement[llama-3.3-70b, binary]
    task: str  # h2r | h2g | h2j
    dataset: str
    values: Mapping[str, float]
    higher_is_easier: bool
    hard: frozenset[str]  # the task's hard set over its own queries (the study's rule)
    provenance: dict = field(default_factory=dict)
    gate: str = ""  # why no verdict may rest on it: the model that made it is sub-1B or of unknown size


@dataclass
class Row:
    dataset: str  # a dataset, or "pooled"
    predictor: str
    family: str
    target: str
    task: str
    n: int
    n_hard: int
    kendall_tau: float | None = None
    kendall_p: float | None = None
    pearson_r: float | None = None
    pearson_p: float | None = None
    auc: float | None = None
    tau_easier: float | None = None
    intervals: dict = field(default_factory=dict)  # {"kendall_tau": [lo, hi], "pearson_r": ..., "auc": ...}
    kendall_p_holm: float | None = None
    pearson_p_holm: float | None = None
    partial: bool = False
    higher_is_easier: bool = True
    note: str = ""
    pool: bool = False  # the predictor reads an index built from these topics' pools
    smare: float | None = None  # scaled mean absolute rank error (module docstring; lower is better)
    gate: str = ""  # why no verdict may rest on the row: the target's or predictor's model (sub-1B, unknown size)

    def verdict(self, include_pool: bool = False) -> str:
        """Whether the predictor foresees the target here (:meth:`verdict_reason` says why)."""
        return self.verdict_reason(include_pool)[0]

    def verdict_reason(self, include_pool: bool = False) -> tuple[str, str]:
        """``(verdict, reason)`` of the claim "the predictor foresees the target" read by the shared inference
        core (:mod:`pipeline.predict.verdict`): ``foresees``, ``does not foresee`` or ``inconclusive`` (with
        the power), ``not measurable`` (no τ); a target or predictor made by a sub-1B or unknown-size model
        reads ``no verdict (model gate)`` and a predictor read from pool-built statistics ``left out (pool
        statistics)`` unless ``include_pool``, each with the figures' own verdict in its reason."""
        interval = self.intervals.get("kendall_tau")
        if self.kendall_tau is None or not interval or self.kendall_p_holm is None:
            return (GATED, self.gate) if self.gate else ("not measurable", self.note or "no τ")
        sign = 1 if self.higher_is_easier else -1
        low, high = sorted((sign * interval[0], sign * interval[1]))
        decision = verdict.decide(sign * self.kendall_tau, self.n, self.kendall_p_holm, (low, high))
        if self.gate:
            return GATED, verdict.reason(decision.gated([self.gate]))
        if self.pool and not include_pool:
            return POOL_LEFT_OUT, verdict.reason(decision.gated(
                ["reads an index built from these topics' pools (--pool-in-verdicts counts it)"]))
        return verdict.VERDICTS.get(decision.verdict, decision.verdict), verdict.reason(decision)

    def as_dict(self) -> dict:
        # p_holm: the table's headline (τ's Holm p); verdict: the default one (pool statistics left out)
        verdict, reason = self.verdict_reason()
        return {**asdict(self), "p_holm": self.kendall_p_holm, "verdict": verdict, "verdict_reason": reason}



# ---- the statistics over resamples, each resample as its counts ------------------------------------
# A resample of n queries is its counts c_b (how often each query was drawn), so every statistic below is
# a sum over query pairs or queries weighted by counts: quadratic forms c_b' M c_b and products C @ v,
# all resamples at once in a few matrix products. They run on one BLAS thread: at these sizes
# ([1000, 54] @ [54, 162]) threads only contend (5x slower on a loaded 2-core machine, measured).
@lru_cache(maxsize=1)
def _blas() -> object:
    from threadpoolctl import ThreadpoolController

    return ThreadpoolController()  # scans the loaded libraries once (a scan per call cost 27 ms)


def one_blas_thread():
    """A context in which BLAS runs on one thread."""
    return _blas().limit(limits=1, user_api="blas")


def resample_counts(idx: np.ndarray, n: int) -> np.ndarray:
    """[B, n]: how often each of the n queries is drawn in each resample ``idx[b]`` (one row: ``idx`` [n])."""
    idx = np.atleast_2d(idx)
    offsets = (np.arange(idx.shape[0]) * n)[:, None]
    return np.bincount((idx + offsets).ravel(), minlength=idx.shape[0] * n).reshape(idx.shape[0], n).astype(float)


def _pair_sums(counts: np.ndarray, *matrices: np.ndarray) -> list[np.ndarray]:
    """1/2 c_b' M c_b for each matrix M (zero diagonal: each unordered pair of draws once), one product."""
    n = counts.shape[1]
    with one_blas_thread():
        products = counts @ np.hstack(matrices)
    return [0.5 * (products[:, k * n:(k + 1) * n] * counts).sum(axis=1) for k in range(len(matrices))]


def kendall_tau_b(x: np.ndarray, y: np.ndarray, counts: np.ndarray | None = None) -> np.ndarray:
    """τ-b = S / sqrt((n0 - n1)(n0 - n2)) (S concordant minus discordant pairs, n1 and n2 the pairs tied
    in x and in y) of each resample (``counts`` [B, n]; None: the sample itself); NaN when x or y is
    constant: S_b = 1/2 c_b' (sign(x_i - x_j) sign(y_i - y_j)) c_b, untied pairs 1/2 c_b' |sign(.)| c_b."""
    counts = np.ones((1, len(x))) if counts is None else counts
    sx, sy = np.sign(x[:, None] - x[None, :]), np.sign(y[:, None] - y[None, :])
    s, untied_x, untied_y = _pair_sums(counts, sx * sy, np.abs(sx), np.abs(sy))
    denominator = np.sqrt(untied_x * untied_y)
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(denominator > 0, s / denominator, np.nan)


def pearson_r(x: np.ndarray, y: np.ndarray, counts: np.ndarray | None = None) -> np.ndarray:
    """Pearson's r of each resample from count-weighted moments; NaN when a resample is constant."""
    counts = np.ones((1, len(x))) if counts is None else counts
    x, y = x - x.mean(), y - y.mean()  # centred first: the moments below then cancel little
    m = counts.sum(axis=1)
    with one_blas_thread():
        sx, sy, sxx, syy, sxy = (counts @ np.column_stack([x, y, x * x, y * y, x * y])).T
    cov, vx, vy = sxy - sx * sy / m, sxx - sx * sx / m, syy - sy * sy / m
    with np.errstate(invalid="ignore", divide="ignore"):
        r = cov / np.sqrt(vx * vy)
    # a resample of one repeated value has no variance; what rounding leaves of it is far below 1e-12 of sxx
    return np.where((vx > 1e-12 * sxx) & (vy > 1e-12 * syy), r, np.nan)


def easy_auc(x: np.ndarray, easy: np.ndarray, counts: np.ndarray | None = None) -> np.ndarray:
    """ROC AUC of ``easy`` (True: not in the hard set) scored by ``x``, per resample: the Mann-Whitney
    statistic (c∘easy)' G (c∘hard) / (n_easy n_hard), G_ij = 1[x_i > x_j] + 1/2 [x_i = x_j];
    NaN when a resample has one class only."""
    counts = np.ones((1, len(x))) if counts is None else counts
    wins = (x[:, None] > x[None, :]) + 0.5 * (x[:, None] == x[None, :])
    positive, negative = counts * easy, counts * ~easy
    with one_blas_thread():
        u = ((positive @ wins) * negative).sum(axis=1)
    n_pos, n_neg = positive.sum(axis=1), negative.sum(axis=1)
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where((n_pos > 0) & (n_neg > 0), u / (n_pos * n_neg), np.nan)


def scaled_rank_errors(x: np.ndarray, easiness: np.ndarray) -> np.ndarray:
    """Each query's sARE = |r_x(q) - r_e(q)| / n (Faggioli et al. 2021): its rank by the predictor and by
    the target's easiness (``easiness``: the target, negated when its higher value is harder), average
    ranks for ties (``scipy.stats.rankdata``)."""
    return np.abs(stats.rankdata(x) - stats.rankdata(easiness)) / len(x)


def smare(errors: np.ndarray, counts: np.ndarray | None = None) -> np.ndarray:
    """sMARE, the mean of the queries' sARE (:func:`scaled_rank_errors`), per resample of the queries."""
    counts = np.ones((1, len(errors))) if counts is None else counts
    return (counts @ errors) / counts.sum(axis=1)


def resample_indices(strata: Sequence, n_boot: int, rng: np.random.Generator) -> np.ndarray:
    """[n_boot, n] indices drawn with replacement within each stratum (one stratum: plain bootstrap)."""
    strata = np.asarray(strata)
    out = np.empty((n_boot, len(strata)), dtype=np.int64)
    for value in dict.fromkeys(strata.tolist()):  # a loop over strata (datasets), not queries
        members = np.flatnonzero(strata == value)
        out[:, members] = members[rng.integers(0, len(members), size=(n_boot, len(members)))]
    return out


@lru_cache(maxsize=32)
def plain_resamples(n: int, n_boot: int, seed: int) -> np.ndarray:
    """The counts of the seeded plain bootstrap of n queries (the same draw for every row of that n: kept once)."""
    out = resample_counts(resample_indices(np.zeros(n), n_boot, np.random.default_rng(seed)), n)
    out.setflags(write=False)
    return out


def _interval(samples: np.ndarray) -> list[float] | None:
    finite = samples[np.isfinite(samples)]
    if finite.size < 0.9 * samples.size:  # a statistic undefined in over a tenth of the resamples
        return None
    alpha = (1 - CONFIDENCE) / 2
    return [float(np.quantile(finite, alpha)), float(np.quantile(finite, 1 - alpha))]


def _num(value) -> float | None:
    return None if value is None or not np.isfinite(value) else float(value)


# ---- one dataset ---------------------------------------------------------------------------------
def paired(predictor: Mapping[str, float], target: Target) -> tuple[list[str], np.ndarray, np.ndarray, np.ndarray]:
    """The queries with both values (target order), their predictor and target values, and easiness."""
    qids = [q for q in target.values if q in predictor]
    x = np.array([predictor[q] for q in qids], dtype=float)
    y = np.array([target.values[q] for q in qids], dtype=float)
    return qids, x, y, np.array([q not in target.hard for q in qids], dtype=bool)  # bool even when empty


def evaluate_pair(predictor: Mapping[str, float], target: Target, *, name: str, family: str, partial: bool = False,
                  n_boot: int = N_BOOT, seed: int = SEED) -> Row:
    """One dataset's row for predictor ``name`` against ``target``."""
    qids, x, y, easy = paired(predictor, target)
    row = Row(target.dataset, name, family, target.name, target.task, len(qids), int((~easy).sum()),
              partial=partial, higher_is_easier=target.higher_is_easier)
    if len(qids) < MIN_QUERIES:
        row.note = f"{len(qids)} queries have both values (fewer than {MIN_QUERIES})"
        return row
    if np.ptp(x) == 0 or np.ptp(y) == 0:
        row.note = "constant " + ("predictor" if np.ptp(x) == 0 else "target") + " over these queries"
        return row
    tau = stats.kendalltau(x, y, variant="b")
    r = stats.pearsonr(x, y)
    row.kendall_tau, row.kendall_p = float(tau.statistic), float(tau.pvalue)
    row.pearson_r, row.pearson_p = float(r.statistic), float(r.pvalue)
    row.tau_easier = row.kendall_tau if target.higher_is_easier else -row.kendall_tau
    errors = scaled_rank_errors(x, y if target.higher_is_easier else -y)
    row.smare = float(errors.mean())
    if easy.all() or not easy.any():
        row.note = "the hard set is empty or every query among these: no AUC"
    else:
        from sklearn.metrics import roc_auc_score

        row.auc = float(roc_auc_score(easy, x))
    counts = plain_resamples(len(qids), n_boot, seed)
    row.intervals = {"kendall_tau": _interval(kendall_tau_b(x, y, counts)),
                     "pearson_r": _interval(pearson_r(x, y, counts)),
                     "auc": _interval(easy_auc(x, easy, counts)) if row.auc is not None else None,
                     "smare": _interval(smare(errors, counts))}
    return row


# ---- pooled over datasets --------------------------------------------------------------------------
def _stouffer(rows: list[Row], estimate: float, p_key: str, stat_key: str) -> float | None:
    """Two-sided p of the pooled estimate: the per-dataset two-sided p-values made one-sided in the
    estimate's direction and combined by Stouffer's method, weights sqrt(n)."""
    one_sided, weights = [], []
    for row in rows:
        p, stat = getattr(row, p_key), getattr(row, stat_key)
        if p is None or stat is None:
            return None
        one_sided.append(p / 2 if np.sign(stat) == np.sign(estimate) else 1 - p / 2)
        weights.append(math.sqrt(row.n))
    combined = stats.combine_pvalues(one_sided, method="stouffer", weights=weights).pvalue
    return float(min(1.0, 2 * min(combined, 1 - combined)))


def pooled_pair(per_dataset: list[tuple[Mapping[str, float], Target]], rows: list[Row], *, name: str, family: str,
                partial: bool = False, n_boot: int = N_BOOT, seed: int = SEED) -> Row:
    """The pooled row of one predictor against one target name over its datasets (module docstring)."""
    target0 = per_dataset[0][1]
    ok = [r for r in rows if r.kendall_tau is not None]
    row = Row(POOLED, name, family, target0.name, target0.task, sum(r.n for r in rows), sum(r.n_hard for r in rows),
              partial=partial, higher_is_easier=target0.higher_is_easier)
    row.note = "datasets: " + ", ".join(f"{r.dataset} (n={r.n})" for r in rows)
    if len(ok) < 2:
        row.note += "; fewer than two datasets with figures: no pooled row"
        return row
    weights = np.array([r.n for r in ok], dtype=float)

    def weighted(key):
        values = [getattr(r, key) for r in ok]
        return None if any(v is None for v in values) else float(np.average(values, weights=weights))

    row.kendall_tau, row.pearson_r, row.auc = weighted("kendall_tau"), weighted("pearson_r"), weighted("auc")
    row.smare = weighted("smare")
    row.kendall_p = _stouffer(ok, row.kendall_tau, "kendall_p", "kendall_tau")
    row.pearson_p = _stouffer(ok, row.pearson_r, "pearson_p", "pearson_r")
    row.tau_easier = row.kendall_tau if target0.higher_is_easier else -row.kendall_tau
    # the stratified bootstrap: every dataset resampled within itself, the statistic per dataset, weighted
    rng = np.random.default_rng(seed)
    draws = {"kendall_tau": [], "pearson_r": [], "auc": [], "smare": []}
    used = [(p, t) for (p, t), r in zip(per_dataset, rows) if r.kendall_tau is not None]
    for predictor, target in used:
        _, x, y, easy = paired(predictor, target)
        counts = resample_counts(resample_indices(np.zeros(len(x)), n_boot, rng), len(x))
        draws["kendall_tau"].append(kendall_tau_b(x, y, counts))
        draws["pearson_r"].append(pearson_r(x, y, counts))
        draws["auc"].append(easy_auc(x, easy, counts))
        draws["smare"].append(smare(scaled_rank_errors(x, y if target.higher_is_easier else -y), counts))
    row.intervals = {key: _interval(np.average(np.vstack(samples), axis=0, weights=weights))
                     if not (key == "auc" and row.auc is None) else None for key, samples in draws.items()}
    return row


def holm_table(rows: list[Row]) -> None:
    """Holm's correction of the τ and r p-values across every row of the table (in place)."""
    for p_key, out_key in (("kendall_p", "kendall_p_holm"), ("pearson_p", "pearson_p_holm")):
        p = np.array([np.nan if getattr(r, p_key) is None else getattr(r, p_key) for r in rows], dtype=float)
        for row, adjusted in zip(rows, holm_adjust(p)):
            setattr(row, out_key, _num(adjusted))


def _gate(target: Target, predictor) -> str:
    """Why a row carries no verdict: its target's or its predictor's model is gated ("" when neither is)."""
    parts = [f"target {target.name}: {target.gate}" if target.gate else "",
             f"predictor {getattr(predictor, 'name', '')}: {predictor.gate}" if getattr(predictor, "gate", "") else ""]
    return "; ".join(p for p in parts if p)


def evaluate(predictors: Mapping[str, Mapping[str, Mapping]], targets: Mapping[str, list[Target]], *,
             n_boot: int = N_BOOT, seed: int = SEED, pooled: bool = True) -> list[Row]:
    """Every predictor against every target of its dataset, then the pooled rows, Holm across all.

    ``predictors[dataset][name]`` is a :class:`pipeline.predict.catalog.PredictorValues` (or any object
    with ``values``, ``family`` and ``partial``); ``targets[dataset]`` that dataset's targets. A
    predictor reads a target only on its own dataset; pooled rows join equal names across datasets."""
    rows: list[Row] = []
    groups: dict[tuple[str, str], list[tuple[Mapping[str, float], Target, Row]]] = {}
    for dataset, named in predictors.items():
        for name, pv in named.items():
            for target in targets.get(dataset, []):
                row = evaluate_pair(pv.values, target, name=name, family=pv.family, partial=pv.partial,
                                    n_boot=n_boot, seed=seed)
                row.pool = bool(getattr(pv, "pool", False))
                row.gate = _gate(target, pv)
                rows.append(row)
                groups.setdefault((name, target.name), []).append((pv.values, target, row))
    if pooled:
        for (name, _), members in groups.items():
            if len(members) > 1:
                rows.append(pooled_pair([(p, t) for p, t, _ in members], [r for _, _, r in members], name=name,
                                        family=members[0][2].family, partial=any(r.partial for *_, r in members),
                                        n_boot=n_boot, seed=seed))
                rows[-1].pool = any(r.pool for *_, r in members)
                rows[-1].gate = next((r.gate for *_, r in members if r.gate), "")
    holm_table(rows)
    return rows


def beside_rows(document: Mapping) -> list[tuple[dict, dict]]:
    """``(NQC row, sd row)`` of a stored prediction: each pool-marked NQC@k row beside the row of sd@k (σ@k,
    its unnormalised numerator, which reads no index) on the same scope and target."""
    info = document.get("predictor_info") or {}
    rows = {(r["dataset"], r["predictor"], r["target"]): r for r in document.get("evaluation", [])}
    return [(r, rows[r["dataset"], info[r["predictor"]]["beside"], r["target"]])
            for r in document.get("evaluation", []) if r.get("pool") and (info.get(r["predictor"]) or {}).get("beside")
            and (r["dataset"], info[r["predictor"]]["beside"], r["target"]) in rows]


def beside_text(nqc: Mapping, sd: Mapping) -> str:
    """One line: the pool-normalised NQC beside the index-free σ@k, each τ with its interval."""
    def tau(row):
        interval = (row.get("intervals") or {}).get("kendall_tau")
        value = "--" if row.get("kendall_tau") is None else f"{row['kendall_tau']:+.3f}"
        return value + (f" [{interval[0]:+.2f}, {interval[1]:+.2f}]" if interval else "")

    return (f"{nqc['dataset']} {nqc['target']}: {nqc['predictor']} divides by a pool-built corpus score, τ = {tau(nqc)}; "
            f"beside it {sd['predictor']} (σ@k, unnormalised, reads no index), τ = {tau(sd)}")


def beside_lines(document: Mapping) -> list[str]:
    return [beside_text(nqc, sd) for nqc, sd in beside_rows(document)]


def k_sweep(retriever: str, run: Mapping[str, Mapping[str, float]], targets: Sequence[Target], *,
            corpus_scores: Mapping[str, float] | None = None, query_lengths: Mapping[str, int] | None = None,
            queries: Mapping[str, str] | None = None, index=None, partial_corpus: bool = False, pool: bool = False,
            ks: Sequence[int] = K_SWEEP, n_boot: int = N_BOOT, seed: int = SEED) -> list[dict]:
    """τ-b with its 95% bootstrap interval and sMARE of each post-retrieval predictor with a cut-off (WIG's
    too) at every k of ``ks`` the run is deep enough for (its longest list), against every target, each
    value with its ``pool`` and ``partial`` marks; with ``index`` (an open index holding document vectors)
    and ``queries`` (their text), Clarity@k and the UEF of each NQC/WIG/SMV at k as well.
    ``K_SWEEP_NOTE`` says what the sweep is for."""
    from pipeline.predict import catalog

    depth = max((len(r) for r in run.values()), default=0)
    scope = set(queries or run)
    vectors = index is not None and queries is not None and index.has_document_vectors()
    out = []
    for k in [k for k in ks if k <= depth]:
        found = [pv for pv in catalog.post_retrieval_values(retriever, run, query_lengths, k=k, wig_k=k, only=scope,
                                                            corpus_scores=corpus_scores, partial_corpus=partial_corpus,
                                                            pool=pool) if pv.k is not None]
        if vectors:
            bases = {pv.predictor: pv for pv in found if pv.normaliser}
            found += catalog.relevance_model_values(retriever, run, {q: queries[q] for q in scope if q in queries},
                                                    index, k, bases)[0]
        for pv in found:
            for target in targets:
                qids, x, y, _ = paired(pv.values, target)
                entry = {"dataset": target.dataset, "predictor": pv.predictor.split("@")[0], "component": retriever,
                         "k": k, "target": target.name, "n": len(qids), "kendall_tau": None, "tau_interval": None,
                         "smare": None, "pool": pv.pool, "partial": pv.partial}
                if len(qids) >= MIN_QUERIES and np.ptp(x) > 0 and np.ptp(y) > 0:
                    counts = plain_resamples(len(qids), n_boot, seed)
                    errors = scaled_rank_errors(x, y if target.higher_is_easier else -y)
                    entry.update(kendall_tau=float(stats.kendalltau(x, y, variant="b").statistic), smare=float(errors.mean()),
                                 tau_interval=_interval(kendall_tau_b(x, y, counts)))
                out.append(entry)
    return out

