"""``findings``: the LearnDCG paper's claims checked on one experiment of the run store (:mod:`ltr.findings`):
LearnDCG highest per metric with the report's test and correction, θ_d per fold from the drift
diagnostic, NeuralLoss against LearnDCG, and the cost ranking behind the NDCG-vs-time scatter."""
from __future__ import annotations

from core import cli


def cmd_findings(args) -> int:
    from ltr.findings import as_json, check_findings, text_lines
    from ltr.store import RunStore

    with RunStore(args.store) as store:
        result = check_findings(store, args.experiment)
    if args.json:
        cli.print_json(as_json(result))
    else:
        print("\n".join(text_lines(result)))
    return cli.EXIT_OK


def _arguments(p) -> None:
    p.add_argument("--experiment", required=True, help="the grid (experiment) whose completed runs are checked")
    p.add_argument("--store", default=None, help="run store (default: the cache's runs.sqlite)")
    cli.json_arg(p, help='print {"experiment", "test", "findings": {name: {verdict, paper, parts, ...}}, '
                         '"cost_ranking"}')


COMMANDS = (cli.Command("findings", "the LearnDCG paper's claims checked on one experiment (verdict per claim)",
                        _arguments, cmd_findings),)
