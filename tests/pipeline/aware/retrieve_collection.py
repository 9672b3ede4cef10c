"""A designed TREC DL-shaped data folder for the difficulty-aware retrieval tests (24 judged queries).

``e1..e18`` are easy: their one relevant passage (grade 3) holds the query's own words, so BM25 ranks it
first (nDCG@10 = 1). ``h1..h6`` are hard: their words occur only in an irrelevant passage (grade 0), and
their relevant passages (grades 3, 2, 1) share no word with them, so nDCG@10 = 0: the bottom quartile of
24 queries is floor(23 * 0.25) + 1 = 6 queries, exactly h1..h6 (the next value is 1), boundary 0.
Each relevant passage's words are made-up tokens of its own, so a rewrite made of them retrieves it.
"""
from __future__ import annotations

import json
from pathlib import Path

from pipeline.data.datasets import DATASETS

EASY = [f"e{i}" for i in range(1, 19)]
HARD = [f"h{i}" for i in range(1, 7)]
NUMERICAL = "Numerical data requirements"
SENTENCE = "This query requires numerical data."  # the shipped template of NUMERICAL


def words(qid: str, grade: int) -> str:
    """The made-up words of ``qid``'s passage of ``grade`` (3 words, no other passage has them)."""
    return " ".join(f"{w}{qid}g{grade}" for w in ("zan", "vop", "kel"))


def query(qid: str) -> str:
    return f"what is the {qid}word {qid}thing" if qid in HARD else f"{qid}alpha {qid}beta facts"


def write(folder: Path, dataset: str = "dl19", missing_text: tuple[str, ...] = ()) -> Path:
    """The data folder for ``dataset`` (its file names); ``missing_text``: judged pids left without text
    (a partial corpus)."""
    spec = DATASETS[dataset]
    folder.mkdir(parents=True, exist_ok=True)
    qids = EASY + HARD
    (folder / spec.topics_file).write_text("".join(f"{q}\t{query(q)}\n" for q in qids))
    qrels, passages = [], {}
    for q in EASY:
        qrels += [f"{q} 0 {q}-rel 3", f"{q} 0 {q}-off 0"]
        passages[f"{q}-rel"] = f"{query(q)} explained here"
        passages[f"{q}-off"] = f"nothing about it {q}filler"
    for q in HARD:
        qrels.append(f"{q} 0 {q}-decoy 0")
        passages[f"{q}-decoy"] = f"{q}word {q}thing trivia"
        for grade in (3, 2, 1):
            qrels.append(f"{q} 0 {q}-g{grade} {grade}")
            passages[f"{q}-g{grade}"] = words(q, grade)
    (folder / spec.qrels_file).write_text("\n".join(qrels) + "\n")
    (folder / spec.passages_file).write_text("pid\ttext\n" + "".join(
        f"{pid}\t{text}\n" for pid, text in passages.items() if pid not in missing_text))
    return folder


def write_reasons(path: Path, qids) -> Path:
    path.write_text("".join(json.dumps({"qid": q, "task": "h2r", "categories": [NUMERICAL]}) + "\n" for q in qids))
    return path
