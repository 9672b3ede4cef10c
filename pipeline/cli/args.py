"""The options several subcommands share, each defined once: checked number types, the collection,
hard-set, judge-cap, BERTScore and LLM-call options, and ``--progress-key``; and the two things the
commands derive from them (the ``make_client`` keyword arguments, the early model check)."""
from __future__ import annotations

import argparse

from core import cli
from pipeline.data.datasets import DATASETS
from pipeline.judging.judgments import DEFAULT_CAP  # LLM judge: judged pairs per query at most

DEFAULT_TIMEOUT_S = 300.0


# ---- option values checked by argparse (the error names the option); number types: core.cli -------
def PROGRESS_KEY(text: str) -> str:
    """A progress record's key (:mod:`core.jobs.progress`), checked before any work starts."""
    from core.jobs.progress import KEY

    if not KEY.match(text):
        raise argparse.ArgumentTypeError(f"expected letters, digits, '.', '_' and '-' (at most 120), got {text!r}")
    return text


def _cap(text: str):
    """``--cap N`` (judged pairs per query) or ``none`` (every pair)."""
    return None if text.strip().lower() == "none" else cli.positive_int(text)


_cap.__name__ = "cap"


def reasons_source(text: str) -> str:
    """``--reasons``: ``typology`` or a reasons file that exists (checked before any work starts)."""
    from pathlib import Path

    if text == "typology":
        return text
    path = Path(text).expanduser()
    if not path.is_file():
        raise argparse.ArgumentTypeError(f"expected 'typology' or a reasons FILE; no such file: {text}")
    return str(path)


reasons_source.__name__ = "typology|FILE"


def reasons_args(p, task: str, assigned_to: str, assigner_default: str) -> None:
    """Where the difficulty-aware studies' failure reasons come from (``aware-judge``, ``aware-retrieve``):
    ``--reasons typology|FILE``, ``--reasons-model``, ``--assigner`` (assigns the typology's ``task``
    categories to ``assigned_to`` without ``--reasons``), ``--typology`` and ``--templates``; the
    combinations that would silently ignore a flag are refused by :func:`check_reasons_args`."""
    from pipeline.prompting import difficulty
    from pipeline.typology.categories import STUDY_FILE

    p.add_argument("--reasons", type=reasons_source, default=None, metavar="typology|FILE",
                   help=f"'typology': the dataset's latest finished failure-typology runs (task {task}); FILE: a "
                        f'JSON list or JSONL of {{"qid", "task": "{task}", "categories": [...]}}; default: '
                        f"--assigner assigns the typology's {task.upper()} categories to {assigned_to}")
    p.add_argument("--reasons-model", default=None, metavar="LABEL",
                   help="with --reasons typology: the runs of this model (a run's model label; default: the "
                        "newest run's model); with --reasons FILE: the model that made the file, its size stated "
                        "with --model-size LABEL=SIZE (a FILE's maker is otherwise of unknown size: no finding)")
    p.add_argument("--assigner", default=None, metavar="SPEC",
                   help=f"the model that assigns the reasons (default: {assigner_default})")
    p.add_argument("--typology", type=cli.existing_file, default=str(STUDY_FILE), metavar="FILE",
                   help="typology JSON (default: the study's ten categories)")
    p.add_argument("--templates", type=cli.existing_file, default=str(difficulty.DEFAULT_TEMPLATES), metavar="FILE",
                   help="difficulty sentence templates JSON (default: the shipped ones)")


def check_reasons_args(args) -> None:
    """Refuse the :func:`reasons_args` combinations where a flag would be ignored (exit 2, naming them)."""
    if args.reasons_model and not args.reasons:
        raise cli.InputError("--reasons-model names the model behind --reasons typology|FILE: it needs --reasons")
    if args.assigner and args.reasons:
        raise cli.InputError(f"--assigner assigns the reasons here; --reasons {args.reasons} already gives them: "
                             "pass one of the two")


class StatedSizes(argparse.Action):
    """``--model-size MODEL=SIZE`` (repeatable) -> ``{model: billions}`` (:func:`pipeline.llm.sizes.stated_size`):
    a malformed value, one model stated twice with two sizes, or a size that contradicts the model's published
    one (:func:`pipeline.llm.sizes.check_stated_size`), exits 2 naming the flag."""

    def __call__(self, parser, namespace, values, option_string=None):
        from pipeline.llm.sizes import check_stated_size, stated_size

        try:
            model, value = stated_size(values)
            check_stated_size(model, value, f"{option_string} {values}")
        except ValueError as exc:
            parser.error(f"argument {option_string}: {exc}")
        sizes = dict(getattr(namespace, self.dest, None) or {})
        if model in sizes and sizes[model] != value:
            parser.error(f"argument {option_string}: {model} is stated twice, as {sizes[model]:g}B and {value:g}B")
        sizes[model] = value
        setattr(namespace, self.dest, sizes)


