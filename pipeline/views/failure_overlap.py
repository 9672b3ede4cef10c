"""Data and charts for the "Failure overlap" page (no streamlit here; the page only lays out widgets).

The page reads the studies that ``python -m pipeline run`` wrote (:mod:`pipeline.study.store`) as
:class:`pipeline.study.result.StudyResult` and starts new runs as background jobs (:func:`submit_study`),
like training jobs. Everything it shows names its configuration (retriever | generator | judge | setup),
and a configuration with a small model (``Provenance.small``) carries its note saying that its figures
exercise the pipeline and are not findings.
"""
from __future__ import annotations

import json
from pathlib import Path
from typing import Sequence

import pandas as pd  # noqa: E402

import uuid  # noqa: E402


from core import jobs  # noqa: E402
from core.jobs import progress as job_progress  # noqa: E402
from pipeline.study import store as studies  # noqa: E402
from pipeline.data.imported import folder_files  # noqa: E402
from pipeline.study.jobs import STUDY, stored_without_llm, study_link  # noqa: E402
from pipeline.generation.h2g import answer_cut_note, reference_note, truncation_note  # noqa: E402
from pipeline.judging.benchmark import benchmark_line  # noqa: E402
from pipeline.judging.judgments import DEFAULT_CAP  # noqa: E402
from pipeline.llm.base import SMALL_MODEL, Provenance  # noqa: E402
from pipeline.sets.overlap import TASKS, all_pairwise, further_note, intersection_label  # noqa: E402,F401  (the page's note)
from pipeline.study.result import Components, StudyResult  # noqa: E402
from pipeline.study.universe import DEFAULT_UNIVERSE, UNIVERSE_HELP, UNIVERSES, check_universe  # noqa: E402,F401
from pipeline.views import forms  # noqa: E402
from pipeline.views.venn import (REGION_IDS, TASK_LABELS, VENN_ORDER, draw_venn3, empty_sets, empty_sets_note,  # noqa: E402,F401
                                 has_hard_queries, region_from_selection, region_label, venn_figure, venn_plotly,
                                 venn_png, venn_title)

PASSAGES_SHOWN = 10  # a query's relevant passages listed before "Show all" (some queries have 183)


def study_datasets() -> list[str]:
    """Datasets with at least one stored study, sorted."""
    return studies.study_datasets()


def list_studies(dataset: str) -> list[dict]:
    """The dataset's studies, newest first (a legacy ``study.json`` is migrated on the way)."""
    return studies.list_studies(dataset)


def load_study(dataset: str, study_id: str, mtime: float | None = None) -> StudyResult:
    """One stored study (``mtime`` only keys the page's cache)."""
    return StudyResult.from_dict(studies.load_study(dataset, study_id))


def study_label(entry: dict) -> str:
    return studies.describe(entry)


def delete_study(dataset: str, study_id: str) -> None:
    studies.delete_study(dataset, study_id)


def configuration_labels(study: StudyResult) -> list[str]:
    return list(study.configurations)


def components(study: StudyResult) -> dict[str, list[str]]:
    """The choices per selector: retriever, generator, judge, setup."""
    configs = [c.components for c in study.configurations.values()]
    return {key: list(dict.fromkeys(getattr(c, key) for c in configs))
            for key in ("retriever", "generator", "judge", "setup")}


def find_configuration(study: StudyResult, retriever: str, generator: str, judge: str, setup: str) -> str | None:
    """The configuration of these four components (in a study with further tasks: its first one with them)."""
    wanted = Components(retriever, generator, judge, setup)
    for label, c in study.configurations.items():
        if c.components == wanted or Components(c.components.retriever, c.components.generator,
                                                c.components.judge, c.components.setup) == wanted:
            return label
    return None



def regions_frame(analysis: dict) -> pd.DataFrame:
    n = analysis["n_queries"]
    rows = [{"region": region_label(name), "key": name, "queries": analysis["regions"][name]["count"],
             "share of all": analysis["regions"][name]["count"] / n if n else None}
            for name in VENN_ORDER]
    return pd.DataFrame(rows)


def share_text(count: int, of: int, empty_reason: str) -> str:
    """``12.5% (1 of 8)``; ``— (REASON)`` when there is nothing to take a share of (never "None")."""
    return f"{count / of:.1%} ({count} of {of})" if of else f"— ({empty_reason})"


def summary_frame(analysis: dict) -> pd.DataFrame:
    """The all-three share (of the common universe) and each set's exclusive share (of the set), as text:
    the share of an empty set has no value and says why."""
    n = analysis["n_queries"]
    rows = [{"figure": "hard in all three", "share": share_text(analysis["all_three"]["count"], n, "no query"),
             "queries": analysis["all_three"]["count"]}]
    for task, ex in analysis["exclusive"].items():
        size = analysis["sizes"][task]
        rows.append({"figure": f"{task.upper()} exclusive share",
                     "share": share_text(ex["count"], size, f"the {task.upper()} set is empty"),
                     "queries": ex["count"]})
    return pd.DataFrame(rows, columns=["figure", "share", "queries"])


