"""How much of H2G is sampling noise: the samples of one generator (``answers/samples.NAME.<dataset>.jsonl``,
:mod:`pipeline.data.samples`), each scored as the study's H2G task scores one generator, and what redrawing
H2G per sample does to the sets and their overlap (issue 42). The paper draws one answer per query; this
measures what drawing another would have changed.

Each sample is one generator's answers: its BERTScore F1 per query is
:func:`pipeline.generation.h2g.generation_values` (the study's encoder, layer, aggregate and exclusions),
its H2G set the study's one rule (:func:`pipeline.sets.rule.hard_set`, bottom ``quantile``) over the
queries it scores. From them (:func:`sampling_spread`):

- per query: the BERTScore mean, standard deviation (ddof 1), min and max across samples, and
  ``p_hard``: the share of the samples that score it in which it is in H2G (its probability of being hard
  to generate), with the counts (``n_hard`` of ``n_samples``);
- the H2G sets' Jaccard similarity for every pair of samples (mean, min, max);
- per configuration of the given retrievers and judges (each judging setup): the overlap figures
  (:func:`pipeline.study.run.combine`, the study's universe rule) with H2G redrawn per sample, as the
  distribution of |H2R ∩ H2G|, |H2G ∩ H2J|, |H2R ∩ H2J| and the all-three share over the samples;
- each other generator given (``compare``), scored the same way: the Jaccard of its H2G with each sample's,
  beside the within-generator pairs (:func:`between_against_within`), and its overlap figures per
  configuration, so a between-generator change can be set against the within-generator spread
  (:func:`generator_change_against_samples`, read by ``structure_stable``).

A result is stored under ``cache/h2g-samples/<dataset>/<id>.json`` (:mod:`core.result_files`), its id the
content digest of everything it is computed from (the sample and comparison texts, the reference passages,
the H2R and H2J values with their systems, the encoder's identity and the rules), so a second call with the
same inputs reads it back and a changed input is a new result (:func:`stored_spread`).
"""
from __future__ import annotations

import statistics
import time
from collections import Counter
from dataclasses import replace
from itertools import combinations
from pathlib import Path
from typing import Mapping, Sequence

from core.digest import content_digest
from pipeline.data.samples import read_samples_jsonl
from pipeline.sets.overlap import region_name
from pipeline.sets.rule import SetSummary
from pipeline.study.components import parse_component

KIND = "h2g-samples"
VERSION = 1
# the overlap counts whose distribution over the samples is reported, as overlap_analysis keys them
PAIR_KEYS = (region_name(("h2r", "h2g")), region_name(("h2g", "h2j")), region_name(("h2r", "h2j")))


def samples_file(data, arg: str) -> tuple[str, Path]:
    """``(generator, file)`` of ``--samples NAME[=FILE]``: NAME alone is the data folder's
    ``answers/samples.NAME.<dataset>.jsonl``."""
    name, file = parse_component(arg, "--samples")
    if file is None:
        found = data.folder_files("samples")
        if name not in found:
            raise ValueError(f"--samples {name}: no answers/samples.{name}.{data.name}.jsonl in the data folder "
                             f"({data.folder}); found: {', '.join(found) or 'none'}; give NAME=FILE")
        file = found[name]
    return name, Path(file)


def with_folder_components(config, generator: str):
    """``config`` with the data folder's outputs where it names none: its runs as retrievers, its judgments as
    judges, and its answers files other than ``generator``'s as the generators set against the samples."""
    data = config.data()
    return config.replace(retrievers=config.retrievers or tuple(data.folder_files("runs")),
                          judges=config.judges or tuple(data.folder_files("judgments")),
                          generators=config.generators or tuple(n for n in data.folder_files("answers")
                                                                if n != generator))


def jaccard(a, b) -> float:
    """|A ∩ B| / |A ∪ B| (1.0 for two empty sets: they agree)."""
    a, b = set(a), set(b)
    return len(a & b) / len(a | b) if a | b else 1.0


