"""Drift or learning? The per-run drift diagnostic of LearnDCG's θ (the Training and Results pages show it
beside the trajectories, :mod:`ltr.views.drift`; ``ltr findings`` reads it for θ_d per fold).

Adam moves a parameter by about its learning rate per step when the gradient keeps one sign and a
steady size (m̂/√v̂ -> ±1). So ``θ₀ + loss_lr × steps`` (the *drift reference*) is where a θ that only
ever drifts ends up. It is not a hard bound: when the gradient's size grows step after step, as
standard LearnDCG's does (|L| grows with ln b_d), m̂/√v̂ exceeds 1 and θ overshoots the reference
(measured: 1.4x after 250 steps at loss_lr 0.01). The per-run diagnostic puts numbers on it:

- ``one_sign``: the share of logged steps with a non-zero θ gradient whose sign is the majority sign
  (1.0: the gradient never changed sign), beside the shares of negative / zero / positive gradients;
- ``of_reference``: (final θ - θ₀) / (loss_lr × steps), how much of the maximal drift was used
  (about ±1 or beyond: drift; near 0: the parameter settled or went back and forth).

Across folds, final θ_d against the number of steps (:func:`theta_vs_steps`): a slope near ±loss_lr
says "the value is set by the step count", a slope near 0 with fold-to-fold spread says the folds
really differ.

Everything is aggregated in SQL (:meth:`ltr.store.RunStore.step_summary`): no series is fetched.
"""
from __future__ import annotations

from typing import Sequence

import numpy as np
import pandas as pd

from ltr.store import RunStore

THETAS = ("theta_d", "theta_g", "theta_alpha")


def log_base(theta) -> np.ndarray | float:
    """LearnDCG's log base from its raw parameter: ``b = 1 + softplus(θ)`` (b_d for θ_d, b_g for θ_g;
    :mod:`ltr.losses.learndcg`), computed stably (``logaddexp(0, θ)``). θ₀ = ln(e - 1) = 0.541 gives b = 2."""
    return 1.0 + np.logaddexp(0.0, theta)


def _loss_lr(store: RunStore, run_ids: Sequence[str]) -> dict[str, float]:
    runs = store.list_runs(run_ids=list(run_ids), with_config=True)
    return {r: float(c.get("loss_lr") or c.get("lr") or np.nan) for r, c in zip(runs["run_id"], runs["config"])}


def drift_diagnostic(store: RunStore, run_ids: Sequence[str]) -> pd.DataFrame:
    """One row per run and learnable θ: fold, θ, steps, θ₀, final θ, loss_lr, drift reference,
    ``of_reference``, gradient sign shares and ``one_sign`` (see the module docstring)."""
    cols = ["fold", "parameter", "steps", "theta_0", "theta_final", "loss_lr", "drift_reference", "of_reference",
            "grad_negative", "grad_zero", "grad_positive", "one_sign", "run_id"]
    summary = store.step_summary(list(run_ids), [*THETAS, *(f"grad_{t}" for t in THETAS)])
    if summary.empty:
        return pd.DataFrame(columns=cols)
    fold_of = store.run_folds(list(run_ids))
    lr_of = _loss_lr(store, run_ids)
    by_key = {(r["run_id"], r["name"]): r for r in summary.to_dict("records")}
    rows = []
    for (run_id, name), value in sorted(by_key.items()):
        if name not in THETAS:
            continue
        grad = by_key.get((run_id, f"grad_{name}"))
        steps = int(value["last_step"]) + 1
        lr = lr_of.get(run_id, np.nan)
        row = {"fold": fold_of.get(run_id), "parameter": name, "steps": steps, "theta_0": value["first_value"],
               "theta_final": value["last_value"], "loss_lr": lr,
               "drift_reference": value["first_value"] + lr * steps,
               "of_reference": (value["last_value"] - value["first_value"]) / (lr * steps) if lr > 0 else np.nan,
               "run_id": run_id}
        if grad is not None and grad["n"]:
            n, nonzero = grad["n"], grad["negative"] + grad["positive"]
            row.update(grad_negative=grad["negative"] / n, grad_zero=grad["zero"] / n,
                       grad_positive=grad["positive"] / n,
                       one_sign=max(grad["negative"], grad["positive"]) / nonzero if nonzero else np.nan)
        rows.append(row)
    return pd.DataFrame(rows, columns=cols).sort_values(["parameter", "fold"], ignore_index=True)


# Points closer than this share of the x and y spans share one label: "fold N" is about a tenth of the
# chart wide and a line of text about a fifteenth of it high, so labels nearer than that would overlap.
LABEL_NEAR_X, LABEL_NEAR_Y = 0.12, 0.07


def fold_labels(points: pd.DataFrame) -> dict:
    """The text label of each point of a final-θ chart (the Results page's
    :func:`ltr.views.drift.theta_steps_figure`, ``ltr export``'s ``theta-d-final``), by index of ``points``
    (``loss``, ``fold``, optional ``seed``, ``steps``, ``theta_final``): points that nearly coincide (runs
    that ran equally long and ended at about the same θ) are grouped, and only the group's top point is
    labelled, naming every run in it ("folds 1, 2, 3", with the loss when the group mixes losses); the
    others get "" (the page's hover still names them)."""
    if points.empty:
        return {}
    x, y = points["steps"].astype(float), points["theta_final"].astype(float)
    x_span, y_span = float(np.ptp(x)) or 1.0, float(np.ptp(y)) or 1.0
    near = (np.abs(x.values[:, None] - x.values[None, :]) / x_span <= LABEL_NEAR_X) & \
           (np.abs(y.values[:, None] - y.values[None, :]) / y_span <= LABEL_NEAR_Y)
    group = list(range(len(points)))  # single linkage: a point joins every group it is near

    def root(i: int) -> int:
        while group[i] != i:
            i = group[i]
        return i

    for i, j in zip(*np.nonzero(near)):
        group[root(int(i))] = root(int(j))
    labels = {index: "" for index in points.index}
    positions = pd.Series([root(i) for i in range(len(points))], index=points.index)
    # with several seeds a fold has a point per seed: each is named "fold (seed s)"
    seeds = "seed" in points and points["seed"].nunique() > 1
    names = pd.Series([f"{int(r['fold'])} (seed {int(r['seed'])})" if seeds and pd.notna(r["seed"])
                       else str(r["fold"]) for r in points.to_dict("records")], index=points.index)
    for _, members in points.groupby(positions):
        by_loss = members.sort_values(["fold", "seed"] if seeds else "fold").groupby("loss", sort=True).apply(
            lambda g: names[g.index].tolist(), include_groups=False)
        parts = [("fold " if len(folds) == 1 else "folds ") + ", ".join(folds) for folds in by_loss]
        text = " · ".join(f"{loss} {part}" for loss, part in zip(by_loss.index, parts)) if len(by_loss) > 1 \
            else parts[0]
        labels[members["theta_final"].astype(float).idxmax()] = text
    return labels
