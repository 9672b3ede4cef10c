"""``python -m pipeline``: the failure study's command line (every analysis scriptable, ``--json``).

The top of ``pipeline``'s dependency order: it may import any ``pipeline`` module, and nothing in
``pipeline`` imports it. Each module declares its commands (``COMMANDS``, of
:class:`core.cli.Command`: its arguments and its run, which calls the library and prints); this module
finds them and is the :class:`core.cli.CommandLine` over them, so a new command is a new module.
``args`` holds the options several commands share, ``output`` the line naming a resolved model. Exit
status, flag types and ``--json`` follow :mod:`core.cli` (0 ok, 1 failed while running, 2 bad usage
or input, 130 cancelled).

Commands (``python -m pipeline COMMAND --help`` lists each one's options with their defaults)::

    eval-run     per-query effectiveness of a TREC run (ir_measures)
    retrieve     compute a BM25 or dense run over the data folder's passages (named NAME@computed)
    h2r          hard-to-retrieve sets per retriever and their intersection
    coverage     judged queries and how many judged / relevant passages have text
    h2j          hard-to-judge sets: judge/NIST disagreement per query (binary and graded)
    h2g          hard-to-generate sets: BERTScore F1 of zero-shot answers per query
    overlap      the three sets (h2r, h2g, h2j) of one configuration, Venn regions, pairwise figures
    run          every step and every configuration's overlap (resumable); stored as a new study, unless a
                 stored one holds the same result (then its id is returned, nothing stored)
    studies      the stored studies of a dataset, newest first (--json: {"studies": [{id, configuration,
                 time, ...}]}); --delete ID removes one
    h2g-samples  H2G's sampling noise from several samples of one generator: each query's H2G probability,
                 the sets' Jaccard across samples, the overlap with H2G redrawn per sample, other generators
                 set against that spread (stored, keyed by content)
    typology     LLM-induced failure typology of one task's hard queries, reasons assigned per query
    annotations  human validation of the assigned reasons: CSV import/export, figures
    prefer       difficulty-aware vs baseline answers judged pairwise in both orders
    aware-judge  difficulty-aware judging: H2J and control queries re-judged with a difficulty sentence
                 and a same-length neutral control sentence (primary: aware vs control on hard queries),
                 disagreement with NIST compared per query; --list the results
    aware-retrieve  BM25 on queries rewritten from their H2R failure reason vs a same-length neutral control
                 rewrite (primary), a plain rewrite, RM3, the original (paired tests, Holm, share leaving
                 the bottom quartile); --list the stored results
    findings     the failure paper's claims checked on the stored studies: paper, measured, verdict
    predict      query-performance predictors against each task's failure (tau, r, AUC, intervals)
    export       a stored study's figures (SVG/PDF/PNG), tables (CSV, booktabs LaTeX), manifest.json
    llm          the LLM servers and the response cache: models, check, failures, purge

One name per concept, in every command:

    --retriever NAME[=RUNFILE]      a retriever (data folder's run, computed run, or a run file)
    --generator SPEC | NAME[=FILE]  the model whose answers are scored (an LLM spec, the data folder's
                                    answers/answers.NAME.<dataset>.jsonl, or imported {"qid", "text"}
                                    JSONL answers named NAME)
    --judge SPEC | NAME[=FILE]      the relevance judge (an LLM spec, the data folder's
                                    judgments/judgments.NAME.<dataset>.txt, or a qrels-format FILE);
                                    in ``prefer``, the pairwise judge (an LLM spec)
    --assigner SPEC                 the model that induces a typology and assigns failure reasons
    --temperature --seed --max-tokens --num-ctx --think/--no-think --keep-alive --concurrency
    --timeout --retries --executor --address
                                    how every LLM of the command is called (see ``--help``);
                                    unset decoding options keep each step's own defaults
    --model-size MODEL=SIZE         the size of a model whose backend reports none (imported answers
                                    or judgments: their NAME; the data folder's models.tsv gives
                                    theirs), e.g. llama-3.3-70b=70B; recorded as stated. An unknown
                                    size is never taken for a large one: without it, such a model's
                                    output carries no verdict

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
Errors print one line on stderr: exit status 2 for bad input (a flag, a file, a refused
combination), 1 for a failure while running (a server, a model, a step).
"""
from __future__ import annotations

from core import cli
from pipeline.cli.args import HelpFormatter

# the order of ``python -m pipeline --help``: a collection's steps, then the study, then what builds on it;
# a command module not named here follows, by name
HELP_ORDER = ("retrieval", "judging", "generation", "study", "sampling", "coverage", "typology", "annotation", "prefer",
              "aware_judge", "aware_retrieve", "findings", "predict", "export", "llm")

# bad input (TrecFormatError, DatasetError, StudyError, ... are ValueErrors) exits 2; a failure while
# running (RetrievalError, JavaError, LLMError, EncoderError are RuntimeErrors; a file that cannot be read) 1
COMMAND_LINE = cli.CommandLine(
    "python -m pipeline", "The query-failure study's command line (every analysis scriptable, --json); "
                          "COMMAND --help lists its options.",
    cli.discover_commands(__name__, HELP_ORDER), formatter_class=HelpFormatter,
    epilog=__doc__[__doc__.index("One name per concept"):],
    input_errors=lambda: (ValueError,), failures=lambda: (RuntimeError, OSError))


def build_parser():
    return COMMAND_LINE.build_parser()


def main(argv: list[str] | None = None) -> int:
    return COMMAND_LINE.main(argv)
