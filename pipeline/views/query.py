"""The Query page (``pages/query.py``) without its widgets: one query of one dataset across every store.

Everything here is *read* from what measured it, nothing is recomputed: the studies
(:mod:`pipeline.study.store`: nDCG@10, answers and their BERTScore, the judges' labels, the hard sets
of every configuration), the retrieval run files those studies name, the typology store
(:mod:`pipeline.typology.store`), the annotation store (:mod:`pipeline.annotation.store`), the stored
predictions (:mod:`pipeline.predict.store`), the difficulty-aware preference results
(:mod:`pipeline.prompting.preference`) and the difficulty-aware judging and retrieval results
(:mod:`pipeline.aware.store`: ``aware-judge``, ``aware-retrieve``). The two derived figures are a rule applied to stored values, not
a measurement: a pair's disagreement is :func:`pipeline.judging.h2j.disagrees` on the stored label and
NIST grade (the rule the study's per-query share counted), and a predictor's percentile is the query's
rank among the stored values of the same prediction and dataset (``scipy.stats.percentileofscore``).

Untrusted text (queries, passages, answers, model replies) goes into DataFrames and strings the page
shows with ``st.text``: never HTML or Markdown. Every frame names the model (with its size where the
provenance records it), the file and the configuration behind its figures; a store without this query
gives a line saying what is missing and the command that produces it.
"""
from __future__ import annotations

from pathlib import Path
from urllib.parse import urlencode

import pandas as pd

from pipeline.data import trec_io
from pipeline.data.datasets import DATASETS, TrecDlData, load_dataset
from pipeline.generation.h2g import answer_cut_note
from pipeline.judging.h2j import disagrees
from pipeline.llm.base import Provenance
from pipeline.study import store as studies
from pipeline.study.result import StudyResult
# one pair as the Difficulty-aware generation page shows it (the page's import)
from pipeline.views.difficulty_aware_generation import (answer_text, outcome_line, pair_details_frame,  # noqa: F401
                                                        prompt_change, verdict_frame)

PAGE = "query"  # the page's URL path (pages/query.py)
TOP_PASSAGES = 10  # a run's top passages shown per retriever (nDCG@10's cut)
LINK_TEXT = "open"  # the link column's text (st.column_config.LinkColumn(display_text=...))
LINK_COLUMN = "query page"
NOT_STORED = "not stored"
NO_TEXT = "(no text: neither the study nor its data folder holds this passage)"
AWARE_KINDS = ("aware-judge", "aware-retrieve")
TASK_NAMES = {"h2r": "hard to retrieve (H2R)", "h2g": "hard to generate (H2G)", "h2j": "hard to judge (H2J)"}


# ---------------------------------------------------------------------------- links to the page
def query_link(dataset: str, qid: str) -> str:
    """``query?dataset=dl19&qid=1037798``: the page's deep link (relative, like the jobs' study links)."""
    return f"{PAGE}?{urlencode({'dataset': dataset, 'qid': qid})}"


def with_query_links(frame: pd.DataFrame, dataset: str | pd.Series, qid_column: str = "qid") -> pd.DataFrame:
    """``frame`` with a :data:`LINK_COLUMN` of each row's Query page link (``dataset``: one name, or a
    column of names for a frame over several datasets); a page shows it with
    ``st.column_config.LinkColumn(display_text=LINK_TEXT)``."""
    frame = frame.copy()
    datasets = dataset if isinstance(dataset, pd.Series) else pd.Series([dataset] * len(frame), index=frame.index)
    frame[LINK_COLUMN] = [query_link(str(d), str(q)) for d, q in zip(datasets, frame[qid_column])]
    return frame


def model_text(provenance: dict | None) -> str:
    """``ollama:qwen3:8b [abc] (8.19B (ollama /api/show))``, ``imported:text-davinci-003 (175B (models.tsv))``:
    the model's label and its size (``unknown size`` where nothing records one; none: "")."""
    if not provenance:
        return ""
    model = Provenance.from_dict(provenance)
    return f"{provenance.get('label') or model.label} ({model.size_text})"


