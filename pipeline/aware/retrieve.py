"""Difficulty-aware retrieval: does a query rewritten from its assigned H2R failure reason retrieve better?

The design, for one TREC DL year and one rewriting model:

1. **Index.** BM25 (pyserini/Anserini, :mod:`pipeline.retrieval.bm25`, k1 0.9 b 0.4, depth 1000) over the
   data folder's passages: one Lucene index for every arm. DL19's judged pool is complete there (every
   judged passage has text); any other year's judged pool is not, so its corpus is partial and the result
   says so with its coverage (:func:`corpus_statement`: the CLI line, the JSON and the page show it).
2. **H2R set.** The bottom ``quantile`` (the one hard-set rule, :func:`pipeline.sets.rule.hard_set`) of the
   ORIGINAL queries' per-query nDCG@10 under that same BM25 over every judged query (a missing ranking
   scores 0), so "leaves the bottom quartile" is read on one scale. Its *boundary* is the highest original
   nDCG@10 inside the set.
3. **Reasons.** Each H2R query's assigned H2R failure reasons: ``reasons="typology"`` (the failure
   typology store's latest runs), ``reasons=FILE`` (imported assignments), or an assigner LLM that assigns
   the typology's H2R categories to the H2R queries (:func:`pipeline.typology.assignment.assign_reasons`,
   the pieces :mod:`pipeline.study.preference_reasons` uses, here on this BM25's H2R set). A query
   without an H2R reason is excluded and counted; ``max_queries`` keeps the first N in topic order (the
   assigner is asked about those only). The reason sentence is the first reason's, from the sentence
   templates generation uses (:mod:`pipeline.prompting.difficulty`).
4. **Arms** per query: ``original``; ``plain_rewrite`` (an LLM rewrites the query, :data:`REWRITE_PROMPT`);
   ``aware_rewrite`` (the same prompt with the reason sentence on its own line after the query line,
   :func:`pipeline.prompting.difficulty.with_difficulty`); ``control_rewrite`` (the same prompt with a neutral
   statement of the reason sentence's length in its place, :class:`pipeline.prompting.difficulty.NeutralStatements`:
   "any extra sentence" against "this sentence"); ``rm3`` (pyserini's RM3 pseudo-relevance
   feedback on the original query with Anserini's defaults, :data:`RM3`). A reply is read as one line of
   query text (:func:`parse_rewrite`); a failed or unusable reply is recorded as such and that arm keeps
   the original query for that query (counted, shown).
5. **Figures.** nDCG@10 per query per arm (ir_measures, :mod:`pipeline.retrieval.evaluation`);
   :func:`pipeline.aware.paired.paired_comparison` of the PRIMARY comparison, declared and shown first, aware
   vs control rewrite (:data:`PRIMARY`; why: :data:`SELECTION_NOTE`, the H2R queries were chosen for their
   extreme low original nDCG@10, so any rewrite moves them toward the mean and a comparison against the
   original is biased toward an improvement), then aware/plain/rm3 against the original and aware against plain;
   Holm across those five, a family declared in advance (:data:`FAMILY`: one without a p-value still counts).
   A verdict part per comparison with the models' gates (the rewriter gates the comparisons of a rewrite; the
   model that made the reasons, assigned here, read from the typology store or a FILE's stated maker
   (:func:`pipeline.prompting.difficulty.reasons_made_by`), gates all five, as it chose the queries); and per
   arm the share of the H2R set that *leaves* the bottom quartile (its nDCG@10 above the boundary,
   :data:`LEAVE_RULE`) with a Wilson interval, the aware share tested against the plain and the control
   shares on the same queries (:data:`LEAVING_TESTS`: exact McNemar, the binomial on the discordant queries).

Every LLM call goes through the caller's ChatClient (the response cache): a rerun of the same
configuration makes no call and gives the same result id (:func:`result_id`, never timings). Results are
stored by :mod:`pipeline.aware.store` under kind :data:`KIND`.
"""
from __future__ import annotations

import re
import time
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Mapping, Sequence

from core.digest import content_digest
from core.jobs.progress import ProgressWriter
from core.inference import paired as inference
from pipeline.aware import paired
from pipeline.llm.base import ChatClient, GenerationOptions, LLMError, Provenance
from pipeline.prompting.difficulty import (NeutralStatements, SentenceTemplates, assignments_digest, load_statements,
                                          reasons_made_by, with_difficulty)
