"""Every predictor and every target of one or more datasets, and the evaluation table: what ``python -m
pipeline predict`` prints and the Predicting failure page shows (:func:`predict` -> :class:`Prediction`).

Per dataset: the index statistics (:mod:`pipeline.predict.index_stats`) give the pre-retrieval
predictors of its judged queries; each retriever's run gives the post-retrieval ones (NQC/WIG/SMV
normalised by the corpus score of :mod:`pipeline.predict.corpus_score` where the run's model is known,
and by the list's mean as the named variant) and its targets (nDCG@10, or each ``target_measures``
ir_measures measure, named with its relevance level); each judge and setup its disagreement target (and, with expected grades, the H2J predictor);
each generator its BERTScore F1 target (and, with token log-probabilities, the H2G predictor) and, where
a stored h2g-samples result of that generator is scored as the target is, its sampling ceiling
(:func:`pipeline.predict.ceiling.stored_ceiling`: what another sample of the same generator predicts).
Predictors that cannot be computed are listed in ``absent`` with the reason. The JSON form
(:meth:`Prediction.as_dict`): ``predictors`` ``{name: {qid: value}}`` (the datasets' queries together:
TREC DL topic ids do not repeat across years), ``evaluation`` (rows of
:class:`pipeline.predict.evaluation.Row`), ``h2g_ceiling`` (``{dataset: {H2G target: ceiling}}``), ``targets``,
``predictor_info`` and ``provenance``.
"""
from __future__ import annotations

import time
from dataclasses import dataclass, field

from pipeline.predict import catalog, ceiling, corpus_score, evaluation, llm_signals, relevance_model, targets
from pipeline.predict.index_stats import open_index, resolve_index


@dataclass
class Prediction:
    datasets: list[str]
    predictors: dict[str, dict[str, catalog.PredictorValues]]  # dataset -> name -> values
    targets: dict[str, list[evaluation.Target]]
    rows: list[evaluation.Row]
    provenance: dict
    settings: dict
    absent: list[llm_signals.Absent] = field(default_factory=list)
    seconds: dict = field(default_factory=dict)
    k_sweep: list[dict] = field(default_factory=list)  # evaluation.k_sweep rows (exploratory: K_SWEEP_NOTE)
    # dataset -> H2G target name -> its sampling ceiling (pipeline.predict.ceiling.stored_ceiling)
    ceilings: dict[str, dict[str, dict]] = field(default_factory=dict)

    @property
    def pool(self) -> bool:
        return any(info.get("pool") for info in self.provenance["index"].values())

    @property
    def partial(self) -> bool:
        return any(info["partial"] for info in self.provenance["index"].values())

    def predictor_values(self) -> dict[str, dict[str, float]]:
        out: dict[str, dict[str, float]] = {}
        for named in self.predictors.values():
            for name, pv in named.items():
                out.setdefault(name, {}).update(pv.values)
        return out

    def as_dict(self) -> dict:
        info = {}
        for dataset, named in self.predictors.items():
            for name, pv in named.items():
                entry = info.setdefault(name, {**pv.as_dict(), "n_queries": 0, "undefined": {}})
                entry["n_queries"] += len(pv.values)
                entry["undefined"][dataset] = pv.undefined
        return {"datasets": self.datasets, "partial": self.partial, "pool": self.pool,
                "pool_note": evaluation.POOL_NOTE if self.pool else "", "settings": self.settings,
                "predictors": self.predictor_values(), "predictor_info": info,
                "absent": [a.as_dict() for a in dict.fromkeys(self.absent)],  # one entry per component
                "targets": {d: {t.name: {"task": t.task, "higher_is_easier": t.higher_is_easier,
                                         "measure": t.provenance.get("measure", t.name.split("[")[0]),
                                         "relevance": t.provenance.get("relevance", ""), "values": dict(t.values),
                                         "hard": sorted(t.hard), "provenance": t.provenance} for t in ts}
                            for d, ts in self.targets.items()},
                "evaluation": [self._row(r) for r in self.rows], "provenance": self.provenance,
                "k_sweep": {"note": evaluation.K_SWEEP_NOTE, "rows": self.k_sweep},
                "h2g_ceiling": self.ceilings, "seconds": self.seconds}


    def _row(self, row: evaluation.Row) -> dict:
        verdict, reason = row.verdict_reason(self.settings.get("pool_in_verdicts", False))
        return {**row.as_dict(), "verdict": verdict, "verdict_reason": reason}