def small_model_warnings(study: StudyResult) -> list[str]:
    """One warning per generator or judge of the study made by a small model (``Provenance.not_a_finding``):
    its answers, scores and labels here exercise the pipeline and are not findings."""
    models = [("generator", name, g.provenance) for name, g in study.generators.items()]
    models += [("judge", name, j.provenance) for name, per in study.judges.items() for j in per.values()]
    out = []
    for role, name, provenance in models:
        note = Provenance.from_dict(provenance).not_a_finding
        line = f"The {role} {name} ({model_text(provenance)}) is {note}." if note else ""
        if line and line not in out:
            out.append(line)
    return out


# ---------------------------------------------------------------------------- which queries exist
def _typology_runs(dataset: str | None = None) -> list[tuple[dict, list[dict]]]:
    """``[(run, its queries)]`` of the typology store, newest first (none before the first run: the page never
    creates a store); the store is closed on return."""
    from pipeline.typology.store import TypologyStore, default_path

    if not default_path().is_file():
        return []
    with TypologyStore() as store:
        return [(run, store.queries(run["run_id"])) for run in store.list_runs(dataset)]


def _annotation_rows() -> list[dict]:
    from pipeline.annotation.store import AnnotationStore, default_path

    if not default_path().is_file():
        return []
    with AnnotationStore(default_path()) as store:
        return store.export_rows()


def _preference_results(dataset: str) -> list[tuple[Path, dict]]:
    from pipeline.prompting import preference

    out = []
    for path in preference.list_results(dataset):
        try:
            out.append((path, preference.load_result(path)))
        except ValueError:  # another version's file: the Difficulty-aware page says so, not this one
            continue
    return out


def _aware_results(kind: str, dataset: str | None = None) -> list[tuple[Path, dict]]:
    """The stored ``aware-judge`` or ``aware-retrieve`` results (newest first) that load as their version."""
    from pipeline.views import aware_judge, aware_retrieve

    view = {"aware-judge": aware_judge, "aware-retrieve": aware_retrieve}[kind]
    out = []
    for path in store_paths(kind, dataset):
        try:
            out.append((path, view.load(path)))
        except ValueError:  # another version's file: the Difficulty-aware page says so, not this one
            continue
    return out


def store_paths(kind: str, dataset: str | None = None) -> list[Path]:
    from pipeline.aware import store

    return store.list_results(kind, dataset)


def _predictions() -> list[dict]:
    from pipeline.predict import store

    out = []
    for entry in store.list_results():
        try:
            out.append(store.load(entry["id"]))
        except (ValueError, OSError):
            continue
    return out


def datasets() -> list[str]:
    """Datasets some store holds a query of: stored studies, typology runs, preference results, difficulty-aware
    judging and retrieval results."""
    from pipeline.prompting import preference

    names = set(studies.study_datasets())
    names |= {run["dataset"] for run, _ in _typology_runs()}
    names |= {path.parent.name for path in preference.list_results()}
    names |= {path.parent.name for kind in AWARE_KINDS for path in store_paths(kind)}
    return sorted(names)


def query_choices(dataset: str, stored: list[StudyResult] | None = None) -> dict[str, str]:
    """``{qid: query text}`` of every query a store of ``dataset`` holds, in the newest study's order
    (then the typology runs', the preference results', the difficulty-aware judging and retrieval results');
    ``stored``: the dataset's studies, when read already."""
    out: dict[str, str] = {}
    for study in stored_studies(dataset) if stored is None else stored:
        for qid, text in study.queries.items():
            out.setdefault(qid, text)
    for _, queries in _typology_runs(dataset):
        for q in queries:
            out.setdefault(q["qid"], q["query"])
    for _, result in _preference_results(dataset):
        for pair in result["pairs"]:
            out.setdefault(pair["qid"], pair["query"])
    for kind in AWARE_KINDS:
        for _, result in _aware_results(kind, dataset):
            for record in result["queries"]:
                out.setdefault(record["qid"], record["query"])
    return out


def study_files(dataset: str) -> tuple[tuple[str, float], ...]:
    """``((study id, file mtime), ...)`` of the dataset's stored studies, newest first: what the page's cache
    of :func:`stored_studies` is keyed by (a study stored or deleted since is read anew)."""
    return tuple((entry["id"], Path(entry["path"]).stat().st_mtime) for entry in studies.list_studies(dataset))


def stored_studies(dataset: str) -> list[StudyResult]:
    """Every stored study of ``dataset``, newest first (as ``StudyResult``, read as the Failure overlap page reads
    them)."""
    return [StudyResult.from_dict(studies.load_study(dataset, entry["id"])) for entry in studies.list_studies(dataset)]