from pipeline.prompting.pairwise import wilson_interval
from pipeline.retrieval import bm25
from pipeline.sets.rule import DEFAULT_QUANTILE, RULE as HARD_SET_RULE, hard_set
from pipeline.typology.categories import Assignment, Typology

KIND = "aware-retrieve"
RESULT_VERSION = 2  # 2: the control rewrite, the primary comparison first, the declared family, McNemar
MEASURE = "nDCG@10"
ARMS = ("original", "plain_rewrite", "aware_rewrite", "control_rewrite", "rm3")
REWRITES = ("plain_rewrite", "aware_rewrite", "control_rewrite")
# the family Holm adjusts over, declared in advance, the primary comparison first: name -> (before, after);
# "after improves on before" is what each tests
COMPARISONS = {"aware_rewrite vs control_rewrite": ("control_rewrite", "aware_rewrite"),
               "aware_rewrite vs original": ("original", "aware_rewrite"),
               "plain_rewrite vs original": ("original", "plain_rewrite"),
               "rm3 vs original": ("original", "rm3"),
               "aware_rewrite vs plain_rewrite": ("plain_rewrite", "aware_rewrite")}
FAMILY = tuple(COMPARISONS)
PRIMARY = FAMILY[0]
SELECTION_NOTE = ("H2R queries are chosen for their extreme low original nDCG@10, and the original arm is the very "
                  "run that chose them: selection on extreme baseline values regresses toward the mean, so any "
                  "rewrite moves them toward it and a comparison against the original is biased toward an "
                  "improvement. The primary comparison is the difficulty-aware rewrite vs the control rewrite (the "
                  "same prompt with a neutral statement of the same length) on the same queries.")
# the shares leaving the bottom quartile, tested against each other on the same queries: (first, second)
LEAVING_TESTS = (("aware_rewrite", "control_rewrite"), ("aware_rewrite", "plain_rewrite"))
# Anserini's RM3 defaults (its SearchCollection -rm3, pyserini LuceneSearcher.set_rm3's defaults)
RM3 = {"fb_terms": 10, "fb_docs": 10, "original_query_weight": 0.5,
       "source": "Anserini's RM3 defaults (pyserini LuceneSearcher.set_rm3)"}
# the prompt both rewrites share; the difficulty-aware one adds the reason sentence after the query line
REWRITE_PROMPT = {
    "system": "You rewrite web search queries for a keyword search engine (BM25) over short passages.",
    "instruction": "Rewrite the search query below so that the search engine finds passages that answer it. "
                   "Keep its meaning; you may add words the answer passages are likely to contain. Reply with "
                   "the rewritten query only, on one line, without quotes or explanations.",
    "query_line": "Query: {query}",
    "difficulty": "the difficulty sentence on its own line right after the query line",
}
# a short reply: one line of query text (the cap is recorded with the result)
REWRITE_OPTIONS = GenerationOptions(max_tokens=64)
LEAVE_RULE = ("a query leaves the bottom quartile under an arm when the arm's nDCG@10 is above the H2R set's "
              "boundary (the highest original nDCG@10 inside the set); Wilson interval over the H2R queries used")
TOP_K = 10  # passages stored per arm and query (the ones nDCG@10 reads)


@dataclass(frozen=True)
class RetrieveConfig:
    """What defines a result besides its inputs (all recorded with it)."""
    quantile: float = DEFAULT_QUANTILE
    max_queries: int | None = None  # first N H2R queries with a reason, in topic order; None = all
    k1: float = 0.9
    b: float = 0.4
    depth: int = 1000
    rewrite: GenerationOptions = REWRITE_OPTIONS

    def __post_init__(self):
        if not 0 < self.quantile < 1:
            raise ValueError(f"quantile must be between 0 and 1, got {self.quantile}")
        if self.max_queries is not None and self.max_queries < 1:
            raise ValueError("max_queries must be at least 1")

    @property
    def bm25(self) -> bm25.BM25Settings:
        return bm25.BM25Settings(k1=self.k1, b=self.b, depth=self.depth)

    def as_dict(self) -> dict:
        return {**asdict(self), "rewrite": self.rewrite.as_dict()}