def pairwise_frame(analysis: dict) -> pd.DataFrame:
    largest = {analysis["largest_pairwise"]["pair"], *analysis["largest_pairwise"]["tied_with"]}
    rows = [{"pair": intersection_label(key), "overlap": f["count"],
             "expected if independent": f["expected_if_independent"], "Jaccard": f["jaccard"],
             "share of first": f["share_of_first"], "share of second": f["share_of_second"],
             "p (hypergeometric, ≥)": f["p_value"], "largest (ties marked)": key in largest}
            for key, f in all_pairwise(analysis).items()]
    return pd.DataFrame(rows)


def stability_frame(study: StudyResult) -> pd.DataFrame:
    """Pairwise overlaps across every configuration of the study (one row per configuration)."""
    rows = []
    for label, c in study.configurations.items():
        a = c.analysis
        universe = study.universe_summary(label)
        row = {"configuration": label, "queries": a["n_queries"],
               "scored per task": ", ".join(f"{t.upper()} {n}" for t, n in universe.n_task.items()),
               "universe": universe.rule, "all three": a["all_three"]["share"]}
        for key, f in a["pairwise"].items():
            name = intersection_label(key)
            row[f"{name}"] = f["count"]
            row[f"{name} p"] = f["p_value"]
        row["largest pair"] = intersection_label(a["largest_pairwise"]["pair"]) if a["largest_pairwise"]["pair"] else ""
        row[SMALL_MODEL] = ", ".join(c.small_model) or ""
        rows.append(row)
    return pd.DataFrame(rows)


def region_queries(study: StudyResult, label: str, region: str) -> pd.DataFrame:
    """The queries of one Venn region with their three values (nDCG@10, BERTScore F1, disagreement)."""
    qids = study.configurations[label].analysis["regions"][region]["qids"]
    ndcg = study.retriever(label).per_query
    f1 = study.generator(label).per_query
    dis = study.judge(label).per_query
    rows = [{"qid": q, "query": study.queries.get(q, ""), "nDCG@10": ndcg.get(q), "BERTScore F1": f1.get(q),
             "disagreement": dis.get(q)} for q in qids]
    return pd.DataFrame(rows, columns=["qid", "query", "nDCG@10", "BERTScore F1", "disagreement"])


def query_detail(study: StudyResult, label: str, qid: str) -> dict:
    """The query, its generated answer and its relevant passages, highest grade first (plain text
    for ``st.text``): ``passages`` is ``[(pid, grade or None, text)]``, ``grade_counts`` ``{grade: n}``,
    ``cut`` "cut at N tokens" when the answer was cut at the token limit (else None)."""
    generator = study.generator(label)
    texts = study.relevant_passages.get(qid, {})
    grades = (study.relevant_grades or {}).get(qid, {})  # None in studies stored before grades were
    passages = sorted(((pid, grades.get(pid), text) for pid, text in texts.items()),
                      key=lambda p: (-(p[1] if p[1] is not None else -1), p[0]))
    counts: dict = {}
    for _, grade, _ in passages:
        counts[grade] = counts.get(grade, 0) + 1
    return {"query": study.queries.get(qid, ""), "answer": generator.answers.get(qid),
            "answer_by": generator.provenance.get("label", study.configurations[label].components.generator),
            "small": generator.model.small, "passages": passages, "grade_counts": counts,
            "cut": answer_cut_note(generator.finish_reasons, generator.options, qid)}


def passages_heading(detail: dict) -> str:
    """``Relevant passages with text: 41 (grade 3: 12, grade 2: 29)``."""
    counts = detail["grade_counts"]
    by_grade = ", ".join(f"grade {g}: {n}" if g is not None else f"grade unknown: {n}"
                         for g, n in sorted(counts.items(), key=lambda kv: -(kv[0] if kv[0] is not None else -1)))
    return f"Relevant passages with text: {len(detail['passages'])}" + (f" ({by_grade})" if by_grade else "")


# ---------------------------------------------------------------------------- comparing two studies
def common_configurations(a: StudyResult, b: StudyResult) -> list[str]:
    return [label for label in a.configurations if label in b.configurations]