def studies_with(stored: list[StudyResult], qid: str) -> list[StudyResult]:
    """The studies of ``stored`` that hold the query."""
    return [s for s in stored if qid in s.queries]


# ---------------------------------------------------------------------------- NIST grades and texts of a study
def folder_data(study: StudyResult) -> TrecDlData | None:
    """The study's data folder as ``pipeline.data`` loads it (topics, qrels, the passages file's texts, read once
    per process), or None when the study names none or it is gone or unreadable."""
    if not study.data_folder or study.dataset not in DATASETS or not Path(study.data_folder).is_dir():
        return None
    try:
        return load_dataset(study.dataset, study.data_folder)
    except (ValueError, OSError):  # DatasetError, TrecFormatError: the folder changed since the study
        return None


def nist_grades(study: StudyResult, qid: str, data: TrecDlData | None = None) -> tuple[dict[str, int], str, str]:
    """``({pid: NIST grade}, where they come from, what a passage missing there is)`` for one query of a
    study: the qrels file of the study's data folder (``data``, default :func:`folder_data`) when it is there
    (every judged passage: a missing one is "unjudged"), else the grades the study stored (its grade-2/3
    passages with text only: a missing one is "not stored", never taken as irrelevant)."""
    data = data if data is not None else folder_data(study)
    if data is not None and data.has_qrels:
        return dict(data.qrels.get(qid, {})), str(Path(study.data_folder) / data.spec.qrels_file), "unjudged"
    stored = (study.relevant_grades or {}).get(qid, {})
    return dict(stored), (f"study {study.id}'s stored grades (grade-2/3 passages with text only; "
                          "other passages: not stored)"), NOT_STORED


# ---------------------------------------------------------------------------- retrieval
def retrieval_frame(study: StudyResult, qid: str) -> pd.DataFrame:
    """Per retriever of the study: its nDCG@10 for the query, whether it is in that retriever's H2R set over
    every query it scores, and its run (the retriever's provenance)."""
    rows = [{"retriever": name, "nDCG@10": r.per_query.get(qid),
             "in its H2R set (all queries)": qid in r.hard_all_queries,
             "run": r.info.get("provenance", "")} for name, r in study.retrievers.items()]
    return pd.DataFrame(rows, columns=["retriever", "nDCG@10", "in its H2R set (all queries)", "run"])


def top_passages(study: StudyResult, retriever: str, qid: str, k: int = TOP_PASSAGES) -> tuple[pd.DataFrame, str]:
    """``(frame, note)``: the retriever's top ``k`` passages for the query, read from the run file the study
    names (rank, pid, score, NIST grade, text where the study stored it), and a line naming the files;
    an empty frame and the reason when the run file is no longer there."""
    info = study.retrievers[retriever].info
    path = Path(info.get("path") or "")
    if not info.get("path") or not path.is_file():
        return (pd.DataFrame(columns=["rank", "pid", "score", "NIST grade", "text"]),
                f"{retriever}'s run file ({info.get('path') or 'not recorded'}) is not there any more: "
                f"its top passages cannot be shown (nDCG@10 above is the study's).")
    ranked = sorted(trec_io.read_run(path).get(qid, {}).items(), key=lambda kv: (-kv[1], kv[0]))[:k]
    data = folder_data(study)
    grades, grades_from, missing = nist_grades(study, qid, data)
    texts = dict(study.relevant_passages.get(qid, {}))
    rows = [{"rank": i, "pid": pid, "score": score, "NIST grade": str(grades.get(pid, missing)),
             "text": texts.get(pid) or (data.passage(pid) if data is not None else None) or NO_TEXT}
            for i, (pid, score) in enumerate(ranked, 1)]
    where = "the study's grade-2/3 passages"
    if data is not None:
        where += f", then the data folder's {Path(study.data_folder) / data.spec.passages_file}"
    note = f"Run file {path}; NIST grades from {grades_from}; texts from {where}."
    return pd.DataFrame(rows, columns=["rank", "pid", "score", "NIST grade", "text"]), note


