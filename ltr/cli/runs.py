"""``runs``: list the runs in the store (read only: a run whose process died shows as "running (dead)")."""
from __future__ import annotations

import json

from core import cli

# minutes is the Results page's x-axis (ltr.cost.MINUTES_CONVENTION): train_seconds + the run's share of its
# one-time pre-training (pretrain_seconds, shared by pretrain_shared_by runs; pretrain_paid: built in this run
# (1) or loaded from the cache (0)); cpu, threads and load explain it
COLUMNS = ["run_id", "status", "epochs_done", "best_epoch", "test_ndcg10", "minutes", "train_seconds",
           "pretrain_seconds", "pretrain_paid", "pretrain_shared_by", "cpu_seconds", "threads", "load_at_start",
           "error"]


def cmd_runs(args) -> int:
    from ltr.cost import MINUTES_CONVENTION, pretraining_shares, with_minutes
    from ltr.store import RunStore, canonical_data, run_is_live

    data = None if args.data is None else [canonical_data(d) for d in args.data]  # as runs store it
    with RunStore(args.store) as store:  # a listing: reads only (dead trainers show as "running (dead)")
        runs = store.list_runs(status=args.status, data=data, experiment=args.experiment)
        runs = with_minutes(runs, pretraining_shares(store.pretraining_runs()))
    runs.loc[runs["status"] != "completed", "minutes"] = None  # charged when it completes
    runs["status"] = [("running (dead)" if r["status"] == "running" and not run_is_live(r) else r["status"])
                      for r in runs.to_dict("records")]
    runs = runs[COLUMNS].copy()
    # Run ids in full (they are what one copies); of an error only its first line (the message).
    first_lines = [e.splitlines()[0] if isinstance(e, str) and e else e for e in runs["error"]]
    if args.json:
        runs["error"] = first_lines
        cli.print_json({"runs": json.loads(runs.to_json(orient="records")), "minutes": MINUTES_CONVENTION})
        return cli.EXIT_OK
    runs["error"] = [e if not isinstance(e, str) else _shorten(e, 80) for e in first_lines]
    print(runs.to_string(index=False) if not runs.empty else "no runs")
    if not runs.empty:
        print(f"minutes: {MINUTES_CONVENTION} (pretrain_seconds: the surrogate's pre-training time, "
              "pretrain_shared_by: those runs; pretrain_paid: 1 built in this run, 0 loaded from the cache)")
    return cli.EXIT_OK


def _shorten(text: str, width: int) -> str:
    return text if len(text) <= width else text[: width - 3] + "..."


def _arguments(ls) -> None:
    ls.add_argument("--store", default=None)
    ls.add_argument("--status", nargs="+")
    ls.add_argument("--data", nargs="+")
    ls.add_argument("--experiment", default=None)
    cli.json_arg(ls, help='print {"runs": [{"run_id", "status", "minutes", ...}], "minutes": its convention} (each '
                          'error\'s first line in full)')


COMMANDS = (cli.Command("runs", "list runs in the store (read only: a run whose process died shows as "
                                "\"running (dead)\")", _arguments, cmd_runs),)