# ---------------------------------------------------------------------------- corpus and hard set
def corpus_statement(data) -> dict:
    """Whether the data folder's passages hold the dataset's whole judged pool, in words: DL19's do (the
    index still is not the full MS MARCO corpus); any other year's are a partial corpus."""
    cov = data.coverage
    complete = bool(cov.n_judged_passages) and cov.n_judged_passages_with_text == cov.n_judged_passages
    d = cov.as_dict()
    if complete:
        text = (f"{data.name}: the judged pool is complete in the index (all {cov.n_judged_passages:,} judged "
                f"passages have text; the index holds {cov.n_corpus_passages:,} passages, not the full MS MARCO "
                f"corpus)")
    else:
        share = d["frac_judged_passages_with_text"]
        text = (f"{data.name}: partial corpus: only {cov.n_judged_passages_with_text:,} of {cov.n_judged_passages:,} "
                f"judged passages ({share:.1%}) have text in the index of {cov.n_corpus_passages:,} passages; its "
                f"nDCG@10 is over that partial corpus and differs from a full-corpus run")
    return {"judged_pool_complete": complete, "partial_corpus": not complete, "statement": text,
            "coverage": d, "summary": cov.summary()}


def original_h2r(data, index, config: RetrieveConfig) -> tuple[dict, dict, object]:
    """``(run, per-query nDCG@10, HardSet)`` of the original judged queries under the index's BM25."""
    from pipeline.retrieval import evaluation

    queries = data.queries()
    run = bm25.search(index, queries, config.bm25, progress=False)
    values = evaluation.per_query(data.require_qrels(), run, MEASURE, complete=True)
    return run, values, hard_set(values, config.quantile, "bm25@computed")


def h2r_reasons(data, hard_qids: Sequence[str], typology_file, *, reasons: str | None = None,
                reasons_model: str | None = None, assigner: ChatClient | None = None, max_queries: int | None = None,
                stated: Mapping[str, float] | None = None,
                progress: ProgressWriter | None = None) -> tuple[Typology, list[Assignment], dict]:
    """``(typology, H2R assignments, how they were made)``: from the typology store (``reasons="typology"``),
    a file (``reasons=FILE``), or ``assigner`` asked about ``hard_qids`` (topic order; only the first
    ``max_queries``, so a capped run makes no call it would drop)."""
    from pipeline.prompting import difficulty
    from pipeline.typology.assignment import assign_reasons
    from pipeline.typology.categories import load_typology

    if reasons:
        typology, assignments, how = difficulty.given_reasons(data.name, reasons, typology_file, reasons_model,
                                                              stated)
    else:
        if assigner is None:
            raise ValueError("no reasons given and no assigner to assign them")
        typology = load_typology(typology_file)
        hard = set(hard_qids)
        asked = [q for q in data.judged_qids if q in hard][:max_queries]
        tracker = progress or ProgressWriter(None)
        tracker.stage("assigning reasons to the H2R queries", len(asked), "query")
        assignments, assigned = assign_reasons(assigner, typology, data.topics, {"h2r": asked},
                                               on_progress=tracker.advance)
        how = {"assigned_by": assigner.provenance.as_dict(), "asked": asked, "tasks": assigned}
    return typology, [a for a in assignments if a.task == "h2r"], how


# ---------------------------------------------------------------------------- rewriting
def rewrite_messages(query: str, sentence: str | None = None) -> list[dict]:
    """The rewrite prompt for ``query``; with ``sentence``, the difficulty-aware one, or the control one with a
    neutral statement (the same prompt with the sentence on its own line after the query line, as generation
    adds it)."""
    user = f"{REWRITE_PROMPT['instruction']}\n\n{REWRITE_PROMPT['query_line'].format(query=query)}"
    messages = [{"role": "system", "content": REWRITE_PROMPT["system"]}, {"role": "user", "content": user}]
    return with_difficulty(messages, sentence, REWRITE_PROMPT["query_line"].format(query=query)) if sentence \
        else messages


# a label a model puts before the query ("Rewritten query:", "**Query**:", "New search query -")
_LABEL = re.compile(r"^\s*(?:\*\*)?\s*(?:(?:rewritten|reformulated|revised|improved|new|better|search|keyword)\s+)*"
                    r"(?:search\s+)?(?:query|rewrite|reformulation)\s*(?:\*\*)?\s*[:\-–]\s*(?:\*\*)?", re.I)
_BULLET = re.compile(r"^\s*(?:[-*•]|\d+[.)])\s+")
_QUOTES = "\"'`“”‘’«»*"