def summary(values: Sequence[float]) -> dict:
    """Mean, min, max and n of ``values`` (None for each without any)."""
    values = list(values)
    if not values:
        return {"n": 0, "mean": None, "min": None, "max": None}
    return {"n": len(values), "mean": statistics.fmean(values), "min": min(values), "max": max(values)}


def distribution(counts: Sequence[int]) -> dict:
    """:func:`summary` plus ``{count: samples}`` (JSON keys as text)."""
    return {**summary(counts), "counts": {str(k): v for k, v in sorted(Counter(counts).items())}}


def query_spread(values: Mapping[int, Mapping[str, float]], sets: Mapping[int, Sequence[str]]) -> dict[str, dict]:
    """``{qid: {mean, sd, min, max, n_samples, n_hard, p_hard}}`` over the samples that score each query."""
    out = {}
    for qid in sorted({q for per in values.values() for q in per}):
        scores = [per[qid] for per in values.values() if qid in per]
        hard = sum(qid in sets[s] for s, per in values.items() if qid in per)
        out[qid] = {"mean": statistics.fmean(scores), "sd": statistics.stdev(scores) if len(scores) > 1 else None,
                    "min": min(scores), "max": max(scores), "n_samples": len(scores), "n_hard": hard,
                    "p_hard": hard / len(scores)}
    return out


def pairwise_jaccard(sets: Mapping[int, Sequence[str]]) -> dict:
    """The Jaccard of every pair of samples' sets, and their :func:`summary`."""
    pairs = [{"first": a, "second": b, "jaccard": jaccard(sets[a], sets[b])} for a, b in combinations(sets, 2)]
    return {"pairs": pairs, **summary([p["jaccard"] for p in pairs])}


def hard_counts(queries: Mapping[str, dict]) -> dict:
    """How many queries are hard in every sample that scores them, in some, in none (with their qids)."""
    every = sorted(q for q, r in queries.items() if r["n_hard"] == r["n_samples"])
    some = sorted(q for q, r in queries.items() if 0 < r["n_hard"] < r["n_samples"])
    never = sorted(q for q, r in queries.items() if r["n_hard"] == 0)
    return {"all": every, "some": some, "none": never,
            "n_all": len(every), "n_some": len(some), "n_none": len(never), "n_queries": len(queries)}


def between_against_within(other_set: Sequence[str], sets: Mapping[int, Sequence[str]], within: dict) -> dict:
    """Another generator's H2G against each sample's: its Jaccard with each sample (``first``: sample 0's,
    the single answer a study takes), beside the within-generator pairs' Jaccard; ``exceeds_within``: the
    two generators agree less than any two samples of one do (only then does the change of generator say
    more than drawing another sample)."""
    with_samples = {str(s): jaccard(other_set, members) for s, members in sets.items()}
    first = with_samples[str(min(sets))]
    pairs = [p["jaccard"] for p in within["pairs"]]
    return {"jaccard_with_samples": with_samples, "first_sample": min(sets), "jaccard_first": first,
            "jaccard_with_samples_summary": summary(list(with_samples.values())),
            "within": {k: within[k] for k in ("n", "mean", "min", "max")},
            "within_pairs_at_or_below": sum(j <= first for j in pairs),
            "exceeds_within": bool(pairs) and first < min(pairs)}


def _overlap_row(analysis: dict) -> dict:
    return {**{key: analysis["pairwise"][key]["count"] for key in PAIR_KEYS},
            "all_three": analysis["all_three"]["count"], "all_three_share": analysis["all_three"]["share"],
            "n_queries": analysis["n_queries"], "sizes": dict(analysis["sizes"]),
            "regions": {key: region["count"] for key, region in analysis["regions"].items()}}


def _overlap_distribution(rows: Sequence[dict]) -> dict:
    out = {key: distribution([r[key] for r in rows]) for key in (*PAIR_KEYS, "all_three")}
    out["all_three_share"] = summary([r["all_three_share"] for r in rows if r["all_three_share"] is not None])
    out["pair_shares"] = {key: summary([r[key] / r["n_queries"] for r in rows if r["n_queries"]]) for key in PAIR_KEYS}
    out["regions"] = {key: summary([r["regions"][key] for r in rows]) for key in rows[0]["regions"]} if rows else {}
    out["sizes"] = {task: summary([r["sizes"][task] for r in rows]) for task in rows[0]["sizes"]} if rows else {}
    return out


