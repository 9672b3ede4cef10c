"""Difficulty-aware judging and retrieval results made by the library itself and stored, for the page tests (the
Difficulty-aware page's sections and the Query page): a scripted judge over eight planted queries, and a scripted
1.5B rewriter over the planted Lucene collection of ``tests/pipeline/aware/retrieve_collection.py``."""
from __future__ import annotations

import json
import re

from pipeline.aware import judge as study, store
from pipeline.data.datasets import DATASETS, TrecDlData
from pipeline.prompting import difficulty
from pipeline.typology.categories import Assignment, load_typology
from tests.pipeline.aware import retrieve_collection as rc
from tests.support.preference_helpers import HOSTILE, client

HOSTILE_REWRITE = "<script>alert('x')</script> <b>bold</b>"
QIDS = [f"q{i}" for i in range(1, 9)]
RAW_HTML = '<b>bold</b> {"O": 9}'  # an unparseable reply holding markup
AWARE_SENTENCE = "This query asks for quantitative data."  # the shipped template of the reasons below


def respond(messages) -> str:
    user = messages[-1]["content"]
    qid = re.search(r"Passage: passage ([ad]) of (q\d)", user).group(2)
    letter = re.search(r"Passage: passage ([ad])", user).group(1)
    aware = AWARE_SENTENCE in user  # the control statement is another sentence of the same length
    if aware and qid == "q2" and letter == "a":
        return RAW_HTML
    grade = 3 if letter == "a" or (qid in ("q1", "q2") and not aware) else 0  # q1, q2 mislabel d at baseline
    return json.dumps({"M": grade, "T": grade, "O": grade})


def judged_result() -> dict:
    topics = {q: (HOSTILE if q == "q1" else f"query {q}") for q in QIDS}
    data = TrecDlData(spec=DATASETS["dl19"], topics=topics, qrels={q: {f"a{q}": 3, f"d{q}": 0} for q in QIDS},
                      passages={f"{x}{q}": f"passage {x} of {q}" for q in QIDS for x in "ad"}, source="test")
    typology = load_typology()
    reasons = [Assignment(q, "h2j", [(typology.find("Quantitative data needs", "h2j"), "")], source="hand")
               for q in ("q1", "q2")]
    result = study.run_aware_judge(data, client(respond, model="tiny", small=True), typology,
                                   difficulty.load_templates(), assignments=reasons,
                                   reasons_report={"imported": "hand"})
    store.save_result(study.KIND, result)
    return result


def retrieved_result(tmp_path) -> dict:
    from pipeline.aware import retrieve, store
    from pipeline.data.datasets import load_dataset
    from pipeline.llm import Provenance
    from pipeline.prompting.difficulty import load_templates
    from pipeline.retrieval import bm25
    from pipeline.typology.categories import STUDY_FILE

    data = load_dataset("dl20", rc.write(tmp_path / "data", "dl20", missing_text=("h6-g1",)))
    config = retrieve.RetrieveConfig()
    index = bm25.build_index(data.passages, fingerprint=data.passages_fingerprint)
    typology, assignments, how = retrieve.h2r_reasons(data, (), STUDY_FILE, reasons=str(
        rc.write_reasons(tmp_path / "r.jsonl", rc.HARD)))
    rewriter = client(lambda m: HOSTILE_REWRITE if rc.SENTENCE in m[-1]["content"] else "", model="small")
    rewriter.backend.provenance = Provenance("scripted", "small", parameters_b=1.5, size_source="stated")
    result = retrieve.run_aware_retrieve(data, retrieve.original_h2r(data, index, config), assignments, typology,
                                         load_templates(), rewriter, config, index, reasons_report=how)
    store.save_result(retrieve.KIND, result)
    return result


