"""Each study universe's size under both universe rules on the TREC DL data folder (issue 30 item 3).

    python bench/universe_sizes.py [--data DIR] [--datasets dl19,dl20,dl21] [--json]

No LLM runs. Per dataset, each task's own scored queries, through the study's own functions:

- H2R: every imported full-corpus run of the folder (``pipeline.study.tasks.h2r.retrieval_values``: judged
  queries missing from a run score 0, so a run scores every judged query);
- H2G: the queries ``pipeline.generation.h2g.generation_values`` scores, with partial references
  excluded (default) and included. The answers are placeholders (each query's own text, imported as
  answers): which queries are scored depends only on the references, never on the answer, so the
  counts are those of any generator that answers every query (the F1 values are meaningless and unused);
- H2J: every imported judgments file of the folder (``judgment_values``), and the queries an LLM judge
  can score: those with at least one judged pair whose passage has text (the pairs ``llm_judgments``
  samples, ``sample_pairs(eligible=passage has text)``), assuming every reply parses.

Then the common universe of each (retriever, H2G choice, judge) and, for H2R (real values), the set
each universe rule draws: ``per-task`` (its quartile over the retriever's own queries; how many of them
lie in the common universe) and ``common`` (the quartile within the common universe),
``pipeline.study.universe.draw_sets``. H2G and H2J sets need a generator's answers or an LLM's labels:
only their n is given.
"""
from __future__ import annotations

import argparse
import json
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from pipeline.data.datasets import load_dataset  # noqa: E402
from pipeline.generation.answers import import_answers  # noqa: E402
from pipeline.generation.h2g import generation_values  # noqa: E402
from pipeline.judging.h2j import judgment_values  # noqa: E402
from pipeline.judging.judgments import sample_pairs  # noqa: E402
from pipeline.data.imported import folder_judgments  # noqa: E402
from pipeline.study.run import HARDEST_AT_TOP  # noqa: E402
from pipeline.study.tasks.h2j import judgments_for  # noqa: E402
from pipeline.study.tasks.h2r import retrieval_values  # noqa: E402
from pipeline.study.universe import common_universe, draw_sets  # noqa: E402

QUANTILE = 0.25


def placeholder_answers(data, folder: Path) -> Path:
    path = folder / f"answers.{data.name}.jsonl"
    path.write_text("".join(json.dumps({"qid": q, "text": text}) + "\n" for q, text in data.queries().items()))
    return path


def llm_judge_scope(data) -> dict[str, float]:
    """A placeholder value per query an LLM judge would judge (at least one pair with passage text)."""
    qrels = data.require_qrels()
    sample = sample_pairs({q: qrels[q] for q in data.queries()}, None, eligible=data.passages.__contains__)
    return {q: 0.0 for q, pids in sample.items() if pids}


def measure(dataset: str, data_dir, scratch: Path) -> dict:
    data = load_dataset(dataset, data_dir)
    judged = len(data.queries())
    h2r = {}
    for name in sorted(data.imported_runs()):
        run_name, values, _ = retrieval_values(data, name)
        h2r[run_name] = values
    gen = import_answers("placeholder", placeholder_answers(data, scratch), known_qids=data.topics)
    h2g = {choice: generation_values(data, gen, "minilm", "max", choice)[0] for choice in ("exclude", "include")}
    h2j = {}
    for judge in folder_judgments(data.folder, dataset):
        values, _ = judgment_values(data, judgments_for(data, judge, "binary", cap=None))
        h2j[judge] = values
    h2j["an LLM judge (pairs with text)"] = llm_judge_scope(data)
    rows = []
    for retriever, rvalues in h2r.items():
        for choice, gvalues in h2g.items():
            for judge, jvalues in h2j.items():
                values = {"h2r": rvalues, "h2g": gvalues, "h2j": jvalues}
                common = common_universe(values)
                row = {"retriever": retriever, "partial_references": choice, "judge": judge,
                       "n_h2r": len(rvalues), "n_h2g": len(gvalues), "n_h2j": len(jvalues), "n_common": len(common)}
                if common:
                    for rule in ("per-task", "common"):
                        _, hard, sets, _ = draw_sets(values, QUANTILE, rule, judged, top=HARDEST_AT_TOP)
                        row[f"h2r_{rule}"] = {"n_hard": len(hard["h2r"].qids), "of": hard["h2r"].n_queries,
                                              "in_common": len(sets["h2r"])}
                rows.append(row)
    return {"dataset": dataset, "judged": judged, "imported_runs": sorted(h2r),
            "imported_judgments": sorted(folder_judgments(data.folder, dataset)), "rows": rows}


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", default=None, help="TREC DL data folder (default: the configured one)")
    parser.add_argument("--datasets", default="dl19,dl20,dl21")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory() as scratch:
        results = [measure(d, args.data, Path(scratch)) for d in args.datasets.split(",")]
    if args.json:
        print(json.dumps(results, indent=1))
        return
    for r in results:
        print(f"{r['dataset']}: {r['judged']} judged queries; imported runs {', '.join(r['imported_runs']) or 'none'}; "
              f"imported judgments {', '.join(r['imported_judgments']) or 'none'}")
        for row in r["rows"]:
            line = (f"  {row['retriever']} | H2G partial {row['partial_references']} | {row['judge']}: "
                    f"H2R n {row['n_h2r']}, H2G n {row['n_h2g']}, H2J n {row['n_h2j']}, common n {row['n_common']}")
            if "h2r_per-task" in row:
                p, c = row["h2r_per-task"], row["h2r_common"]
                line += (f"; H2R set per-task {p['n_hard']} of {p['of']} ({p['in_common']} in common), "
                         f"common {c['n_hard']} of {c['of']}")
            print(line)


if __name__ == "__main__":
    main()