def parse_rewrite(text: str | None) -> str | None:
    """One line of query text from a rewriter's reply, or None when none is usable. Labels, bullets,
    markdown bold and surrounding quotes are stripped; a line ending in ':' ("Here is the query:") is a
    preamble, not the query; the first line left with a letter or digit is the query."""
    for line in (text or "").splitlines():
        line = _BULLET.sub("", line.strip())
        if not line or (line.endswith(":") and not _LABEL.match(line)):
            continue
        line = _LABEL.sub("", line).strip().strip(_QUOTES).strip()
        line = " ".join(line.split())
        if any(ch.isalnum() for ch in line):
            return line
    return None


def _rewrites(client: ChatClient, units: Sequence[dict], options: GenerationOptions, label: str,
              tracker: ProgressWriter) -> None:
    requests = [u["prompts"][arm] for arm in REWRITES for u in units]
    tracker.stage("rewriting the queries (plain, difficulty-aware, control)", len(requests), "call")
    replies = client.chat_many(requests, options, progress=label, on_progress=tracker.advance) if requests else []
    for i, arm in enumerate(REWRITES):
        for u, reply in zip(units, replies[i * len(units):(i + 1) * len(units)]):
            if isinstance(reply, LLMError):
                record = {"raw": None, "query": None, "status": "failed", "error": str(reply) or type(reply).__name__}
            else:
                parsed = parse_rewrite(reply.text)
                record = {"raw": reply.text, "query": parsed, "status": "ok" if parsed else "unusable"}
            # a failed or unusable reply leaves the arm on the original query (counted in the result)
            record["searched"] = record["query"] or u["query"]
            u["rewrites"][arm] = record


# ---------------------------------------------------------------------------- retrieval per arm
def _rm3_searcher(index: Path, config: RetrieveConfig):
    """A searcher of its own (the BM25 one is shared and cached): BM25 as the index's, then RM3."""
    from pipeline.retrieval import java

    searcher = java.lucene_searcher_class()(str(index))
    searcher.set_bm25(float(config.k1), float(config.b))
    searcher.set_rm3(RM3["fb_terms"], RM3["fb_docs"], float(RM3["original_query_weight"]))
    return searcher


def _rm3_runs(index: Path, units: Sequence[dict], config: RetrieveConfig) -> dict:
    searcher = _rm3_searcher(index, config)
    run = {}
    try:
        for u in units:
            hits = searcher.search(u["query"], k=config.depth)
            run[u["qid"]] = {hit.docid: float(hit.score) for hit in hits}
            terms = searcher.get_feedback_terms(u["query"]) or {}
            u["rm3_terms"] = {t: round(float(w), 6) for t, w in sorted(terms.items(), key=lambda tw: -tw[1])}
    finally:
        searcher.close()  # its own index reader (the shared BM25 searcher stays open)
    return run


def _top(ranked: Mapping[str, float], judged: Mapping[str, int]) -> list[list]:
    order = sorted(ranked.items(), key=lambda kv: (-kv[1], kv[0]))[:TOP_K]  # score descending, then passage id
    return [[pid, round(score, 4), judged.get(pid)] for pid, score in order]


# ---------------------------------------------------------------------------- the experiment
def select_units(data, hard_qids: Sequence[str], assignments: Sequence[Assignment], typology: Typology,
                 templates: SentenceTemplates, max_queries: int | None,
                 asked: Sequence[str] | None = None,
                 statements: NeutralStatements | None = None) -> tuple[list[dict], dict]:
    """The H2R queries the arms run on (topic order, the first reason's sentence and its length-matched control
    statement) and those excluded, why. ``asked``: the queries an assigner was asked about (the first
    ``max_queries``); the others are over the cap, not without a reason."""
    statements = statements or load_statements()
    by_qid = {a.qid: a for a in assignments if a.task == "h2r"}
    hard = set(hard_qids)
    ordered = [q for q in data.judged_qids if q in hard]
    over = {q for q in ordered if asked is not None and q not in set(asked)}
    considered = [q for q in ordered if q not in over]
    with_reason = [q for q in considered if q in by_qid and by_qid[q].categories]
    no_reason = [q for q in considered if q not in set(with_reason)]
    if max_queries is not None:
        over |= set(with_reason[max_queries:])
        with_reason = with_reason[:max_queries]
    excluded = {"no H2R reason": no_reason, "over max_queries": [q for q in ordered if q in over]}
    units = []
    for qid in with_reason:
        a = by_qid[qid]
        categories = [typology.find(name, "h2r") for name in a.categories]
        if None in categories:
            raise ValueError(f"qid {qid}: a category of {a.categories} is not among typology "
                             f"{typology.name!r}'s H2R categories")
        sentence = templates.difficulty_text(categories, "first")
        control = statements.matching(sentence)
        query = data.topics[qid]
        units.append({"qid": qid, "query": query, "categories": list(a.categories),
                      "category_used": categories[0].name, "assignment_source": a.source, "sentence": sentence,
                      "control_sentence": control,
                      "prompts": {"plain_rewrite": rewrite_messages(query),
                                  "aware_rewrite": rewrite_messages(query, sentence),
                                  "control_rewrite": rewrite_messages(query, control)},
                      "rewrites": {}})
    return units, excluded