# ---------------------------------------------------------------------------- generation
def generation_frame(study: StudyResult, qid: str) -> pd.DataFrame:
    """Per generator: its model, its answer (plain text; a cut answer says so), BERTScore F1 and how it was
    computed (encoder, aggregate), or why the query has no value."""
    rows = []
    for name, g in study.generators.items():
        answer = g.answers.get(qid)
        cut = answer_cut_note(g.finish_reasons, g.options, qid)
        why = g.failed.get(qid) or ("excluded from H2G" if qid not in g.per_query and answer is not None else "")
        rows.append({"generator": name, "model": model_text(g.provenance),
                     "answer": (answer if answer is not None else "(no answer)") + (f"\n({cut})" if cut else ""),
                     "BERTScore F1": g.per_query.get(qid), "no value because": why,
                     "BERTScore": f"{g.bertscore.get('label', g.bertscore.get('encoder', ''))}, "
                                  f"{g.bertscore.get('aggregate', '')} over grade-2/3 passages",
                     "in its H2G set (all queries)": qid in g.hard_all_queries})
    return pd.DataFrame(rows, columns=["generator", "BERTScore F1", "answer", "model", "no value because", "BERTScore",
                                       "in its H2G set (all queries)"])


def imported_answers_frame(dataset: str, qid: str, folder: str | Path | None = None) -> tuple[pd.DataFrame, str]:
    """``(frame, note)``: the query's answer in each of the data folder's answers files (``folder``, default the
    configured one: :mod:`pipeline.data.imported`), with its model's size as the folder's ``models.tsv`` lists
    it and the file, whether or not a study used them; the note says where they come from or why there are none."""
    from core import paths
    from pipeline.data.imported import folder_answers, folder_model_sizes
    from pipeline.generation.answers import read_answers_jsonl

    columns = ["generator", "answer", "size (models.tsv)", "file"]
    folder = folder if folder is not None else paths.data_folder("trec_dl")
    files = folder_answers(folder, dataset)
    if not files:
        where = f"the data folder {folder}" if folder is not None else "no data folder is configured (IRDASH_DATA_TREC_DL)"
        return pd.DataFrame(columns=columns), f"No answers file for {dataset.upper()}: {where}."
    listed = folder_model_sizes(folder)
    rows = []
    for name, path in files.items():
        row = listed.get(name)
        rows.append({"generator": name, "answer": read_answers_jsonl(path).get(qid, "(no answer to this query)"),
                     "size (models.tsv)": f"{row.parameters} ({row.source})" if row else "not listed: unknown",
                     "file": str(path)})
    return pd.DataFrame(rows, columns=columns), (f"The data folder's answers files ({folder}), as imported; a study "
                                                 f"scores them with BERTScore (the table above, where one did).")


def reference_frame(study: StudyResult, qid: str) -> pd.DataFrame:
    """The reference passages BERTScore compared each answer with: the study's grade-2/3 passages, highest first."""
    grades = (study.relevant_grades or {}).get(qid, {})
    rows = sorted(({"pid": pid, "NIST grade": str(grades.get(pid, NOT_STORED)), "text": text}
                   for pid, text in study.relevant_passages.get(qid, {}).items()),
                  key=lambda r: (r["NIST grade"] != "3", r["NIST grade"] != "2", r["pid"]))
    return pd.DataFrame(rows, columns=["pid", "NIST grade", "text"])


# ---------------------------------------------------------------------------- judging
def _labels_binary(judge_info: dict) -> bool:
    # Judgments.labels_binary is not stored in a study: only the project's binary prompt answers 0/1,
    # and its source line says so (pipeline.judging.judgments.llm_judgments); imported files are graded
    return "the project's binary prompt" in str(judge_info.get("source", ""))


