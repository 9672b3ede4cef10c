"""A tiny designed TREC-style collection for the failure-study tests (8 queries).

Query qN has one perfectly relevant passage rN and one irrelevant passage nN. Designed so that every
set is known without computing it by hand beyond the rule (q = 0.25 over 8 queries -> 2-3 queries):
- run: rN at rank 1 for q1..q6, absent for q7 and q8            -> H2R = {q7, q8}
- answers: the relevant passage's own text for q1..q5 and q7; off-topic text for q6 and q8
                                                                  -> H2G = {q6, q8} (lowest F1)
- judge: agrees with NIST everywhere except both pairs of q8 and q1 (graded 3 vs 0, 0 vs 3)
                                                                  -> H2J = {q1, q8} (disagreement 1.0)
So q8 is hard in all three; H2R ∩ H2G = H2R ∩ H2J = H2G ∩ H2J = {q8}.
"""
from __future__ import annotations

import json
from pathlib import Path

QIDS = [f"q{i}" for i in range(1, 9)]
TOPICS = {f"q{i}": t for i, t in enumerate(
    ["boiling point of water", "capital of france", "speed of light", "who wrote hamlet",
     "largest planet", "tallest mountain", "<b>html</b> & <script>alert(1)</script>", "deepest ocean"], start=1)}
RELEVANT = {f"q{i}": t for i, t in enumerate(
    ["Water boils at 100 degrees Celsius at sea level.", "Paris is the capital and largest city of France.",
     "Light travels at about 299,792 kilometres per second in vacuum.", "Hamlet was written by William Shakespeare.",
     "Jupiter is the largest planet in the Solar System.", "Mount Everest is the tallest mountain above sea level.",
     "<script>alert('x')</script> tags are <b>HTML</b> markup elements.",
     "The Mariana Trench is the deepest part of the ocean."], start=1)}
OFF_TOPIC = "Bananas are yellow fruits rich in potassium, eaten worldwide."


def write_collection(folder: Path) -> dict[str, Path]:
    folder.mkdir(parents=True, exist_ok=True)
    files = {name: folder / name for name in ("topics.tsv", "qrels.txt", "passages.tsv", "run.txt",
                                              "answers.jsonl", "judge.txt")}
    files["topics.tsv"].write_text("".join(f"{q}\t{t}\n" for q, t in TOPICS.items()))
    files["qrels.txt"].write_text("".join(f"{q} 0 r{q[1:]} 3\n{q} 0 n{q[1:]} 0\n" for q in QIDS))
    files["passages.tsv"].write_text("pid\ttext\n" + "".join(f"r{q[1:]}\t{RELEVANT[q]}\nn{q[1:]}\t{OFF_TOPIC}\n"
                                                             for q in QIDS))
    lines = []
    for q in QIDS:
        ranked = ([f"r{q[1:]}"] if q not in ("q7", "q8") else []) + [f"n{q[1:]}", f"x{q[1:]}"]
        lines += [f"{q} Q0 {pid} {k} {10 - k} designed" for k, pid in enumerate(ranked, start=1)]
    files["run.txt"].write_text("\n".join(lines) + "\n")
    files["answers.jsonl"].write_text("".join(
        json.dumps({"qid": q, "text": OFF_TOPIC if q in ("q6", "q8") else RELEVANT[q]}) + "\n" for q in QIDS))
    judge = []
    for q in QIDS:
        flip = q in ("q1", "q8")
        judge += [f"{q} 0 r{q[1:]} {0 if flip else 3}", f"{q} 0 n{q[1:]} {3 if flip else 0}"]
    files["judge.txt"].write_text("\n".join(judge) + "\n")
    return files


def run_designed_study(folder: Path) -> dict:
    """The designed collection through ``pipeline.study.run.run_study`` (MiniLM BERTScore, offline), in
    its JSON form (what the studies store holds: ``StudyResult.to_dict``)."""
    from pipeline.study.config import load_collection
    from pipeline.study.run import run_study

    files = write_collection(folder)
    data = load_collection("designed", qrels=files["qrels.txt"], topics=files["topics.tsv"],
                           passages=files["passages.tsv"])
    return run_study(data, retrievers=[f"designed-run={files['run.txt']}"],
                     generators=[f"designed-answers={files['answers.jsonl']}"],
                     judges=[f"designed-judge={files['judge.txt']}"], setups=("binary", "graded"),
                     encoder="minilm", progress=False, log=lambda m: None).to_dict()


# the data folder's models.tsv of write_data_folder: one size published, one not, one sub-1B
MODELS_TSV = ("name\tparameters\tsource\n"
              "designed-judge\t70B\tthe designed judge's model card\n"
              "designed-answers\t175B\ta paper's figure\n"
              "other-answers\tunknown\tnot published\n"
              "small-judge\t0.78B\ta small model's card\n")


def write_data_folder(folder: Path, dataset: str = "dl19") -> Path:
    """The designed collection in the layout of a TREC DL data folder (``shared/data/trec_dl/``) as ``dataset``:
    its topics, qrels and passages under the registry's file names, ``runs/run.designed.<dataset>.txt``,
    ``judgments/judgments.designed-judge.<dataset>.txt``, two answers files (``designed-answers``: the designed
    ones; ``other-answers``: every answer off-topic but q1's) and :data:`MODELS_TSV`. Returns the folder."""
    from pipeline.data.datasets import DATASETS

    spec = DATASETS[dataset]
    files = write_collection(folder / "designed")
    for sub in ("runs", "judgments", "answers"):
        (folder / sub).mkdir(parents=True, exist_ok=True)
    (folder / spec.topics_file).write_text(files["topics.tsv"].read_text())
    (folder / spec.qrels_file).write_text(files["qrels.txt"].read_text())
    (folder / spec.passages_file).write_text("pid\tjudged_in\ttext\n" + "".join(
        f"{pid}\t{dataset}\t{text}\n" for pid, text in
        (line.split("\t", 1) for line in files["passages.tsv"].read_text().splitlines()[1:])))
    (folder / "runs" / f"run.designed.{dataset}.txt").write_text(files["run.txt"].read_text())
    (folder / "judgments" / f"judgments.designed-judge.{dataset}.txt").write_text(files["judge.txt"].read_text())
    (folder / "answers" / f"answers.designed-answers.{dataset}.jsonl").write_text(files["answers.jsonl"].read_text())
    (folder / "answers" / f"answers.other-answers.{dataset}.jsonl").write_text("".join(
        json.dumps({"qid": q, "text": RELEVANT[q] if q == "q1" else OFF_TOPIC}) + "\n" for q in QIDS))
    (folder / "models.tsv").write_text(MODELS_TSV)
    return folder
