"""Samples of answers for the designed collection (``tests/support/failure_fixture.py``): H2G's sampling noise
(``pipeline.study.sampling``) with every figure known by design."""
from __future__ import annotations

import json
from pathlib import Path

from tests.support.failure_fixture import OFF_TOPIC, QIDS, RELEVANT, write_collection


# Three samples of one generator (H2G over 8 queries: the 2 lowest), and another generator:
# sample 0 = the designed answers (H2G {q6, q8}), sample 1 the same, sample 2 off-topic for q5 and q8
# (H2G {q5, q8}); so P(H2G) is 1 for q8, 2/3 for q6, 1/3 for q5, and the samples' Jaccard 1, 1/3, 1/3.
# The other generator is off-topic for q7 and q8 (H2G {q7, q8}): Jaccard 1/3 with sample 0.
SAMPLE_OFF_TOPIC = {0: ("q6", "q8"), 1: ("q6", "q8"), 2: ("q5", "q8")}
OTHER_OFF_TOPIC = ("q7", "q8")


def write_samples(folder: Path) -> dict[str, Path]:
    """``samples.jsonl`` (:data:`SAMPLE_OFF_TOPIC`) and ``other.jsonl`` (:data:`OTHER_OFF_TOPIC`) in ``folder``."""
    samples, other = folder / "samples.jsonl", folder / "other.jsonl"
    samples.write_text("".join(json.dumps({"qid": q, "sample": s, "text": OFF_TOPIC if q in off else RELEVANT[q]})
                               + "\n" for s, off in SAMPLE_OFF_TOPIC.items() for q in QIDS))
    other.write_text("".join(json.dumps({"qid": q, "text": OFF_TOPIC if q in OTHER_OFF_TOPIC else RELEVANT[q]}) + "\n"
                             for q in QIDS))
    return {"samples.jsonl": samples, "other.jsonl": other}


def run_designed_sampling(folder: Path) -> dict:
    """The designed collection's sampling result (``pipeline.study.sampling``, MiniLM), its retriever and judge
    as in :func:`run_designed_study`."""
    from pipeline.study.config import StudyConfig
    from pipeline.study.sampling import sampling_spread

    files = {**write_collection(folder), **write_samples(folder)}
    config = StudyConfig(dataset="designed", qrels=files["qrels.txt"], topics=files["topics.tsv"],
                         passages=files["passages.tsv"], retrievers=(f"designed-run={files['run.txt']}",),
                         judges=(f"designed-judge={files['judge.txt']}",),
                         generators=(f"other={files['other.jsonl']}",),
                         encoder="minilm")
    return sampling_spread(config, f"designed-samples={files['samples.jsonl']}", log=lambda m: None)