def judging_frame(study: StudyResult, qid: str) -> tuple[pd.DataFrame, str]:
    """``(frame, note)``: per judge, setup and labelled passage (disagreeing ones first) the judge's label beside
    NIST's grade and whether they disagree under the setup's rule (``pipeline.judging.h2j.disagrees``), then the
    query's stored disagreement share; the note names where the NIST grades come from."""
    grades, grades_from, missing = nist_grades(study, qid)
    rows = []
    for name, per_setup in study.judges.items():
        for setup, j in per_setup.items():
            binary = _labels_binary(j.info)
            for pid, label in sorted((j.labels or {}).get(qid, {}).items()):
                known = pid in grades
                rows.append({"judge": name, "setup": setup, "model": model_text(j.provenance), "pid": pid,
                             "judge's label": label, "NIST grade": str(grades.get(pid, missing)),
                             "disagrees": (("yes" if disagrees(label, grades[pid], setup, llm_is_binary=binary)
                                            else "no") if known else f"NIST grade {missing}"),
                             "query's disagreement (stored)": j.per_query.get(qid)})
            for pid, reply in sorted((j.unparseable or {}).get(qid, {}).items()):
                rows.append({"judge": name, "setup": setup, "model": model_text(j.provenance), "pid": pid,
                             "judge's label": None, "NIST grade": str(grades.get(pid, missing)),
                             "disagrees": f"unparseable reply, excluded: {reply}",
                             "query's disagreement (stored)": j.per_query.get(qid)})
    columns = ["judge", "setup", "model", "pid", "judge's label", "NIST grade", "disagrees",
               "query's disagreement (stored)"]
    # per judge and setup, the disagreeing pairs first (what a reader looks for in a query's 100-odd pairs)
    rows.sort(key=lambda r: (r["judge"], r["setup"], r["disagrees"] != "yes"))
    return pd.DataFrame(rows, columns=columns), f"NIST grades from {grades_from}."


# ---------------------------------------------------------------------------- hard sets
def hard_sets_frame(holding: list[StudyResult], qid: str) -> pd.DataFrame:
    """Per configuration holding the query: in which of its three sets (within the configuration's universe) it
    is, with the quantile, the universe rule and the stored studies that hold it so. One row per distinct
    answer: studies that ran one configuration alike (stored before one study per configuration) share it."""
    rows: dict[tuple, dict] = {}
    for study in holding:
        for label, config in study.configurations.items():
            sets = config.hard_in_universe
            row = {"configuration": label, **{TASK_NAMES[t]: qid in sets.get(t, []) for t in TASK_NAMES},
                   "in its universe": _scored_by_all(study, label, qid),  # scored by all three: the sets' universe
                   "quantile": study.quantile, "universe": study.universe_rule}
            rows.setdefault(tuple(row.values()), {**row, "studies": []})["studies"].append(study.id)
    # the three sets first: the table is read across, and a narrow page cuts its right-hand columns
    return pd.DataFrame([{**row, "studies": ", ".join(row["studies"])} for row in rows.values()],
                        columns=["configuration", *TASK_NAMES.values(), "in its universe", "quantile", "universe",
                                 "studies"])


def _scored_by_all(study: StudyResult, label: str, qid: str) -> bool:
    return all(qid in values for values in (study.retriever(label).per_query, study.generator(label).per_query,
                                            study.judge(label).per_query))


# ---------------------------------------------------------------------------- typology and annotations
def typology_frame(dataset: str, qid: str) -> pd.DataFrame:
    """Per finished typology run holding the query: task, the reasons assigned (with their justifications),
    the assignment's status, the model (with its size) and the run id."""
    rows = [{"task": run["task"].upper(), "status": q["status"],
             "reasons": "; ".join(f"{a['category']}: {a.get('justification', '')}" for a in q["assigned"]) or "(none)",
             "free-text reason": q["reason"] or q["reason_failure"] or "",
             "model": model_text(run["provenance"]), "typology": run["typology_label"], "run": run["run_id"]}
            for run, queries in _typology_runs(dataset) for q in queries if q["qid"] == qid]
    return pd.DataFrame(rows, columns=["task", "status", "reasons", "free-text reason", "model", "typology", "run"])


def annotations_frame(dataset: str, qid: str) -> pd.DataFrame:
    """The annotators' answered cells for the query (the rows the export and the validation read): per
    annotator, task and category, whether the LLM assigned it and whether the annotator applies it."""
    rows = [{"annotator": r["annotator"], "task": r["task"].upper(), "category": r["category"],
             "LLM assigned": bool(r["llm_assigned"]), "annotator applies": bool(r["human_applicable"]),
             "model": r["model"], "run": r["run_id"]}
            for r in _annotation_rows() if r["dataset"] == dataset and r["qid"] == qid]
    return pd.DataFrame(rows, columns=["annotator", "task", "category", "LLM assigned", "annotator applies", "model",
                                       "run"])


