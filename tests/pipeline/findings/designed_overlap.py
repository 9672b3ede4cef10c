"""Designed failure studies for the verdict tests, built in memory through the study's own composition
(``pipeline.study.run.combine``: the hard-set rule, the universe, the overlap analysis; and
``configuration_result``: the per-configuration model gate), without retrieval, BERTScore or judging.

A study is given its hard sets per task; each task's per-query values are made so that the study's one
hard-set rule draws exactly those sets (hard queries at the hard end, every value distinct), which is
checked: a designed set the rule would not draw is an error here, never a silently different study.
"""
from __future__ import annotations

from pipeline.llm.base import Provenance
from pipeline.sets.rule import target_size
from pipeline.study.result import (Components, GeneratorResult, JudgeResult, RetrieverResult, StudyResult)
from pipeline.study.run import STUDY_TASKS, combine, configuration_result
from pipeline.study.values import HARDER, PerQueryValues

QUANTILE = 0.25
SIZED = Provenance("ollama", "llama3.1:8b", endpoint="http://127.0.0.1:11434", digest="ab" * 32,
                   parameters_b=8.03, size_source="ollama /api/show").as_dict()
SUB_1B = Provenance("ollama", "qwen2.5:0.5b", endpoint="http://127.0.0.1:11434", digest="cd" * 32,
                    parameters_b=0.49403, size_source="ollama /api/show").as_dict()
UNKNOWN = Provenance("imported", "planted").as_dict()  # imported answers: no size known


def qids(n: int, start: int = 1) -> list[str]:
    return [f"q{i:02d}" for i in range(start, start + n)]


def _values(scored: list[str], hard: set[str], hard_is_top: bool) -> dict[str, float]:
    """Distinct values, the hard queries at the hard end (lowest, or highest when ``hard_is_top``)."""
    order = sorted(scored, key=lambda q: (q not in hard, q))  # hard first
    values = {q: (i + 1) / (len(order) + 1) for i, q in enumerate(order)}
    return {q: 1.0 - v for q, v in values.items()} if hard_is_top else values


def designed_study(dataset: str, retrievers: dict[str, set[str]], generator: set[str], judge: set[str], *,
                   queries: list[str], scored: dict[str, list[str]] | None = None, n_judged: int | None = None,
                   generator_model: dict = SIZED, judge_model: dict = SIZED,
                   study_id: str = "designed0000") -> StudyResult:
    """A study of ``dataset`` with one configuration per retriever (each with its H2R set), one generator
    (H2G ``generator``), one judge in the binary setup (H2J ``judge``); ``scored``: the queries each task
    scores (default every one of ``queries``); ``n_judged``: the judged queries (default ``len(queries)``)."""
    scored = {t: list(scored.get(t, queries)) if scored else list(queries) for t in ("h2r", "h2g", "h2j")}
    n_judged = len(queries) if n_judged is None else n_judged
    tasks = {t.name: t for t in STUDY_TASKS}

    def values(task: str, hard: set[str]) -> PerQueryValues:
        within = scored[task]
        if len(hard) != target_size(len(within), QUANTILE) or not hard <= set(within):
            raise ValueError(f"designed {task} set of {len(hard)} is not what the rule draws over {len(within)} "
                             f"queries ({target_size(len(within), QUANTILE)})")
        model = {"h2g": generator_model, "h2j": judge_model}.get(task)
        return PerQueryValues(task, dataset, task, tasks[task].measure, tasks[task].higher_is,
                              _values(within, hard, tasks[task].higher_is == HARDER),
                              setup="binary" if task == "h2j" else None, model=model)

    generated, judged = values("h2g", generator), values("h2j", judge)
    configurations, retriever_results = {}, {}
    for name, hard in retrievers.items():
        retrieved = values("h2r", hard)
        components = Components(name, "designed-generator", "designed-judge", "binary")
        chosen = {"h2r": retrieved, "h2g": generated, "h2j": judged}
        result = combine(dataset, components.to_dict(), {t: v.values for t, v in chosen.items()}, {}, QUANTILE,
                         n_judged=n_judged, top={"h2j"})
        for task, hard_set in {"h2r": hard, "h2g": generator, "h2j": judge}.items():
            expected = hard_set & set(result.universe)
            assert set(result.sets[task]) == expected, (task, sorted(result.sets[task]), sorted(expected))
        configurations[components.label] = configuration_result(components, chosen, result)
        retriever_results[name] = RetrieverResult({"name": name, "kind": "imported"}, retrieved.values, [], None)
    return StudyResult(
        id=study_id, configuration={}, time="2026-12-05T00:00:00Z", finished="2026-12-05T00:00:01Z", dataset=dataset,
        source="designed", coverage={}, quantile=QUANTILE, conventions={}, cap=None, partial_references=None,
        data_folder=None, queries={q: q for q in queries}, relevant_passages={}, relevant_grades=None,
        retrievers=retriever_results,
        generators={"designed-generator": GeneratorResult(generator_model, None, {}, None, {}, {}, generated.values,
                                                          {}, [], None)},
        judges={"designed-judge": {"binary": JudgeResult({"provenance": judge_model}, judged.values, {}, {}, [],
                                                         None)}},
        configurations=configurations, stability=[], universe="per-task")
