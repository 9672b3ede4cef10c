"""``llm ACTION``: the LLM servers and the response cache (models, check, answers, failures, purge)."""
from __future__ import annotations

import sys

from core import cli
from pipeline.cli.args import HelpFormatter, llm_backend_kinds


def cmd_llm_models(args) -> None:
    from pipeline.llm.backends.ollama_backend import model_capabilities, ollama_host, ollama_models

    models = ollama_models(args.host, timeout=args.timeout, model="(model list)")
    rows = [{"model": name, "digest": digest, **model_capabilities(name, args.host, timeout=args.timeout)}
            for name, digest in sorted(models.items())]
    if args.json:
        cli.print_json({"host": ollama_host(args.host), "models": rows})
        return
    print(f"Ollama at {ollama_host(args.host)}: {len(rows)} models")
    for r in rows:
        print(f"  {r['model']}  {r['digest'][:12]}  {'chat' if r['chat'] else 'cannot chat'} ({r['why']})")


def cmd_llm_check(args) -> None:
    from pipeline.llm import make_backend

    backend = make_backend(args.spec, timeout=args.timeout)
    backend.resolve()  # LLMUnavailable (one line, exit 1) when the model cannot be reached
    model = backend.provenance
    prov = model.as_dict()
    if args.json:
        cli.print_json({"spec": args.spec, "ok": True, "provenance": prov})
        return
    print(f"{args.spec}: {prov['label']} is available" + (f" at {prov['endpoint']}" if prov["endpoint"] else ""))
    if prov["resolution"]:
        print(f"  {prov['resolution']}")
    # the size, and whether its output can carry a verdict (pipeline.llm.sizes)
    print(f"  size: {model.size_text}" + (f"; {model.evidence_gate}: its output carries no verdict"
                                          if model.evidence_gate else ""))


def _cache(args):
    from pipeline.llm import ResponseCache

    return ResponseCache(args.cache_file)


def cmd_llm_failures(args) -> None:
    import datetime

    rows = _cache(args).failures(model=args.model, step=args.step, limit=args.limit)
    if args.json:
        cli.print_json({"failures": rows})
        return
    for r in rows:
        when = datetime.datetime.fromtimestamp(r["at"]).isoformat(sep=" ", timespec="seconds")
        print(f"{when}  {r['backend']}:{r['model']}  {r['step'] or '-'}  attempt {r['attempt']}  "
              f"{' '.join(r['error'].split())}")
    print(f"{len(rows)} failed attempts" + (f" (the newest {args.limit})" if args.limit else ""), file=sys.stderr)


def cmd_llm_answers(args) -> None:
    rows = _cache(args).answers_by_model()
    if args.json:
        cli.print_json({"answers": rows})
        return
    for r in rows:
        print(f"{r['answers']:7d}  {r['backend']}:{r['model']}  {r['step'] or '-'}")


def cmd_llm_purge(args) -> None:
    if args.model is None and args.step is None:
        raise ValueError("llm purge: give --model and/or --step (the whole cache is never purged at once)")
    n = _cache(args).purge(model=args.model, step=args.step, backend=args.backend)
    if args.json:
        cli.print_json({"purged": n, "model": args.model, "step": args.step, "backend": args.backend})
        return
    print(f"purged {n} cached answers")


def _llm_arguments(p) -> None:
    llm_sub = p.add_subparsers(dest="llm_command", required=True, metavar="ACTION")

    def action(name, help_text, func):
        a = llm_sub.add_parser(name, help=help_text, description=help_text, formatter_class=HelpFormatter)
        cli.json_arg(a)
        a.set_defaults(func=func)
        return a

    def cache_file_arg(a):
        a.add_argument("--cache-file", default=None, metavar="FILE",
                       help="the response cache (default: cache/llm/responses.sqlite under IRDASH_CACHE_DIR)")

    a = action("models", "the models an Ollama server has: digest, and whether each can chat", cmd_llm_models)
    a.add_argument("--host", default=None, help="Ollama server (default: OLLAMA_HOST, else http://127.0.0.1:11434)")
    a.add_argument("--timeout", type=cli.positive_float, default=5.0, help="seconds to wait for the server")
    a = action("check", "resolve an LLM spec and check that its model is there (exit 1 when not)", cmd_llm_check)
    a.add_argument("spec", metavar="SPEC", help="an LLM spec (auto, embedded, ollama[:MODEL[@HOST]], openai:MODEL@URL)")
    a.add_argument("--timeout", type=cli.positive_float, default=10.0, help="seconds to wait for the server")
    a = action("answers", "cached answers per model and step", cmd_llm_answers)
    cache_file_arg(a)
    a = action("failures", "recorded failed calls (newest last)", cmd_llm_failures)
    a.add_argument("--model", default=None, help="only this model (as listed: e.g. llama3.2:3b)")
    a.add_argument("--step", default=None, help="only this step (generation, judgments:binary, judgments:graded, "
                                                 "typology, prefer:judge, prefer:generation, prefer:assignment)")
    a.add_argument("--limit", type=cli.positive_int, default=50, help="the newest N")
    cache_file_arg(a)
    a = action("purge", "delete the cached answers of a model and/or step (the next run asks again)", cmd_llm_purge)
    a.add_argument("--model", default=None, help="this model's answers (as listed by `llm answers`)")
    a.add_argument("--step", default=None, help="this step's answers")
    a.add_argument("--backend", default=None, choices=llm_backend_kinds(), help="only this backend's")
    cache_file_arg(a)


def _run_action(args) -> None:
    args.func(args)


COMMANDS = (cli.Command("llm", "LLM servers and the response cache (cache/llm/responses.sqlite)", _llm_arguments,
                        _run_action),)
