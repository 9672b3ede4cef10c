"""H2J as a failure task: each judge's disagreement with NIST per query, in each judging setup
(:func:`pipeline.judging.h2j.judgment_values`), higher is harder (:class:`JudgmentTask`).

A judge is ``NAME=FILE`` (qrels-format judgments), ``NAME`` alone: the data folder's
``judgments/judgments.NAME.<dataset>.txt`` when it exists, else an LLM spec (named like a generator).
An LLM judge that labelled no pair stops the study (:class:`pipeline.study.task.StudyStepError`).
"""
from __future__ import annotations

from typing import Iterator, Sequence

from pipeline.judging.h2j import judgment_values
from pipeline.study.components import identity, parse_component
from pipeline.study.config import require_query_texts
from pipeline.study.imported_sizes import imported_record
from pipeline.study.result import JudgeResult
from pipeline.study.task import HARDER, FailureTask, PerQueryValues, StepContext, StudyStepError, not_scored
from pipeline.sets.rule import SetSummary


def _last_error(failed: dict[str, str]) -> str:
    return " ".join(str(list(failed.values())[-1]).split()) if failed else "(none recorded)"


def judgments_for(data, arg: str, setup: str, *, cap: int | None, llm_options: dict | None = None,
                  progress: bool = True, on_progress=None, on_total=None):
    """The judgments of judge ``arg`` (imported, or made by an LLM); :class:`StudyStepError` when an
    LLM judge labelled no pair."""
    from pipeline.judging.judgments import import_judgments, llm_judgments
    from pipeline.llm import make_client
    name, file = parse_component(arg, "--judge")
    if file is None:
        file = data.folder_files("judgments").get(name)
    if file is not None:  # an imported judge's size: the folder's models.tsv, or the user's statement
        judgments = import_judgments(name, file, setup, known_qids=data.topics)
        judgments.provenance = imported_record(judgments.provenance, data.model_sizes().get(name),
                                               (llm_options or {}).get("stated_sizes"))
        return judgments
    require_query_texts(data)
    client = make_client(name, **{"step": f"judgments:{setup}", **(llm_options or {})})
    judgments = llm_judgments(client, data, setup, cap=cap, on_progress=on_progress, on_total=on_total,
                              progress=f"{data.name} {setup} judgments ({client.provenance.label})" if progress
                              else None)
    if judgments.failed and not judgments.labels and not judgments.unparseable:
        failed = {f"{q} {p}": e for q, per in judgments.failed.items() for p, e in per.items()}
        raise StudyStepError(f"{data.name}: judge {client.provenance.label} ({setup}) answered none of "
                             f"{len(failed)} pairs; last error: {_last_error(failed)}")
    return judgments


class JudgmentTask(FailureTask, name="h2j", role="judge", section="judges", measure="disagreement",
                   higher_is=HARDER):
    """H2J (module docstring): one set of values per judge and setup; the study file's ``judges`` hold
    ``{judge: {setup: JudgeResult}}``."""

    def stages(self, config) -> int:
        return len(self.components(config)) * len(config.setups)

    def records(self, config, data, context: StepContext) -> Iterator[tuple[str, str, JudgeResult]]:
        tracker = context.tracker
        for arg in self.components(config):
            for setup in config.setups:
                tracker.stage(f"{setup} judgments of {arg}", 0, "pair")
                judgments = judgments_for(data, arg, setup, cap=config.cap, llm_options=config.llm_options,
                                          progress=context.progress, on_progress=tracker.advance,
                                          on_total=tracker.set_total)
                values, info = judgment_values(data, judgments)
                context.log(f"[{data.name}] judge {judgments.judge} ({setup}): {len(values)} queries, "
                            f"{info['n_unparseable']} unparseable")
                yield judgments.judge, setup, JudgeResult(info, values, judgments.labels, judgments.unparseable,
                                                          *self.hard_over_all_queries(values, config.quantile))

    def stored_records(self, study) -> list[tuple[str, str | None, object]]:
        return [(judge, setup, record) for judge, per_setup in study.judges.items()
                for setup, record in per_setup.items()]

    def values_of(self, dataset: str, system: str, record: JudgeResult, judged: Sequence[str],
                  setup: str | None = None) -> PerQueryValues:
        reasons = {q: "no pair labelled by both NIST and the judge"
                   for q in record.info.get("queries_without_pairs") or ()}
        return self.per_query_values(dataset, system, record.per_query,
                                     not_scored(judged, record.per_query, reasons, "not judged"), record.info,
                                     setup=setup, model=record.provenance,
                                     identity=identity(record.provenance, record.info.get("source") or ""),
                                     record=record)


def h2j_sets(config, *, progress: bool = True) -> dict:
    """One judge's H2J over ``config.data()`` per judging setup: ``{"dataset", "quantile", SETUP:
    {"judge", "per_query", "h2j", "h2j_set", ...}}`` (the judge's disagreement per query and its hard set
    over every query it judged; the ``h2j`` command). ``config`` names one judge."""
    if len(config.judges) != 1:
        raise ValueError(f"h2j_sets takes one judge, got {list(config.judges)}")
    result = JudgmentTask().run(config, StepContext(progress=progress))
    out = {"dataset": result.dataset, "quantile": result.quantile}
    for values in result:
        hard = values.hard_set(result.quantile)
        out[values.setup] = {"judge": values.system, "per_query": values.values, "h2j": list(hard.qids),
                             "h2j_set": SetSummary.of(hard).to_dict(), **values.record.info}
    return out
