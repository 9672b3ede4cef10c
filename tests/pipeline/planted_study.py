"""A planted DL19 study on the shared data: BM25's imported full-corpus run (and TAS-B's, a second
configuration that differs in the retriever only), Llama-3.3-70B's imported binary judgments, and imported answers planted so that H2G equals BM25's H2R (the H2R queries get an
off-topic answer, every other query the text of one of its own grade-3 passages, so BERTScore is
lowest exactly on the H2R queries).

Fast by design: the study's data folder links the shared DL19 topics, qrels, BM25 run and judgments,
and holds one passage text per query (its first top-graded passage), scored with
``--partial-references include``: BERTScore compares 43 answers with 43 passages instead of encoding
every relevant passage of DL19 (over eight minutes on this machine). H2R and H2J do not read passages.

The reference sets are computed here independently of the study code: nDCG@10 straight from
ir_measures over the run and qrels files, the binary disagreement counted pair by pair from the two
qrels-format files, each drawn by the one hard-set rule (``pipeline.sets.rule.hard_set``)."""
from __future__ import annotations

import json
from pathlib import Path

OFF_TOPIC = "Bananas are yellow fruits rich in potassium, eaten worldwide."
RETRIEVER, JUDGE, SETUP = "bm25", "llama-3.3-70b", "binary"
SECOND_RETRIEVER = "tasb"  # a second configuration differing in the retriever only: structure_stable is measured
QUANTILE = 0.25


def trec_dl(shared: Path) -> Path:
    return shared / "data" / "trec_dl"


def _qrels(path: Path) -> dict[str, dict[str, int]]:
    out: dict[str, dict[str, int]] = {}
    for line in path.read_text().splitlines():
        if line.strip():
            qid, _, pid, grade = line.split()
            out.setdefault(qid, {})[pid] = int(grade)
    return out


def reference_sets(shared: Path) -> dict:
    """``{h2r, h2g, h2j: set of qids, n: judged queries, ndcg, ndcg_second, disagreement}`` (module
    docstring; ``ndcg_second``: TAS-B's)."""
    from pipeline.sets.rule import hard_set

    folder = trec_dl(shared)
    qrels = _qrels(folder / "qrels.dl19-passage.txt")
    ndcg, ndcg_second = (_ndcg(qrels, folder / "runs" / f"run.{name}.dl19.txt") for name in (RETRIEVER, SECOND_RETRIEVER))
    llm = _qrels(folder / "judgments" / "judgments.llama-3.3-70b.dl19.txt")
    disagreement = {}
    for qid, grades in qrels.items():
        both = [pid for pid in grades if pid in llm.get(qid, {})]
        disagreement[qid] = sum((grades[p] >= 2) != (llm[qid][p] >= 2) for p in both) / len(both)
    h2r = set(hard_set(ndcg, QUANTILE, "h2r").qids)
    return {"h2r": h2r, "h2g": set(h2r), "h2j": set(hard_set(disagreement, QUANTILE, "h2j", top=True).qids),
            "n": len(qrels), "ndcg": ndcg, "ndcg_second": ndcg_second, "disagreement": disagreement}


def _ndcg(qrels: dict, run_file: Path) -> dict[str, float]:
    """nDCG@10 per judged query straight from ir_measures (a judged query missing from the run scores 0)."""
    import ir_measures

    run = {}
    for line in run_file.read_text().splitlines():
        qid, _, pid, _, score, _ = line.split()
        run.setdefault(qid, {})[pid] = float(score)
    ndcg = {m.query_id: m.value for m in ir_measures.iter_calc([ir_measures.nDCG @ 10], qrels, run)}
    ndcg.update({q: 0.0 for q in qrels if q not in ndcg})
    return ndcg


def planted_folder(shared: Path, h2r: set[str], folder: Path) -> tuple[Path, Path]:
    """``(data folder, answers file)``: the linked DL19 files, one passage per query, and the answers."""
    from pipeline.data import trec_io

    source = trec_dl(shared)
    (folder / "runs").mkdir(parents=True, exist_ok=True)
    (folder / "judgments").mkdir(exist_ok=True)
    for name in ("topics.dl19-passage.txt", "qrels.dl19-passage.txt", "runs/run.bm25.dl19.txt",
                 "runs/run.tasb.dl19.txt", "judgments/judgments.llama-3.3-70b.dl19.txt"):
        (folder / name).symlink_to(source / name)
    qrels = _qrels(source / "qrels.dl19-passage.txt")
    passages = trec_io.read_passages(source / "passages.msmarco-v1.dl19-dl20.tsv")
    kept, answers = [], []
    for qid, grades in sorted(qrels.items()):
        pid = sorted(p for p, g in grades.items() if g == max(grades.values()) and p in passages)[0]
        kept.append(f"{pid}\tdl19\t{passages[pid]}")
        answers.append(json.dumps({"qid": qid, "text": OFF_TOPIC if qid in h2r else passages[pid]}))
    (folder / "passages.msmarco-v1.dl19-dl20.tsv").write_text("pid\tjudged_in\ttext\n" + "\n".join(kept) + "\n")
    (folder / "planted-answers.jsonl").write_text("\n".join(answers) + "\n")
    return folder, folder / "planted-answers.jsonl"


def run_planted_study(shared: Path, folder: Path) -> dict:
    """The planted study through ``python -m pipeline run --json`` (the CLI, whose output is the stored
    study); returns ``{"study": the stored JSON, "reference": reference_sets(...), "data": the folder}``."""
    import contextlib
    import io

    from pipeline import cli

    reference = reference_sets(shared)
    data, answers = planted_folder(shared, reference["h2r"], folder)
    out = io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(io.StringIO()):
        code = cli.main(["run", "--dataset", "dl19", "--data", str(data), "--retriever", RETRIEVER,
                         "--retriever", SECOND_RETRIEVER,
                         "--generator", f"planted={answers}", "--judge", JUDGE, "--setup", SETUP,
                         "--encoder", "minilm",
                         "--partial-references", "include", "--json"])
    assert code == 0, out.getvalue()[-2000:]
    return {"study": json.loads(out.getvalue()), "reference": reference, "data": data}
