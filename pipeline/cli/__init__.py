"""``python -m pipeline``: the failure study's command line (every analysis scriptable, ``--json``).

The top of ``pipeline``'s dependency order: it may import any ``pipeline`` module, and nothing in
``pipeline`` imports it. This module assembles the parser; ``args`` holds the options several
commands share, ``output`` the printing helpers, and each other module one group of commands, which
parses its arguments, calls the library and prints.

Commands (``python -m pipeline COMMAND --help`` lists each one's options with their defaults)::

    eval-run     per-query effectiveness of a TREC run (ir_measures)
    retrieve     compute a BM25 or dense run over the data folder's passages (named NAME@computed)
    h2r          hard-to-retrieve sets per retriever and their intersection
    coverage     judged queries and how many judged / relevant passages have text
    h2j          hard-to-judge sets: judge/NIST disagreement per query (binary and graded)
    h2g          hard-to-generate sets: BERTScore F1 of zero-shot answers per query
    overlap      the three sets (h2r, h2g, h2j) of one configuration, Venn regions, pairwise figures
    run          every step and every configuration's overlap (resumable); each run a new stored study
    studies      the stored studies of a dataset, newest first (--json: {"studies": [{id, configuration,
                 time, ...}]}); --delete ID removes one
    typology     LLM-induced failure typology of one task's hard queries, reasons assigned per query
    annotations  human validation of the assigned reasons: CSV import/export, figures
    prefer       difficulty-aware vs baseline answers judged pairwise in both orders
    findings     the failure paper's claims checked on the stored studies: paper, measured, verdict
    predict      query-performance predictors against each task's failure (tau, r, AUC, intervals)
    export       a stored study's figures (SVG/PDF/PNG), tables (CSV, booktabs LaTeX), manifest.json
    llm          the LLM servers and the response cache: models, check, failures, purge

One name per concept, in every command:

    --retriever NAME[=RUNFILE]      a retriever (data folder's run, computed run, or a run file)
    --generator SPEC | NAME=FILE    the model whose answers are scored (an LLM spec, or imported
                                    {"qid", "text"} JSONL answers named NAME)
    --judge SPEC | NAME[=FILE]      the relevance judge (an LLM spec, the data folder's
                                    judgments/judgments.NAME.<dataset>.txt, or a qrels-format FILE);
                                    in ``prefer``, the pairwise judge (an LLM spec)
    --assigner SPEC                 the model that induces a typology and assigns failure reasons
    --temperature --seed --max-tokens --num-ctx --think/--no-think --keep-alive --concurrency
    --timeout --retries --executor --address
                                    how every LLM of the command is called (see ``--help``);
                                    unset decoding options keep each step's own defaults

LLM SPEC grammar:

    auto                     Ollama at OLLAMA_HOST when a server answers (llama3.2:3b, else qwen3:8b,
                             else its first model that can chat); otherwise the embedded model. The
                             model it resolved to, and why it fell back, is printed with every result
    embedded[:MODEL]         a packaged offline model, no server needed (pipeline.llm.specs lists
                             them; a small model's results say they are not findings)
    ollama[:MODEL[@HOST]]    e.g. ollama:qwen3:8b, ollama:llama3.2:3b@http://gpu-box:11434
    openai:MODEL@BASE_URL    an OpenAI-compatible server (vLLM, llama.cpp, Ollama's /v1); key from
                             OPENAI_API_KEY

Environment: OLLAMA_HOST (default http://127.0.0.1:11434), OPENAI_API_KEY, IRDASH_CACHE_DIR.
Results are labelled by the model a spec resolved to (backend:model [digest]), never by the spec.
Errors print one line on stderr and exit with status 1 (2 for a bad option).
"""
from __future__ import annotations

import argparse
import sys

from pipeline.cli import (annotation, coverage, export, findings, generation, judging, llm, predict, prefer,
                          retrieval, study, typology)
from pipeline.cli.args import HelpFormatter

# the order of ``python -m pipeline --help``: a collection's steps, then the study, then what builds on it
COMMAND_GROUPS = (retrieval, judging, generation, study, coverage, typology, annotation, prefer, findings, predict,
                  export, llm)


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="python -m pipeline", formatter_class=HelpFormatter,
                                     description="The query-failure study's command line (every analysis "
                                                 "scriptable, --json); COMMAND --help lists its options.",
                                     epilog=__doc__[__doc__.index("One name per concept"):])
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")

    def command(name, help_text):
        return sub.add_parser(name, help=help_text, description=help_text, formatter_class=HelpFormatter)

    for group in COMMAND_GROUPS:
        group.add_commands(command)
    return parser


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    try:
        args.func(args)
    except (ValueError, RuntimeError, OSError) as exc:
        # TrecFormatError/DatasetError are ValueErrors, RetrievalError/JavaError RuntimeErrors
        message = " ".join(str(exc).split()) or type(exc).__name__
        print(f"error: {message}", file=sys.stderr)
        return 1
    return 0