def _score(data, config, gen) -> tuple[dict[str, float], dict]:
    from pipeline.generation.h2g import generation_values

    return generation_values(data, gen, config.encoder, config.aggregate, config.partial_references,
                             config.truncated_answers)


def _bertscore_record(info: dict) -> dict:
    """What a result keeps of one scoring's record: the encoder and the counts, not the per-query lists."""
    keep = ("encoder", "num_layers", "description", "fallback", "label", "idf", "rescale_with_baseline", "revision",
            "aggregate", "partial_references", "truncated_answers", "n_answered", "n_excluded",
            "n_empty_answers", "n_excluded_partial_references", "n_excluded_truncated", "corpus_note")
    return {k: info[k] for k in keep if k in info}


def _identity_of(data, config, name: str, samples: Mapping[int, Mapping[str, str]], compare: Mapping[str, dict],
                 retrieved, judged) -> str:
    """The content digest that names a result (module docstring)."""
    from pipeline.generation.bertscore import resolve_encoder

    qids = sorted({q for per in samples.values() for q in per} | {q for c in compare.values() for q in c})
    return content_digest({
        "kind": KIND, "version": VERSION, "dataset": data.name, "generator": name,
        "samples": {str(s): per for s, per in samples.items()}, "compare": compare,
        "references": {q: data.relevant_passages(q) for q in qids},
        "h2r": {v.system: v.values for v in retrieved},
        "h2j": {f"{v.system}|{v.setup}": v.values for v in judged},
        "encoder": resolve_encoder(config.encoder).identity(), "aggregate": config.aggregate,
        "partial_references": config.partial_references, "truncated_answers": config.truncated_answers,
        "quantile": config.quantile, "universe": config.universe})


