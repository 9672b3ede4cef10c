"""How the study measures each task and draws its sets, in words: stored with every study
(``StudyResult.conventions``) and shown with every figure, so a number always says what produced it.
Each task (:mod:`pipeline.study.tasks`) states its own entry as its ``convention``."""
from __future__ import annotations

MEASURE = "nDCG@10"  # H2R's measure in the study
CONVENTIONS = {
    "h2r": f"lowest {MEASURE} (ir_measures, judged queries missing from a run score 0), the quantile rule below",
    "h2g": "BERTScore F1 (bert-score, no idf, no baseline rescaling) of the zero-shot answer, max over the "
           "query's passages graded 2-3 that have text, lowest first (the quantile rule below); queries without "
           "such a passage excluded, and by default those with only some of them (partial_references)",
    "h2j": "share of the query's labelled pairs where judge and NIST disagree (binary: opposite sides of grade 2; "
           "graded: |LLM - NIST| > 1), highest first (the quantile rule below)",
    "universe": "per-task (default): each task's set over the queries that task scores, the overlap over their "
                "members among the queries all three tasks score; common: each set within the queries all "
                "three tasks score (pipeline.study.universe)",
    "partial_references": "exclude (default): queries with only some grade-2/3 passages' texts are not scored "
                          "for H2G (counted); include: scored against the passages that have text",
    "truncated_answers": "exclude (default): answers cut at the token limit (finish reason length) are not scored "
                         "for H2G (counted); include: scored as they are",
    "quantile": "target floor((n-1)q)+1 queries (the size of numpy's linear-interpolated quantile set without "
                "ties); a tie block at the boundary is never split: in or out, whichever size is closer to the "
                "target (equal distance: out); pipeline.sets.rule",
}
