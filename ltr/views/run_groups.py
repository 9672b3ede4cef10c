"""Run groups: the folds of one experiment (runs whose configs differ only in the fold)."""
from __future__ import annotations

import json
from dataclasses import dataclass

import pandas as pd

from ltr.store import RunStore, run_is_live

# Config keys that differ between the folds of one experiment and so do not define a run group.
_PER_FOLD_KEYS = ("fold", "data_signature")


@dataclass(frozen=True)
class RunGroup:
    """The folds of one experiment: runs whose configs differ only in the fold."""

    key: str
    label: str
    run_ids: tuple[str, ...]
    folds: tuple[int, ...]
    last_active: float


def run_groups(store: RunStore, **filters) -> list[RunGroup]:
    """Runs grouped by config minus fold, most recently active group first."""
    runs = store.list_runs(with_config=True, **filters)
    if runs.empty:
        return []
    runs["last_active"] = runs[["created", "heartbeat", "finished"]].max(axis=1)
    runs["group"] = [json.dumps({k: v for k, v in c.items() if k not in _PER_FOLD_KEYS}, sort_keys=True)
                     for c in runs["config"]]
    # One run per (group, fold): configs differing only in the fold share a group, so duplicates
    # only come from a reused store path; keep the most recently active.
    runs = runs.sort_values(["group", "fold", "last_active"]).drop_duplicates(["group", "fold"], keep="last")
    groups = []
    for key, run_ids, folds, last_active in zip(*_grouped(runs)):
        cfg = json.loads(key)
        extra = " · ".join(f"{name} {cfg[name]}" for name in ("epochs", "lr", "batch_size", "seed") if name in cfg)
        label = (f"{cfg.get('data')} · {cfg.get('loss')} · {cfg.get('model')} · {extra} · "
                 f"folds {','.join(str(f) for f in folds)}")
        groups.append(RunGroup(key, label, tuple(run_ids), tuple(int(f) for f in folds), float(last_active)))
    return sorted(groups, key=lambda grp: grp.last_active, reverse=True)


def _grouped(runs: pd.DataFrame):
    g = runs.groupby("group", sort=False)
    return g.size().index, g["run_id"].agg(list), g["fold"].agg(list), g["last_active"].max()


def group_runs(store: RunStore, group: RunGroup) -> pd.DataFrame:
    """The group's runs, one per fold: status, epochs, best epoch, test NDCG@10, error."""
    runs = store.list_runs(run_ids=list(group.run_ids)).sort_values("fold")
    runs["status"] = [("running (stale)" if r["status"] == "running" and not run_is_live(r) else r["status"])
                      for r in runs.to_dict("records")]
    return runs[["fold", "status", "epochs_done", "total_epochs", "best_epoch", "test_ndcg10", "train_seconds",
                 "device", "error", "run_id"]].reset_index(drop=True)