def sampling_spread(config, samples: str, *, log=print, reuse: bool = True) -> dict:
    """The sampling-noise result (module docstring) of generator ``samples`` (``NAME[=FILE]``) on
    ``config``'s collection, with its retrievers, judges (each setup) and generators (the other models set
    against the samples: ``NAME[=FILE]``, an LLM spec), each the data folder's where ``config`` names none
    (:func:`with_folder_components`), stored; a result with the same id is read back unless ``reuse`` is False."""
    from core.result_files import read_result, results_dir, save_result
    from pipeline.generation.answers import Generation
    from pipeline.study.run import combine
    from pipeline.study.imported_sizes import imported_record
    from pipeline.study.task import StepContext
    from pipeline.study.tasks.h2g import GenerationTask, generation_for
    from pipeline.study.tasks.h2j import JudgmentTask
    from pipeline.study.tasks.h2r import RetrievalTask

    data = config.data()
    data.require_qrels()
    name, path = samples_file(data, samples)
    per_sample = read_samples_jsonl(path, known_qids=data.topics)
    if len(per_sample) < 2:
        raise ValueError(f"{path}: {len(per_sample)} sample; the spread across samples needs at least 2")
    config = with_folder_components(config, name)
    context = StepContext(log=log)
    retrieved = list(RetrievalTask().run(config, context)) if config.retrievers else []
    judged = list(JudgmentTask().run(config, context)) if config.judges else []
    others = {}
    for arg in config.generators:
        gen = generation_for(data, arg, llm_options=config.llm_options, progress=False)
        others[gen.name] = gen
    if name in others:
        raise ValueError(f"--generator {name}: the samples' own generator; set another one against its samples")
    result_id = _identity_of(data, config, name, per_sample, {g: o.answers for g, o in others.items()},
                             retrieved, judged)
    stored = results_dir(KIND, data.name) / f"{result_id}.json"
    if reuse and stored.is_file():
        log(f"[{data.name}] {KIND} {result_id[:12]} read back: {stored}")
        return read_result(stored, f"a {KIND} result")
    started = time.time()
    task = GenerationTask()
    # the samples' model, its size as an imported answers file's (the folder's models.tsv, or --model-size)
    model = imported_record({"backend": "imported", "model": name, "small": False, "label": f"imported:{name}",
                             "note": f"samples imported from {path}"}, data.model_sizes().get(name),
                            (config.llm_options or {}).get("stated_sizes"))
    values, sets, set_info, scoring = {}, {}, {}, None
    for sample, answers in per_sample.items():
        gen = Generation(name=f"{name}#{sample}", provenance={**model, "sample": sample},
                         answers=answers, source=f"sample {sample} of {path}")
        values[sample], info = _score(data, config, gen)
        scoring = scoring or _bertscore_record(info)
        hard = task.hard_set(values[sample], config.quantile)
        sets[sample], set_info[sample] = list(hard.qids), SetSummary.of(hard).to_dict()
        log(f"[{data.name}] {name} sample {sample}: {len(values[sample])} queries scored, H2G {len(hard.qids)}")
    within = pairwise_jaccard(sets)
    queries = query_spread(values, sets)
    compared = {}
    for other, gen in others.items():
        other_values, _ = _score(data, config, gen)
        other_set = list(task.hard_set(other_values, config.quantile).qids)
        compared[other] = {"source": gen.source, "provenance": gen.provenance, "values": other_values,
                           "h2g": other_set, **between_against_within(other_set, sets, within)}
    configurations = {}
    for r, j in ((r, j) for r in retrieved for j in judged):
        label = f"{r.system} | {j.system} | {j.setup}"
        rows = []
        for sample in per_sample:
            analysis = combine(data.name, {}, {"h2r": r.values, "h2g": values[sample], "h2j": j.values}, {},
                               config.quantile, universe=config.universe, n_judged=len(data.queries())).analysis
            rows.append({"sample": sample, **_overlap_row(analysis)})
        between = {}
        for other in compared:
            analysis = combine(data.name, {}, {"h2r": r.values, "h2g": compared[other]["values"], "h2j": j.values},
                               {}, config.quantile, universe=config.universe, n_judged=len(data.queries())).analysis
            between[other] = _overlap_row(analysis)
        configurations[label] = {"retriever": r.system, "judge": j.system, "setup": j.setup, "per_sample": rows,
                                 "distribution": _overlap_distribution(rows), "generators": between}
    result = {"kind": KIND, "version": VERSION, "id": result_id, "dataset": data.name, "generator": name,
              "provenance": model, "samples_file": str(path.resolve()), "samples": list(per_sample), "quantile": config.quantile,
              "universe": config.universe, "bertscore": scoring,
              "retrievers": {r.system: r.provenance for r in retrieved},
              "judges": sorted({j.system for j in judged}), "setups": sorted({j.setup for j in judged}),
              "values": {str(s): v for s, v in values.items()}, "sets": {str(s): v for s, v in sets.items()},
              "set_info": {str(s): v for s, v in set_info.items()}, "queries": queries,
              "hard": hard_counts(queries), "jaccard": within, "compare": compared,
              "configurations": configurations, "time": time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(started)),
              "seconds": round(time.time() - started, 1)}
    path_out = save_result(KIND, result)
    log(f"[{data.name}] {KIND} {result_id[:12]} stored: {path_out}")
    return result


def generator_text(result: Mapping) -> str:
    """``text-davinci-003 (175B (models.tsv))``: the samples' model and its size, as results name a model."""
    from pipeline.llm.base import Provenance

    provenance = result.get("provenance") or {"backend": "imported", "model": result["generator"]}
    return f"{result['generator']} ({Provenance.from_dict(provenance).size_text})"


def range_text(s: Mapping, form: str = "{:.2f}", bounds: str | None = None) -> str:
    """``0.57 (range 0.38–0.83)`` of a :func:`summary` (``—`` without values); ``bounds``: the min's and max's
    form when it differs from the mean's (counts: ``{:d}``). The CLI's, the page's and the export's words."""
    if not s or not s["n"]:
        return "—"
    bounds = bounds or form
    return f"{form.format(s['mean'])} (range {bounds.format(s['min'])}–{bounds.format(s['max'])})"