class HelpFormatter(argparse.ArgumentDefaultsHelpFormatter, argparse.RawDescriptionHelpFormatter):
    """Defaults shown after each option's help, except where there is none to show (None, flags)."""

    def _get_help_string(self, action):
        if action.default in (None, False) or isinstance(action, argparse._StoreConstAction) \
                or action.default is argparse.SUPPRESS:
            return action.help
        return super()._get_help_string(action)


# ---- option groups ---------------------------------------------------------------------------------
GENERATOR_HELP = ("an LLM spec (see python -m pipeline --help), NAME: the data folder's "
                  "answers/answers.NAME.<dataset>.jsonl, or NAME=FILE.jsonl: imported answers")
JUDGE_HELP = ("an LLM spec, NAME: the data folder's judgments/judgments.NAME.<dataset>.txt, or NAME=FILE: "
              "qrels-format judgments")


def progress_key_arg(p) -> None:
    """``--progress-key``: the one way a dashboard job asks a long command for a progress record
    (``run`` uses its ``--study-id`` as the key)."""
    p.add_argument("--progress-key", type=PROGRESS_KEY, default=None, metavar="KEY",
                   help="write this job's progress record (stage n of m, items done of total) under KEY, "
                        "for the dashboard's jobs table")


def collection_args(p, *, many: bool = False) -> None:
    """The collection: ``--dataset`` (repeatable with ``many``: ``args.dataset`` is then a list) or ``--qrels``."""
    p.add_argument("--dataset", choices=list(DATASETS), action="append" if many else "store",
                   help="repeatable: several datasets, evaluated each and pooled" if many else None)
    p.add_argument("--qrels", type=cli.existing_file, default=None,
                   help="any TREC-style qrels file instead of --dataset")
    p.add_argument("--topics", type=cli.existing_file, default=None, help="qid<TAB>query file (with --qrels)")
    p.add_argument("--passages", type=cli.existing_file, default=None, help="pid<TAB>text file (with --qrels)")
    p.add_argument("--data", default=None, help="TREC DL data folder (default: configured trec_dl folder)")
    p.add_argument("--quantile", type=cli.quantile, default=0.25,
                   help="hard sets: the bottom q (H2R, H2G) or top q (H2J) of the queries")
    cli.json_arg(p)


def cap_arg(p) -> None:
    p.add_argument("--cap", type=_cap, default=DEFAULT_CAP, metavar="N|none",
                   help="LLM judge: judged pairs per query at most (stratified by grade); none: every pair")


def bertscore_args(p) -> None:
    from pipeline.generation.bertscore import ENCODERS

    p.add_argument("--encoder", default="auto", choices=list(ENCODERS),
                   help="BERTScore encoder; auto: roberta-large when loadable, else minilm (stated with results)")
    p.add_argument("--aggregate", default="max", choices=["max", "mean"], help="BERTScore over several passages")
    p.add_argument("--partial-references", default="exclude", choices=["exclude", "include"],
                   help="H2G: queries with only some of their grade-2/3 passages' texts are excluded (and "
                        "counted), or scored against the passages that have text")
    p.add_argument("--truncated-answers", default="exclude", choices=["exclude", "include"],
                   help="H2G: answers cut at the token limit (finish reason length) are excluded (and "
                        "counted), or scored as they are")


def universe_arg(p) -> None:
    from pipeline.study.universe import DEFAULT_UNIVERSE, UNIVERSE_HELP, UNIVERSES

    p.add_argument("--universe", default=DEFAULT_UNIVERSE, choices=UNIVERSES,
                   help="over which queries each hard set is drawn: " + "; ".join(
                       f"{rule}: {UNIVERSE_HELP[rule]}" for rule in UNIVERSES) + f" (default {DEFAULT_UNIVERSE})")


