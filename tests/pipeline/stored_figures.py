"""Stored figures the findings read, made by hand for the tests: annotation rows of the CSV export's form
and preference results of the stored layout (``cache/preference/<dataset>/<id>.json``)."""
from __future__ import annotations

import csv
import json
from pathlib import Path

CATEGORIES = ("Ambiguity", "Numbers", "Jargon")


def annotation_rows(model: str, n_queries: int, correct: int) -> list[dict]:
    """Per query the LLM assigned one category (the first); the annotator accepts it on the first
    ``correct`` queries and adds nothing."""
    rows = []
    for i in range(n_queries):
        for c, category in enumerate(CATEGORIES):
            assigned = int(c == 0)
            rows.append({"annotator": "ann", "dataset": "dl19", "task": "h2r", "qid": f"q{i}", "category": category,
                         "llm_assigned": assigned, "human_applicable": int(assigned and i < correct),
                         "run_id": f"run-{model}", "model": model, "llm_answer": "readable"})
    return rows


def write_preference_result(cache, dataset: str, outcomes: list[str], provenance: dict | None = None,
                            assignment_report: dict | None = None) -> None:
    # default: its size as Ollama's /api/show reports it (a model of unknown size gates a verdict: issue 33)
    provenance = provenance or {"backend": "ollama", "model": "qwen3:8b", "digest": "0123456789abcdef", "small": False,
                                "parameters_b": 8.2, "size_source": "ollama /api/show"}
    pairs = [{"qid": f"q{i}", "task": "h2r", "outcome": o, "inconsistent": False, "categories_used": ["Numbers"],
              "verdicts": {"ab": {"winner": {"win": "aware", "loss": "baseline"}.get(o, "tie")},
                           "ba": {"winner": {"win": "aware", "loss": "baseline"}.get(o, "tie")}}}
             for i, o in enumerate(outcomes)]
    result = {"version": 1, "dataset": dataset, "id": f"{dataset}-000000000000", "judge": provenance,
              "generators": {"baseline": provenance, "aware": provenance}, "pairs": pairs, "rule": "pair rule",
              "assignment_report": assignment_report or {}}
    folder = cache / "preference" / dataset
    folder.mkdir(parents=True)
    (folder / f"{result['id']}.json").write_text(json.dumps(result))



def write_annotation_csv(rows: list[dict], path: Path) -> Path:
    """``rows`` as the annotation CSV (``pipeline annotations --import`` reads it)."""
    from pipeline.annotation.csv_format import CSV_COLUMNS

    with open(path, "w", newline="", encoding="utf-8") as fh:
        writer = csv.DictWriter(fh, fieldnames=list(CSV_COLUMNS))
        writer.writeheader()
        writer.writerows(rows)
    return path
