"""Running ``python -m pipeline`` as a user does, and the designed collection its typology tests use."""
from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from tests.support.paths import ROOT


def pipeline_cli(*args, env_cache: Path) -> subprocess.CompletedProcess:
    """``python -m pipeline ARGS`` in a child process whose cache folder is ``env_cache``."""
    env = {**os.environ, "IRDASH_CACHE_DIR": str(env_cache)}
    return subprocess.run([sys.executable, "-m", "pipeline", *args], cwd=ROOT, env=env, capture_output=True,
                          text=True, timeout=300)


# q1..q8: one relevant passage rN (grade 3) and one irrelevant nN (grade 0) each. The judge file
# disagrees with NIST on both passages of q1 and q2 (disagreement 1.0) and agrees elsewhere (0.0),
# so the H2J set (top quartile, ties included) is exactly {q1, q2}.
def write_typology_collection(folder: Path) -> list[str]:
    qids = [f"q{i}" for i in range(1, 9)]
    (folder / "topics.tsv").write_text("".join(f"{q}\tquestion about topic {q}\n" for q in qids))
    (folder / "qrels.txt").write_text("".join(f"{q} 0 r{q} 3\n{q} 0 n{q} 0\n" for q in qids))
    (folder / "passages.tsv").write_text("".join(f"r{q}\tthe answer about topic {q}\nn{q}\tunrelated text {q}\n"
                                                 for q in qids))
    (folder / "run.txt").write_text("".join(f"{q} Q0 {p} {k} {3 - k} r\n" for i, q in enumerate(qids)
                                            for k, p in enumerate([f"r{q}", f"n{q}"] if i % 2 else
                                                                  [f"n{q}", f"r{q}"], start=1)))
    (folder / "answers.jsonl").write_text("".join(json.dumps({"qid": q, "text": f"an answer about topic {q}"}) + "\n"
                                                  for q in qids))
    (folder / "judge.txt").write_text("".join(f"{q} 0 r{q} {0 if q in ('q1', 'q2') else 3}\n"
                                              f"{q} 0 n{q} {3 if q in ('q1', 'q2') else 0}\n" for q in qids))
    return qids


def typology_args(folder: Path, assigner: str, task: str = "h2j") -> list[str]:
    """``typology`` on :func:`write_typology_collection`'s files with the study's categories, assigned by
    ``assigner``."""
    return ["typology", "--qrels", str(folder / "qrels.txt"), "--topics", str(folder / "topics.tsv"),
            "--passages", str(folder / "passages.tsv"), "--task", task,
            "--retriever", f"r={folder / 'run.txt'}", "--generator", f"g={folder / 'answers.jsonl'}",
            "--judge", f"j={folder / 'judge.txt'}", "--encoder", "minilm", "--typology", "study",
            "--assigner", assigner]