def comparison_frame(a: StudyResult, b: StudyResult, label: str) -> pd.DataFrame:
    """One configuration in two studies side by side: set sizes, overlap shares and counts, and the
    difference (second - first). Shares are fractions (the page shows them as percentages)."""
    rows = []

    def add(figure: str, kind: str, get) -> None:
        va, vb = get(a.configurations[label].analysis), get(b.configurations[label].analysis)
        diff = vb - va if va is not None and vb is not None else None
        rows.append({"figure": figure, "kind": kind, "first": va, "second": vb, "difference": diff})

    add("queries scored by all three", "count", lambda x: x["n_queries"])
    for task in TASKS:
        add(f"|{task.upper()}|", "count", lambda x, t=task: x["sizes"][t])
    add("hard in all three", "share", lambda x: x["all_three"]["share"])
    for task in TASKS:
        add(f"{task.upper()} exclusive share", "share", lambda x, t=task: x["exclusive"][t]["share"])
    for key in a.configurations[label].analysis["pairwise"]:
        pair = intersection_label(key)
        add(f"{pair} overlap", "count", lambda x, k=key: x["pairwise"][k]["count"])
        add(f"{pair} Jaccard", "share", lambda x, k=key: x["pairwise"][k]["jaccard"])
    return pd.DataFrame(rows, columns=["figure", "kind", "first", "second", "difference"])


def set_differences(a: StudyResult, b: StudyResult, label: str) -> pd.DataFrame:
    """Per task, which queries only the first / only the second study's set (over the universe) holds."""
    rows = []
    for task in TASKS:
        sa = set(a.configurations[label].hard_in_universe[task])
        sb = set(b.configurations[label].hard_in_universe[task])
        rows.append({"task": task.upper(), "in both": len(sa & sb), "only in first": " ".join(sorted(sa - sb)),
                     "only in second": " ".join(sorted(sb - sa))})
    return pd.DataFrame(rows, columns=["task", "in both", "only in first", "only in second"])


def provenance_lines(study: StudyResult, label: str) -> list[str]:
    c = study.configurations[label].components
    gen, judge = study.generator(label), study.judge(label)
    bs, counts = gen.bertscore, judge.info
    return [f"Retriever {c.retriever}: {study.retriever(label).info.get('provenance', '')}",
            f"Generator {c.generator}: {gen.provenance.get('label', '')}, "
            f"{Provenance.from_dict(gen.provenance).size_text}; BERTScore encoder "
            f"{bs['encoder']} ({bs['description']}), {bs['aggregate']} over grade-2/3 passages; "
            f"{reference_note(bs)}; {truncation_note(bs)}",
            f"Judge {c.judge} ({c.setup}): {judge.provenance.get('label', '')}, "
            f"{Provenance.from_dict(judge.provenance).size_text}; "
            f"{counts['n_pairs_compared']} pairs compared, cap {counts['cap']} per query, "
            f"{counts['n_unparseable']} unparseable answers excluded",
            *filter(None, [benchmark_line(judge.provenance)]),  # how well this judge agrees with NIST
            # an offline model: what it is (size, quantisation, not one of the study's models)
            *sorted({p["note"] for p in (gen.provenance, judge.provenance)
                     if p.get("backend") == "embedded" and p.get("note")})]


def set_lines(study: StudyResult, label: str) -> list[str]:
    """Per task: |set| of N, |set|/N, the quantile threshold, the target size and the tie block; then the
    universe line (rule, each task's n, the common universe's n, hard queries outside it)."""
    config = study.configurations[label]
    universe = study.universe_summary(label)
    rule = config.hard_in_universe_rule
    if not rule:
        return ["Set sizes: this study predates the tie rule (rerun it for thresholds and tie blocks).",
                f"Query {universe.line()}"]
    return [f"{TASK_LABELS[task]}: {rule[task].line()}" for task in TASKS] + [f"Query {universe.line()}"]


def universe_warning(study: StudyResult, label: str) -> str | None:
    """The warning when the common universe holds under half of the judged queries (None otherwise)."""
    warning = study.universe_summary(label).warning
    return f"Small common universe: {warning}." if warning else None


def tie_warnings(study: StudyResult, label: str) -> list[str]:
    """One warning per task whose membership ties decided (pipeline.sets.rule's rule)."""
    rule = study.configurations[label].hard_in_universe_rule or {}
    return [f"{TASK_LABELS[t]}: ties decide membership. {rule[t].warning}" for t in TASKS
            if t in rule and rule[t].warning]


# ---------------------------------------------------------------------------- background runs
def imported_judges(dataset: str, folder: str | Path | None) -> list[str]:
    """The data folder's judgment files for ``dataset`` (choices of the form's "Imported judges")."""
    return list(folder_files(folder, "judgments", dataset))


def imported_generators(dataset: str, folder: str | Path | None) -> list[str]:
    """The data folder's answers files for ``dataset`` (choices of the form's "Imported answers")."""
    return list(folder_files(folder, "answers", dataset))