# ---------------------------------------------------------------------------- predictors
def predictors_frame(dataset: str, qid: str) -> tuple[pd.DataFrame, list[str]]:
    """Per stored prediction of the dataset and predictor: the query's value and its percentile among the
    same prediction's values over the dataset's queries (``percentileofscore``, kind "weak": the share at
    or below it), the family and the prediction id; an undefined value says so. With it, one line per
    prediction saying what it was computed from (index, runs, models: the Predicting failure page's line)."""
    from pipeline.views.predicting_failure import provenance_line
    from scipy.stats import percentileofscore

    rows, lines = [], []
    for result in _predictions():
        if dataset not in result.get("datasets", []):
            continue
        lines.append(provenance_line(result))
        own = {q for t in result.get("targets", {}).get(dataset, {}).values() for q in t["values"]}
        for name, values in result.get("predictors", {}).items():
            info = result.get("predictor_info", {}).get(name, {})
            value = values.get(qid)
            pool = [v for q, v in values.items() if q in own and v is not None]
            undefined = (info.get("undefined") or {}).get(dataset) or []
            rows.append({"predictor": name, "family": info.get("family", ""), "value": value,
                         "percentile": percentileofscore(pool, value, kind="weak") if value is not None and pool
                         else None,
                         "of queries": len(pool),
                         "note": "undefined for this query" if qid in undefined else
                                 ("" if value is not None else "no value for this query"),
                         "prediction": result.get("id", "")})
    return pd.DataFrame(rows, columns=["predictor", "family", "value", "percentile", "of queries", "note",
                                       "prediction"]), lines


# ---------------------------------------------------------------------------- difficulty-aware pairs
def preference_pairs(dataset: str, qid: str) -> list[dict]:
    """``[{"result", "file", "judge", "baseline", "aware", "pair", "details"}]``: the query's difficulty-aware pairs
    in every stored preference result (newest first), with the models that answered and judged and the pair's
    reasons (``details``: the Difficulty-aware generation page's table)."""
    out = []
    for path, result in _preference_results(dataset):
        for pair in result["pairs"]:
            if pair["qid"] == qid:
                out.append({"result": result["id"], "file": str(path), "judge": model_text(result["judge"]),
                            "baseline": model_text(result["generators"]["baseline"]),
                            "aware": model_text(result["generators"]["aware"]), "pair": pair,
                            "details": pair_details_frame(pair, result)})
    return out


def own_h2j_note(result: dict, qid: str, holding: list[StudyResult]) -> str | None:
    """Why a query a difficulty-aware judging result counts as hard to judge may be in no H2J set of the Hard sets
    table: the result draws H2J from its own judge's disagreement over its own universe and pair sample, the
    table from the stored studies' judges within each configuration's universe. None when the table agrees
    (some configuration of the same setup holds the query in H2J) or the result does not count it hard."""
    hard = [s for s, sets in result["sets"].items() if qid in sets["hard"]]
    missing = [s for s in hard if not any(c.components.setup == s and qid in c.hard_in_universe.get("h2j", [])
                                          for study in holding for c in study.configurations.values())]
    if not missing:
        return None
    c = result["config"]
    judges = sorted({name for study in holding for name in study.judges})
    table = (f"the Hard sets table's H2J comes from the stored studies' judges ({', '.join(judges)}), each within "
             f"its configuration's universe, and none of them holds it in the {' or '.join(missing)} setup: the "
             f"sets are drawn by different judges, pair samples or universes"
             if holding else "no stored study holds this query, so the Hard sets table has no row for it")
    return (f"Hard to judge ({', '.join(missing)}) for this result's own judge, {result['judge'].get('label', '')}: "
            f"the top {c['quantile']:g} of its disagreement with NIST over its {len(result['universe'])} queries "
            f"(at most {c['cap'] or 'all'} pairs per query). But {table}.")