def between_line(other: str, compared: Mapping, within: Mapping) -> str:
    """One line: another generator's H2G Jaccard with the first sample, and whether it exceeds the spread."""
    verdict = ("less than any two samples agree: the change of generator exceeds the sampling spread"
               if compared["exceeds_within"] else
               f"within the sampling spread ({compared['within_pairs_at_or_below']} of {within['n']} pairs of samples "
               f"agree as little or less): the change of generator cannot be told apart from drawing another sample")
    return (f"{other}: H2G Jaccard with sample {compared['first_sample']} {compared['jaccard_first']:.2f}, with each "
            f"sample {range_text(compared['jaccard_with_samples_summary'])}; {verdict}")


def stored_spreads(dataset: str) -> list[dict]:
    """Every stored result of ``dataset``, newest first (a file that is not one is skipped)."""
    from core.result_files import list_results, read_result

    out = []
    for path in list_results(KIND, dataset):
        try:
            result = read_result(path, f"a {KIND} result")
        except ValueError:
            continue
        if result.get("kind") == KIND and result.get("version") == VERSION:
            out.append(result)
    return out


def stored_spread(dataset: str, generator: str | None = None) -> dict | None:
    """The newest stored result of ``dataset`` (of the samples of ``generator`` when given), else None."""
    return next((r for r in stored_spreads(dataset) if generator is None or r["generator"] == generator), None)


def query_probability(result: Mapping, qid: str) -> dict | None:
    """One query's row of a result's per-query spread (None when no sample scored it)."""
    return result["queries"].get(qid)


def generator_change_against_samples(result: Mapping, generators: Sequence[str], retriever: str, judge: str,
                                     setup: str, changes: Mapping[str, float | None]) -> dict | None:
    """A between-generator change of pair shares (``changes``: ``{pair key: second minus first}``, as
    ``structure_stable`` measures it for two configurations that differ in their generator) beside the
    within-generator spread of the same shares across ``result``'s samples, in the configuration of
    ``retriever``, ``judge`` and ``setup``. Each pair's change ``exceeds`` the sampling spread when its
    size is larger than the range (max - min) of that share across samples: the largest change that
    drawing another sample of one generator made. None when the result has no such configuration or
    is not of either generator (then nothing here bears on the change)."""
    if result["generator"] not in generators:
        return None
    configuration = result["configurations"].get(f"{retriever} | {judge} | {setup}")
    if configuration is None:
        return None
    shares = configuration["distribution"]["pair_shares"]
    pairs = {}
    for key, change in changes.items():
        spread = shares.get(key)
        if spread is None or spread["n"] < 2 or change is None:
            continue
        width = spread["max"] - spread["min"]
        pairs[key] = {"change": change, "within_min": spread["min"], "within_max": spread["max"],
                      "within_range": width, "exceeds": abs(change) > width}
    other = next((g for g in generators if g != result["generator"]), None)
    between = result["compare"].get(other) if other else None
    return {"result": result["id"], "generator": result["generator"], "n_samples": len(result["samples"]),
            "pairs": pairs, "h2g_jaccard": None if between is None else
            {k: between[k] for k in ("jaccard_first", "within", "exceeds_within")},
            "exceeds": bool(pairs) and any(p["exceeds"] for p in pairs.values())}


def within_generator_evidence(dataset: str, generators: Sequence[str], retriever: str, judge: str, setup: str,
                              changes: Mapping[str, float | None]) -> dict | None:
    """:func:`generator_change_against_samples` against the newest stored result of ``dataset`` that bears on
    the change (samples of one of the two ``generators``, the same retriever, judge and setup), else None:
    what ``structure_stable`` shows beside a change of generator."""
    for result in stored_spreads(dataset):
        found = generator_change_against_samples(result, generators, retriever, judge, setup, changes)
        if found is not None:
            return found
    return None