def first_study_hint(dataset: str, folder: str | Path | None) -> str:
    """What to run when no study is stored: with the data folder's answers and judgments for ``dataset``, the
    command over them (its runs, answers and judgments: no LLM call, minutes; the form's default
    configuration), else the command that asks an LLM for every answer and label (hours on a CPU), and where
    to get the files that avoid it."""
    answers, judges = imported_generators(dataset, folder), imported_judges(dataset, folder)
    if answers and judges:
        return (f"`python -m pipeline run --dataset {dataset} " + " ".join(f"--judge {j}" for j in judges) + "` "
                f"runs on the data folder's runs, answers ({', '.join(answers)}) and judgments: no LLM call, a few "
                f"minutes")
    return (f"`python -m pipeline run --dataset {dataset}` asks an LLM for every answer and label (hours on a "
            f"CPU); a data folder with answers/ and judgments/ (shared/data/trec_dl, IRDASH_DATA_TREC_DL) runs "
            f"without LLM calls")


class AlreadyStored(ValueError):
    """The form asks for a configuration of data files only that a stored study already ran (``study_id``)."""

    def __init__(self, dataset: str, study_id: str):
        self.study_id, self.link = study_id, study_link(dataset, study_id)
        super().__init__(f"Nothing was started: study {study_id} already ran this configuration on these files "
                         f"(a run would store nothing new). Open it, or delete it first to run it again.")


def submit_study(dataset: str, folder: str | Path | None, **options) -> int:
    """Queue a study run; its id is chosen here, so the job's row can link to the study it writes
    and read its progress record (``meta["study_id"]``, ``meta["progress"]``). The form's numbers are
    checked first (``cap``: pairs per query; ``max_queries``: 0 or None = all), and its LLM specs
    (``generator``, ``llm_judge``) as the command checks them: a bad one raises
    :class:`core.fields.FormError` naming it, and nothing is queued. A configuration of the data folder's
    files only that a stored study already ran raises :class:`AlreadyStored` (one study per configuration)."""
    from pipeline.study import store

    forms.check_fields((forms.PAIRS_PER_QUERY, options.get("cap", DEFAULT_CAP)),
                       (forms.STUDY_QUERIES, options.get("max_queries") or 0),
                       (forms.STUDY_GENERATOR, options.get("generator", "")),
                       (forms.STUDY_LLM_JUDGE, options.get("llm_judge", "")))
    if not options.get("imported_generators") and not str(options.get("generator", "")).strip():
        raise forms.FormError([f"{forms.STUDY_GENERATOR.label}: choose imported answers or name an LLM generator"])
    options["max_queries"] = forms.query_limit(options.get("max_queries"))
    stored = stored_without_llm(dataset, folder, **options)
    if stored is not None:
        raise AlreadyStored(dataset, stored)
    study_id = store.new_study_id({"dataset": dataset, **options, "nonce": uuid.uuid4().hex})
    return STUDY.submit(dataset=dataset, folder=folder, study_id=study_id, **options)


def jobs_frame(job_list: Sequence[jobs.Job], now: float | None = None) -> pd.DataFrame:
    """The study jobs: status, progress (stage n of m, items done of total, rate, remaining time, from
    the job's progress record), a queued job's reason for waiting, a failed job's last error line,
    readable times, and a link to the study a finished job wrote."""
    messages = job_progress.job_messages(job_list, now)
    rows = [{"job": j.id, "dataset": j.meta.get("dataset", ""), "status": j.status,
             "started": studies.readable_time(studies.iso_time(j.started)) if j.started else "",
             "progress": messages[j.id], "study": STUDY.result_link(j) or ""} for j in job_list]
    return pd.DataFrame(rows, columns=["job", "dataset", "status", "started", "progress", "study"])


def job_lines(job_list: Sequence[jobs.Job], failed_shown: int = 1) -> list[tuple[jobs.Job, str]]:
    """``(job, its whole progress or error line)`` for the active jobs and the newest failed one(s),
    shown under the table in full (a table cell cuts long text)."""
    failed = [j for j in job_list if j.status == "failed"][:failed_shown]
    shown = [j for j in job_list if j.active or j in failed]
    messages = job_progress.job_messages(shown)
    return [(j, messages[j.id]) for j in shown]


def job_fraction(job: jobs.Job) -> float:
    """How far a running study job is, in [0, 1]: finished stages plus the current stage's share."""
    record = job_progress.read_progress(job.meta.get("progress")) or {}
    stages, index = record.get("stages") or 0, record.get("stage_index") or 0
    if not stages:
        return 0.0
    within = record["done"] / record["total"] if record.get("total") else 0.0
    return min(max((index - 1 + within) / stages, 0.0), 1.0)