def _check_disjoint(collections) -> None:
    seen: dict[str, str] = {}
    for data in collections:
        for qid in data.queries():
            if qid in seen:
                raise ValueError(f"query {qid} is in both {seen[qid]} and {data.name}: predict them one at a time")
            seen[qid] = data.name


def _absent_or_add(result, named: dict, absent: list, family: str, recorded: dict, partial: bool = False) -> None:
    """Add an LLM signal's values to ``named`` (its model and counts to ``recorded``), or its reason to ``absent``."""
    if isinstance(result, llm_signals.Absent):
        absent.append(result)
        return
    name, values, info = result
    recorded[name] = info
    definition = llm_signals.DEFINITIONS[family]
    named[name] = catalog.PredictorValues(name, name.split("[")[0], family, name.split("[", 1)[1].rstrip("]"),
                                          values, [], partial, " ".join(definition.__doc__.split()),
                                          gate=targets.model_gate(info.get("provenance")))


def predict(collections, *, retrievers, generators=(), judges=(), setups=("binary",), k=catalog.DEFAULT_K,
            wig_k=catalog.DEFAULT_WIG_K, quantile=0.25, index=None, n_boot=evaluation.N_BOOT, seed=evaluation.SEED,
            target_measures=(targets.DEFAULT_TARGET_MEASURE,), pool_in_verdicts=False, cap=None, bertscore=None,
            llm_options=None, progress=False) -> Prediction:
    """Predictors, targets and the evaluation table of ``collections`` (module docstring)."""
    if not retrievers and not generators and not judges:
        raise ValueError("name at least one --retriever, --generator or --judge: nothing to predict")
    target_measures = list(dict.fromkeys(target_measures)) or [targets.DEFAULT_TARGET_MEASURE]
    for measure in target_measures:  # an unknown measure is refused before any index is opened
        try:
            targets.measure_label(measure)
        except ValueError as exc:
            raise ValueError(f"--target-measure: {exc}") from None
    _check_disjoint(collections)
    predictors, all_targets, absent, ceilings = {}, {}, [], {}
    provenance = {"index": {}, "runs": {}, "judges": {}, "generators": {}, "llm_signals": {}, "models": []}
    started = time.perf_counter()
    sweeps, data_queries = [], {}  # (dataset, run, corpus scores, |q|, index): the k sweep once the targets are known
    for data in collections:
        queries = data.queries()
        named: dict[str, catalog.PredictorValues] = {}
        stats = open_index(data, resolve_index(data.name, index))
        provenance["index"][data.name] = stats.as_dict()
        terms = stats.term_matrix(queries)
        for pv in catalog.pre_retrieval_values(terms, partial_corpus=stats.partial, pool=stats.pool):
            named[pv.name] = pv
        dataset_targets = []
        for arg in retrievers:
            found, run = targets.retrieval_targets(data, arg, quantile, target_measures)
            dataset_targets.extend(found)
            model = corpus_score.run_model(run)
            # the papers' corpus score needs the run's model; without it only the list-mean variant exists
            scores = corpus_score.corpus_scores(terms, model) if model else None
            provenance["runs"].setdefault(data.name, []).append(
                {**run.as_dict(), "retrieval_model": model.as_dict() if model else None,
                 "corpus_score": (f"{model.describe()} of the collection as one document, from the {data.name} index's "
                                  f"statistics ({stats.n_docs:,} documents{'; marked pool' if stats.pool else ''})"
                                  if model else "unknown retrieval model: NQC/WIG/SMV in the list-mean variant only")})
            for pv in catalog.post_retrieval_values(run.name, run.run, terms.lengths(), k=k, wig_k=wig_k, only=set(queries),
                                                    corpus_scores=scores, model=model.describe() if model else "",
                                                    partial_corpus=stats.partial, pool=stats.pool):
                named[pv.name] = pv
            bases = {pv.predictor: pv for pv in named.values() if pv.component == run.name and pv.normaliser}
            if stats.has_document_vectors():
                found, lacked = catalog.relevance_model_values(run.name, run.run, queries, stats, k, bases)
                named.update({pv.name: pv for pv in found})
                provenance["runs"][data.name][-1]["relevance_model"] = {
                    "k": k, "lambda": relevance_model.LAMBDA, "documents_not_in_index": lacked}
            else:
                absent.append(llm_signals.Absent(f"clarity@{k}[{run.name}]", "the index holds no document vectors "
                                                 "(built without -storeDocvectors): no Clarity or UEF"))
            sweeps.append((data.name, run, scores, terms.lengths(), stats))
        for arg in judges:
            for setup in setups:
                target, judgments = targets.judge_target(data, arg, setup, quantile, cap=cap, llm_options=llm_options,
                                                         progress=progress)
                dataset_targets.append(target)
                provenance["judges"].setdefault(data.name, []).append(
                    {"judge": judgments.judge, "setup": setup, "source": judgments.source,
                     "provenance": judgments.provenance})
                if setup == setups[0]:  # the expected grades are the judge's, whatever the setup's cut
                    _absent_or_add(llm_signals.judge_spread_predictor(judgments), named, absent, catalog.JUDGING,
                                   provenance["llm_signals"].setdefault(data.name, {}))
        for arg in generators:
            target, generation = targets.generation_target(data, arg, quantile, bertscore=bertscore,
                                                           llm_options=llm_options, progress=progress)
            dataset_targets.append(target)
            found = ceiling.stored_ceiling(data.name, generation.name, target.provenance, quantile)
            if found is not None:
                ceilings.setdefault(data.name, {})[target.name] = found
            provenance["generators"].setdefault(data.name, []).append(target.provenance)
            _absent_or_add(llm_signals.generator_logprob_predictor(arg, data, generation.answers,
                                                                   llm_options=llm_options, progress=progress),
                           named, absent, catalog.GENERATION, provenance["llm_signals"].setdefault(data.name, {}))
        predictors[data.name], all_targets[data.name] = named, dataset_targets
        data_queries[data.name] = queries
    computed = time.perf_counter()
    rows = evaluation.evaluate(predictors, all_targets, n_boot=n_boot, seed=seed)
    sweep = [row for dataset, run, scores, lengths, stats in sweeps
             for row in evaluation.k_sweep(run.name, run.run, all_targets[dataset], corpus_scores=scores,
                                           query_lengths=lengths, queries=data_queries[dataset], index=stats,
                                           partial_corpus=stats.partial, pool=stats.pool, n_boot=n_boot, seed=seed)]
    provenance["bootstrap"] = {"n_boot": n_boot, "seed": seed, "confidence": evaluation.CONFIDENCE,
                               "method": "percentile; pooled rows resample within each dataset"}
    provenance["auc"] = evaluation.AUC_NOTE
    provenance["models"] = sorted({m for d in provenance["judges"].values() for m in
                                   [x["provenance"].get("label", x["judge"]) for x in d]}
                                  | {m for d in provenance["generators"].values() for m in
                                     [x["generator"].get("label", "") for x in d]} - {""})
    settings = {"k": k, "wig_k": wig_k, "quantile": quantile, "setups": list(setups), "cap": cap,
                "bertscore": bertscore or {}, "retrievers": list(retrievers), "generators": list(generators),
                "judges": list(judges), "index": index, "target_measures": list(target_measures),
                "pool_in_verdicts": pool_in_verdicts}
    seconds = {"predictors_and_targets": computed - started, "evaluation": time.perf_counter() - computed}
    return Prediction([d.name for d in collections], predictors, all_targets, rows, provenance, settings, absent,
                      seconds, sweep, ceilings)