def llm_args(p) -> None:
    from pipeline.generation.answers import GENERATION_OPTIONS

    g = p.add_argument_group("LLM calls", "how every LLM of this command is called; decoding options left "
                                          f"unset keep each step's own (answers: {GENERATION_OPTIONS.max_tokens} "
                                          "tokens, greedy)")
    g.add_argument("--temperature", type=cli.nonnegative_float, default=None, help="sampling temperature (0: greedy)")
    g.add_argument("--seed", type=cli.nonnegative_int, default=None, help="decoding seed (typology: also its shuffle)")
    g.add_argument("--max-tokens", type=cli.positive_int, default=None, help="tokens per reply at most")
    g.add_argument("--num-ctx", type=cli.positive_int, default=None, help="context window (Ollama num_ctx)")
    g.add_argument("--think", action=argparse.BooleanOptionalAction, default=None,
                   help="let reasoning models reason before answering (default: off; reasoning is "
                        "stripped from answers either way)")
    g.add_argument("--keep-alive", default=None, metavar="DURATION",
                   help="Ollama keeps the model loaded this long after a request (e.g. 5m, 1h, -1)")
    g.add_argument("--concurrency", type=cli.positive_int, default=None,
                   help="requests in flight (default: 1 for Ollama and the embedded model, 4 for OpenAI-"
                        "compatible servers; set Ollama's to its OLLAMA_NUM_PARALLEL)")
    g.add_argument("--timeout", type=cli.positive_float, default=DEFAULT_TIMEOUT_S,
                   help="seconds one request may take (waiting for a free slot does not count); a request "
                        "past it stops the step")
    g.add_argument("--retries", type=cli.nonnegative_int, default=2, help="extra attempts after a server error")
    g.add_argument("--model-size", action=StatedSizes, default=None, metavar="MODEL=SIZE",
                   help="repeatable: the size of a model whose backend reports none (an OpenAI-compatible server "
                        "other than llama.cpp's; imported answers or judgments: MODEL is their NAME, or prefer's "
                        "answers file as given), e.g. "
                        "qwen3:8b=8B or llama-3.3-70b=70B; recorded in its provenance as stated by the user. "
                        "Without it such a model's size is unknown and its output carries no verdict")
    g.add_argument("--executor", choices=["local", "ray"], default="local",
                   help="ray: fan the LLM calls out over Ray tasks, every call through the response cache")
    g.add_argument("--address", default=None,
                   help="Ray cluster for --executor ray: auto, host:port, ray://host:10001 (default: [ray] "
                        "address, else a local Ray instance)")


# ---- what the commands derive from the shared options ------------------------------------------------
def collection(args):
    """The ``collection_args`` collection: a registry dataset or a ``--qrels`` one."""
    from pipeline.study.config import load_collection

    return load_collection(args.dataset, qrels=args.qrels, topics=args.topics, passages=args.passages,
                           data_dir=args.data)


def _keep_alive(value: str | None):
    """Ollama's keep_alive: a duration string ("5m", "1h") or seconds ("-1": keep loaded)."""
    if value is None:
        return None
    try:
        return float(value)
    except ValueError:
        return value


def llm_options(args, step: str | None = None) -> dict:
    """``make_client`` keyword arguments from the common LLM options (decoding options left unset
    keep each step's own defaults)."""
    overrides = {"temperature": args.temperature, "seed": args.seed, "max_tokens": args.max_tokens,
                 "num_ctx": args.num_ctx, "think": args.think}
    options = {"timeout": args.timeout, "retries": args.retries, "executor": args.executor,
               "address": args.address, "concurrency": args.concurrency, "keep_alive": _keep_alive(args.keep_alive),
               "overrides": {k: v for k, v in overrides.items() if v is not None},
               "stated_sizes": dict(args.model_size or {})}
    return {**options, "step": step} if step else options


def llm_backend_kinds() -> tuple[str, ...]:
    """The spec kinds of the registered LLM backends (``embedded``, ``ollama``, ``openai``), read from
    :data:`pipeline.llm.backends.BACKENDS` (its modules' declarations, nothing imported); a backend
    registered under a whole spec (``embedded:smollm2-transformers``) counts under its kind."""
    from pipeline.llm.backends import BACKENDS

    return tuple(dict.fromkeys(name.partition(":")[0] for name in BACKENDS.names()))


def folder_answer_names(args) -> set[str]:
    """The generator NAMEs of the data folder's ``answers/answers.NAME.<dataset>.jsonl`` for the command's
    dataset(s) (:mod:`pipeline.data.imported`; none for a ``--qrels`` collection): read from the file names,
    before any data is loaded."""
    from pipeline.data.datasets import resolve_data_folder
    from pipeline.data.imported import folder_answers

    datasets = args.dataset if isinstance(args.dataset, list) else [args.dataset]
    if getattr(args, "qrels", None) or not any(datasets):
        return set()
    folder = resolve_data_folder(args.data)
    return {name for dataset in datasets if dataset for name in folder_answers(folder, dataset)}


def check_models(args, components, *, generators=()) -> None:
    """Check the LLMs among ``components`` (``--generator``/``--judge`` values) before any data is
    loaded, so a dead server or a missing model fails the command in seconds
    (:class:`pipeline.llm.LLMUnavailable`), and a stated size that contradicts a reported one exits 2.
    Imported files and the data folder's judges are skipped. ``generators`` (``--generator`` values,
    also among ``components``): neither imported nor the data folder's answers (:func:`folder_answer_names`),
    each one is an LLM spec, so a malformed one
    (``nonsense:::model``) exits 2 here, before any step runs (:func:`pipeline.llm.specs.check_spec`,
    the check the forms make too); a judge's NAME may be the data folder's, known only with the data."""
    from pipeline.llm import make_client
    from pipeline.llm.specs import check_spec

    answers = folder_answer_names(args)
    for text in generators:
        if text and "=" not in text and text not in answers:
            check_spec(text)
    for text in components:
        if text and "=" not in text and text not in answers and \
                text.partition(":")[0].lower() in ("auto", *llm_backend_kinds()):
            make_client(text, **{**llm_options(args), "executor": "local"})