def aware_judgments(dataset: str, qid: str, holding: list[StudyResult] = ()) -> list[dict]:
    """``[{"result", "file", "judge", "not_a_finding", "own_h2j", "groups", "sentences", "labels",
    "disagreement"}]``: the query in every stored difficulty-aware judging result (newest first): its group per
    setup, why the Hard sets table of the studies ``holding`` it may not count it hard to judge when the result
    does (:func:`own_h2j_note`), its difficulty and control sentences, each arm's label per passage beside
    NIST's, and its disagreement per setup and arm (the Difficulty-aware page's frames,
    :mod:`pipeline.views.aware_judge`)."""
    from pipeline.views import aware_judge

    out = []
    for path, result in _aware_results("aware-judge", dataset):
        if not any(r["qid"] == qid for r in result["queries"]):
            continue
        record = next(r for r in result["queries"] if r["qid"] == qid)
        out.append({"result": result["id"], "file": str(path), "judge": model_text(result["judge"]),
                    "not_a_finding": aware_judge.not_a_finding(result),
                    "own_h2j": own_h2j_note(result, qid, list(holding)),
                    "groups": ", ".join(f"{setup}: {group}" for setup, group in record["group"].items() if group),
                    "sentences": aware_judge.sentences(result, qid),
                    "labels": aware_judge.labels_frame(result, qid),
                    "disagreement": aware_judge.disagreement_frame(result, qid)})
    return out


def aware_rewrites(dataset: str, qid: str) -> list[dict]:
    """``[{"result", "file", "rewriter", "not_a_finding", "corpus", "sentence", "arms"}]``: the query in every stored
    difficulty-aware retrieval result (newest first): its reason sentence, and per arm (original, plain rewrite,
    difficulty-aware rewrite, control rewrite, RM3) the query text BM25 ran and its nDCG@10."""
    from pipeline.views import aware_retrieve

    out = []
    for path, result in _aware_results("aware-retrieve", dataset):
        row = aware_retrieve.rewrites_frame(result)
        row = row[row["qid"] == qid]
        if row.empty:
            continue
        row = row.iloc[0]
        texts = {"original": row["original"], "plain_rewrite": row["plain rewrite"],
                 "aware_rewrite": row["difficulty-aware rewrite"], "control_rewrite": row["control rewrite"],
                 "rm3": "RM3 terms: " + row["RM3 expansion terms"]}
        arms = pd.DataFrame([{"arm": title, "query BM25 ran": texts[arm],
                              "nDCG@10": row[f"nDCG@10 {title}"]} for arm, title in aware_retrieve.ARM_TITLES.items()])
        out.append({"result": result["id"], "file": str(path), "rewriter": model_text(result["rewriter"]),
                    "not_a_finding": aware_retrieve.not_a_finding(result), "corpus": result["corpus"]["statement"],
                    "sentence": row["reason sentence"], "arms": arms})
    return out


# ---------------------------------------------------------------------------- what is missing, and how to get it
def first_study_hint(dataset: str = "dl19") -> str:
    """The command that stores a first study of ``dataset`` from the configured data folder (the Failure overlap
    page's hint: no LLM call where the folder has answers and judgments)."""
    from core import paths
    from pipeline.views.failure_overlap import first_study_hint as hint

    return hint(dataset, paths.data_folder("trec_dl"))


def missing_lines(dataset: str) -> dict[str, str]:
    """Per section, the line shown when no store holds the query: what is missing and the command producing it."""
    return {
        "study": f"No stored study of {dataset.upper()} holds this query: run one on the Failure overlap page or "
                 f"in a shell: {first_study_hint(dataset)}.",
        "typology": f"No typology run of {dataset.upper()} holds this query: start one on the Failure typology page "
                    f"or with `python -m pipeline typology --dataset {dataset} --task h2r` (h2g, h2j).",
        "annotations": "No annotator has answered this query's reasons: annotate them on the Annotate reasons page "
                       "(a sample drawn from the typology runs).",
        "predictors": f"No stored prediction covers {dataset.upper()}: compute one on the Predicting failure page or "
                      f"with `python -m pipeline predict --dataset {dataset}`.",
        "preference": f"No difficulty-aware result of {dataset.upper()} holds this query: run one on the "
                      f"Difficulty-aware generation page or with `python -m pipeline prefer --dataset {dataset}`.",
        "aware-judge": f"No difficulty-aware judging result of {dataset.upper()} holds this query (it re-judges the "
                       f"H2J queries and a control set): start one on the Difficulty-aware page or run "
                       f"`python -m pipeline aware-judge --dataset {dataset} --judge SPEC`.",
        "aware-retrieve": f"No difficulty-aware retrieval result of {dataset.upper()} holds this query (it rewrites "
                          f"the H2R queries): run `python -m pipeline aware-retrieve --dataset {dataset} "
                          f"--rewriter SPEC`.",
    }
