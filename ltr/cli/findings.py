"""``findings``: the LearnDCG paper's claims checked on one experiment of the run store (:mod:`ltr.findings`):
LearnDCG highest per metric with the report's test on seed-averaged per-query NDCG and Holm, its n and the
magnitude beside the paper's figures; θ_d and b_d per fold and seed against the seed-to-seed spread and the
drift reference; NeuralLoss against LearnDCG; the cost ranking behind the NDCG-vs-time scatter. Each verdict
shows the claim's rule from ``ltr/paper_claims.json``. ``--no-experiment`` checks the runs stored without
an experiment name (the Training page's)."""
from __future__ import annotations

from core import cli


def cmd_findings(args) -> int:
    from ltr.findings import NO_EXPERIMENT, as_json, check_findings, text_lines
    from ltr.store import RunStore

    with RunStore(args.store) as store:
        result = check_findings(store, NO_EXPERIMENT if args.no_experiment else args.experiment)
    if args.json:
        cli.print_json(as_json(result))
    else:
        print("\n".join(text_lines(result, args.verbose)))
    return cli.EXIT_OK


def _arguments(p) -> None:
    which = p.add_mutually_exclusive_group(required=True)
    which.add_argument("--experiment", help="the grid (experiment) whose completed runs are checked")
    which.add_argument("--no-experiment", action="store_true",
                       help="check the completed runs stored without an experiment name (trained from the "
                            "Training page or by ltr train without --experiment)")
    p.add_argument("--store", default=None, help="run store (default: the cache's runs.sqlite)")
    p.add_argument("--verbose", action="store_true", help="print every reason, rule and part headline whole, "
                   "wrapped at 100 columns (default: a line per finding and per part)")
    cli.json_arg(p, help='print {"experiment", "test", "findings": {name: {verdict, paper, rule, parts (each with '
                         'its evidence), ...}}, "cost_ranking"}')


COMMANDS = (cli.Command("findings", "the LearnDCG paper's claims checked on one experiment (verdict per claim)",
                        _arguments, cmd_findings),)
