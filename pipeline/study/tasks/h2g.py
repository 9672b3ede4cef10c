"""H2G as a failure task: each generator's BERTScore F1 per answered query against the query's reference
passages (:func:`pipeline.generation.h2g.generation_values`), lower is harder (:class:`GenerationTask`).

A generator is ``NAME=FILE.jsonl`` (imported answers, read whole), ``NAME`` alone: the data folder's
``answers/answers.NAME.<dataset>.jsonl`` when it exists (:mod:`pipeline.data.imported`; its size from the
folder's ``models.tsv``: :mod:`pipeline.study.imported_sizes`), or an LLM spec (``embedded``,
``ollama:MODEL``, ``openai:MODEL@URL``, ``auto``: ``pipeline.llm.specs``), asked only for the queries
H2G can score (:func:`answer_queries`) and named by the model the spec resolved to (``backend:model``).
Generated answers are kept under ``cache/failure/<dataset>/generations/``.
"""
from __future__ import annotations

import json
from typing import Iterator, Sequence

from core.atomic import atomic_write_text
from pipeline.generation.h2g import generation_values, reference_note, truncation_note
from pipeline.study.components import identity, identity_digest, parse_component
from pipeline.study.config import require_query_texts, slug, study_dir
from pipeline.study.imported_sizes import imported_record
from pipeline.study.result import GeneratorResult
from pipeline.study.task import EASIER, FailureTask, PerQueryValues, StepContext, not_scored
from pipeline.sets.rule import SetSummary

# why a judged query has no H2G value, from the lists the generator's record keeps (a later reason replaces an earlier)
EXCLUSION_REASONS = (("excluded_empty_answer", "empty answer"),
                     ("excluded_no_relevant_text", "no reference passage with text"),
                     ("excluded_partial_references", "partial references (only some reference passages have text)"),
                     ("excluded_truncated", "answer cut at the token limit"))


def answer_queries(data, partial_references: str = "exclude") -> tuple[dict[str, str], dict[str, str]]:
    """``(queries to answer, {qid: why not})``: the judged queries H2G can score under
    ``partial_references``, and the others (:func:`pipeline.generation.h2g.unscorable_queries`)."""
    from pipeline.generation.h2g import unscorable_queries

    skipped = unscorable_queries(data, partial_references)
    return {q: text for q, text in data.queries().items() if q not in skipped}, skipped


def generation_for(data, arg: str, *, llm_options: dict | None = None, progress: bool = True, on_progress=None,
                   partial_references: str = "exclude"):
    """The answers of generator ``arg`` (imported, or generated and stored under cache/failure/);
    an LLM generator that answered no query raises (:mod:`pipeline.generation.answers`), so the study stops there.
    An LLM is asked only for the queries H2G can score under ``partial_references`` (:func:`answer_queries`;
    the others are recorded in ``not_generated``); an answers file is read whole."""
    from pipeline.generation.answers import Generation, generate_answers, import_answers
    from pipeline.llm import make_client
    name, file = parse_component(arg, "--generator")
    if file is None:
        file = data.folder_files("answers").get(name)
    if file is not None:  # an imported model's size: the folder's models.tsv, or the user's statement
        gen = import_answers(name, file, known_qids=data.topics)
        gen.provenance = imported_record(gen.provenance, data.model_sizes().get(name),
                                         (llm_options or {}).get("stated_sizes"))
        return gen
    require_query_texts(data)
    queries, skipped = answer_queries(data, partial_references)
    client = make_client(name, **{"step": "generation", **(llm_options or {})})
    # a generator that answers nothing raises (pipeline.generation.answers): the step, and the study, stop here
    gen = generate_answers(client, queries, on_progress=on_progress,
                           progress=f"{data.name} answers ({client.provenance.label})" if progress else None)
    gen.not_generated = skipped
    # named by the full identity too: the same model from two hosts must not overwrite one file
    path = study_dir(data) / "generations" / f"{slug(gen.name)}-{identity_digest(identity(gen.provenance))}.json"
    atomic_write_text(path, json.dumps(gen.as_dict(), ensure_ascii=False, indent=1))
    return Generation.from_dict(gen.as_dict())


class GenerationTask(FailureTask, name="h2g", role="generator", section="generators", measure="BERTScore F1",
                     higher_is=EASIER):
    """H2G (module docstring); the study file's ``generators`` hold each :class:`GeneratorResult`."""

    def stages(self, config) -> int:
        return 2 * len(self.components(config))  # the answers, then their BERTScore

    def records(self, config, data, context: StepContext) -> Iterator[tuple[str, None, GeneratorResult]]:
        tracker = context.tracker
        for arg in self.components(config):
            tracker.stage(f"answers of {arg}", len(answer_queries(data, config.partial_references)[0]), "answer")
            gen = generation_for(data, arg, llm_options=config.llm_options, progress=context.progress,
                                 on_progress=tracker.advance, partial_references=config.partial_references)
            tracker.stage(f"BERTScore of {gen.name}")
            values, info = generation_values(data, gen, config.encoder, config.aggregate, config.partial_references,
                                             config.truncated_answers)
            record = GeneratorResult(gen.provenance, gen.prompt, gen.options, gen.source, gen.failed, info, values,
                                     gen.answers, *self.hard_over_all_queries(values, config.quantile),
                                     finish_reasons=gen.finish_reasons)
            context.log(f"[{data.name}] generator {gen.name}: {len(values)} queries scored ({info['encoder']}); "
                        + reference_note(info) + "; " + truncation_note(info))
            yield gen.name, None, record

    def values_of(self, dataset: str, system: str, record: GeneratorResult, judged: Sequence[str],
                  setup: str | None = None) -> PerQueryValues:
        info = record.bertscore or {}
        reasons = {q: f"not generated: {why}" for q, why in (info.get("not_generated") or {}).items()}
        reasons.update({q: "generation failed" for q in record.failed or {}})
        for key, why in EXCLUSION_REASONS:
            reasons.update({q: why for q in info.get(key) or ()})
        provenance = {"provenance": record.provenance, "bertscore": info, "prompt": record.prompt,
                      "options": record.options, "finish_reasons": record.finish_reasons}
        return self.per_query_values(dataset, system, record.per_query,
                                     not_scored(judged, record.per_query, reasons, "no answer"), provenance,
                                     model=record.provenance, identity=identity(record.provenance, record.source),
                                     record=record)


def h2g_sets(config, *, progress: bool = True) -> dict:
    """Each generator's H2G over ``config.data()``: ``{"dataset", "quantile", "generators": {NAME:
    {"provenance", "per_query", "h2g", "h2g_set", ...}}}`` (BERTScore per query and the hard set over
    every query scored; the ``h2g`` command)."""
    result = GenerationTask().run(config, StepContext(progress=progress))
    out = {"dataset": result.dataset, "quantile": result.quantile, "generators": {}}
    for values in result:
        record, hard = values.record, values.hard_set(result.quantile)
        out["generators"][values.system] = {"provenance": record.provenance, "per_query": values.values,
                                            "h2g": list(hard.qids), "h2g_set": SetSummary.of(hard).to_dict(),
                                            **record.bertscore, "finish_reasons": record.finish_reasons}
    return out