def run_aware_retrieve(data, h2r: tuple, assignments: Sequence[Assignment], typology: Typology,
                       templates: SentenceTemplates, rewriter: ChatClient, config: RetrieveConfig, index: Path, *,
                       assigner: Provenance | None = None, reasons_report: Mapping | None = None,
                       statements: NeutralStatements | None = None, progress: ProgressWriter | None = None) -> dict:
    """Rewrite, search every arm, compare (module docstring). ``h2r``: :func:`original_h2r`'s
    ``(run, per-query nDCG@10, hard set)`` of the original queries; ``assigner``: the model that assigned the
    reasons here, None when they were read from a store or a file (``reasons_report`` says how). The reasons'
    model (``assigner``, else the typology store runs' model) gates every comparison."""
    from pipeline.retrieval import evaluation

    tracker = progress or ProgressWriter(None)
    started = time.time()
    qrels = data.require_qrels()
    original_run, original_values, hard = h2r
    statements = statements or load_statements()
    units, excluded = select_units(data, hard.qids, assignments, typology, templates, config.max_queries,
                                   (reasons_report or {}).get("asked") if assigner is not None else None,
                                   statements)
    options = rewriter.effective_options(config.rewrite)
    _rewrites(rewriter, units, config.rewrite, f"{data.name} query rewrites", tracker)

    tracker.stage("BM25 on the rewrites, RM3 on the original queries", len(REWRITES) + 1, "arm")
    runs = {"original": {u["qid"]: original_run.get(u["qid"], {}) for u in units}}
    for arm in REWRITES:
        runs[arm] = bm25.search(index, {u["qid"]: u["rewrites"][arm]["searched"] for u in units}, config.bm25,
                                progress=False) if units else {}
        tracker.advance()
    runs["rm3"] = _rm3_runs(index, units, config) if units else {}
    tracker.advance()
    used = {u["qid"]: qrels[u["qid"]] for u in units}
    ndcg = {arm: evaluation.per_query(used, runs[arm], MEASURE, complete=True) if used else {} for arm in ARMS}
    for arm in ARMS:
        runs[arm] = {q: runs[arm].get(q, {}) for q in used}

    boundary = max((original_values[q] for q in hard.qids), default=None)
    for u in units:
        u["ndcg@10"] = {arm: ndcg[arm][u["qid"]] for arm in ARMS}
        u["leaves"] = {arm: boundary is not None and ndcg[arm][u["qid"]] > boundary for arm in ARMS}
        u["top"] = {arm: _top(runs[arm][u["qid"]], qrels[u["qid"]]) for arm in ARMS}

    comparisons = {name: paired.paired_comparison(ndcg[before], ndcg[after], better="higher")
                   for name, (before, after) in COMPARISONS.items()}
    holm = paired.holm(FAMILY, comparisons)
    rewriter_gates = paired.model_gates({"rewriter": rewriter.provenance})
    # the reasons' model gates every comparison (it chose the queries): assigned here, or read from the
    # typology store (a reasons FILE names none)
    made_by = ("assigner", assigner) if assigner is not None else reasons_made_by(reasons_report)
    assigner_gates = paired.model_gates(dict([made_by])) if made_by else []
    rewriter_model = f"rewriter: {rewriter.provenance.label} ({rewriter.provenance.size_text})"
    assigner_model = [f"{made_by[0]}: {made_by[1].label} ({made_by[1].size_text})"] if made_by else []
    verdicts = {}
    for name, (before, after) in COMPARISONS.items():
        rewrites = after in REWRITES or before in REWRITES  # RM3 vs original involves no rewriter
        part = paired.comparison_verdict(
            f"{data.name} · {name}", comparisons[name], holm[name],
            (rewriter_gates if rewrites else []) + assigner_gates,
            models=([rewriter_model] if rewrites else []) + assigner_model,
            beyond="the control rewrite" if name == PRIMARY else None)
        verdicts[name] = part.to_dict()

    leaving = {}
    for arm in ARMS[1:]:
        left = sum(u["leaves"][arm] for u in units)
        interval = wilson_interval(left, len(units))
        leaving[arm] = {"left": left, "n": len(units), "share": left / len(units) if units else None,
                        "interval": list(interval) if interval else None}
    leaving_tests = {f"{first} vs {second}": inference.discordant([u["leaves"][first] for u in units],
                                                                   [u["leaves"][second] for u in units])
                     for first, second in LEAVING_TESTS}
    counts = {"judged_queries": len(original_values), "h2r": len(hard.qids), "used": len(units),
              "excluded": {why: len(q) for why, q in excluded.items()},
              "kept_original": {arm: sum(u["rewrites"][arm]["status"] != "ok" for u in units) for arm in REWRITES},
              "failed": {arm: sum(u["rewrites"][arm]["status"] == "failed" for u in units) for arm in REWRITES},
              "unusable": {arm: sum(u["rewrites"][arm]["status"] == "unusable" for u in units) for arm in REWRITES}}
    corpus = corpus_statement(data)
    result = {
        "kind": KIND,
        "version": RESULT_VERSION,
        "dataset": data.name,
        "data_source": data.source,
        "passages_fingerprint": data.passages_fingerprint,
        "qrels_digest": content_digest(sorted((q, sorted(judged.items())) for q, judged in qrels.items()), 16),
        "corpus": corpus,
        "index": {"retriever": "bm25@computed", "engine": "pyserini/Anserini Lucene (BM25)",
                  "settings": {"k1": config.k1, "b": config.b, "depth": config.depth}, "args": list(bm25.INDEX_ARGS),
                  "index": Path(index).name, "n_passages": len(data.passages), "rm3": RM3},
        "rewriter": rewriter.provenance.as_dict() | {"label": rewriter.provenance.label,
                                                     "size_text": rewriter.provenance.size_text},
        "assigner": (assigner.as_dict() | {"label": assigner.label, "size_text": assigner.size_text})
        if assigner is not None else None,
        "config": config.as_dict(),
        "rewrite_options": options.as_dict(),
        "prompt": dict(REWRITE_PROMPT),
        "templates": templates.as_dict(),
        "typology": typology.as_dict(),
        "assignments": {"n": len(assignments), "digest": assignments_digest(assignments),
                        "sources": sorted({a.source for a in assignments})},
        "reasons_report": dict(reasons_report or {}),
        "rule": dict(paired.RULE),
        "hard_set_rule": HARD_SET_RULE.format(measure=MEASURE),
        "leave_rule": LEAVE_RULE,
        "h2r": {**hard.as_dict(), "boundary": boundary, "original_ndcg@10": original_values},
        "excluded": excluded,
        "queries": units,
        "primary": PRIMARY,
        "family": list(FAMILY),
        "selection_note": SELECTION_NOTE,
        "neutral_statements": statements.as_dict(),
        "comparisons": comparisons,
        "holm": holm,
        "verdicts": verdicts,
        "gates": {"rewriter": rewriter_gates, "assigner": assigner_gates},
        "leaving": leaving,
        "leaving_tests": leaving_tests,
        "means": {arm: (sum(ndcg[arm].values()) / len(ndcg[arm])) if ndcg[arm] else None for arm in ARMS},
        "counts": counts,
        "seconds": round(time.time() - started, 3),
    }
    result["id"] = result_id(result)
    return result


def result_id(result: Mapping) -> str:
    """``<dataset>-<sha256[:12]>`` over everything that defines the result (never its timings)."""
    key = {k: result[k] for k in ("dataset", "passages_fingerprint", "qrels_digest", "index", "rewriter", "assigner",
                                  "config", "rewrite_options", "prompt", "templates", "typology", "assignments")}
    key["templates"] = {k: v for k, v in key["templates"].items() if k != "source"}
    key["queries"] = [(u["qid"], u["query"], u["sentence"], u["control_sentence"]) for u in result["queries"]]
    return f"{result['dataset']}-{content_digest(key, 12)}"
