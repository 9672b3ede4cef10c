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
# A label's width as a share of the x span, per character (from "fold N" above): a longer label, such as a
# group's or one naming seeds, reaches further and must keep further from the next one.
LABEL_CHAR_X = LABEL_NEAR_X / len("fold N")


def fold_labels(points: pd.DataFrame) -> dict:
    """The text label of each point of a final-θ chart (the Results page's
    :func:`ltr.views.drift.theta_steps_figure`, ``ltr export``'s ``theta-d-final``), by index of ``points``
    (``loss``, ``fold``, optional ``seed``, ``steps``, ``theta_final``): points that nearly coincide (runs
    that ran equally long and ended at about the same θ) are grouped, and only the group's top point is
    labelled, naming every run in it ("folds 1, 2, 3", with the loss when the group mixes losses); the
    others get "" (the page's hover still names them). Groups whose labels would still overlap (a label
    as wide as its text, :data:`LABEL_CHAR_X`) are joined until none does."""
    if points.empty:
        return {}
    x, y = points["steps"].astype(float).to_numpy(), points["theta_final"].astype(float).to_numpy()
    x = (x - x.min()) / (float(np.ptp(x)) or 1.0)  # shares of the spans
    y = (y - y.min()) / (float(np.ptp(y)) or 1.0)
    group = list(range(len(points)))  # single linkage: a point joins every group it is near

    def root(i: int) -> int:
        while group[i] != i:
            i = group[i]
        return i

    near = (np.abs(x[:, None] - x[None, :]) <= LABEL_NEAR_X) & (np.abs(y[:, None] - y[None, :]) <= LABEL_NEAR_Y)
    for i, j in zip(*np.nonzero(near)):
        group[root(int(i))] = root(int(j))
    # with several seeds a fold has a point per seed: each is named "fold (seed s)"
    seeds = "seed" in points and points["seed"].nunique() > 1
    names = [f"{int(r['fold'])} (seed {int(r['seed'])})" if seeds and pd.notna(r["seed"]) else str(r["fold"])
             for r in points.to_dict("records")]
    order = np.lexsort((points["seed"].fillna(-1).to_numpy() if seeds else np.zeros(len(points)),
                        points["fold"].to_numpy()))  # members listed by fold, then seed

    def labelled() -> dict[int, tuple[int, str]]:
        """``{group root: (position of its top point, its label)}``."""
        members: dict[int, list[int]] = {}
        for i in order:
            members.setdefault(root(int(i)), []).append(int(i))
        out = {}
        for key, rows in members.items():
            by_loss: dict[str, list[str]] = {}
            for i in sorted(rows, key=lambda i: str(points["loss"].iloc[i])):
                by_loss.setdefault(str(points["loss"].iloc[i]), []).append(names[i])
            parts = {loss: ("fold " if len(runs) == 1 else "folds ") + ", ".join(runs) for loss, runs in by_loss.items()}
            text = " · ".join(f"{loss} {part}" for loss, part in parts.items()) if len(parts) > 1 \
                else next(iter(parts.values()))
            out[key] = (max(rows, key=lambda i: y[i]), text)
        return out

    while True:  # join two groups whose labels would overlap, until none would
        drawn = labelled()
        clash = next(((a, b) for a in drawn for b in drawn if a < b
                      and abs(x[drawn[a][0]] - x[drawn[b][0]]) < LABEL_CHAR_X * max(len(drawn[a][1]), len(drawn[b][1]))
                      and abs(y[drawn[a][0]] - y[drawn[b][0]]) < LABEL_NEAR_Y), None)
        if clash is None:
            break
        group[root(clash[0])] = root(clash[1])
    labels = {index: "" for index in points.index}
    for top, text in drawn.values():
        labels[points.index[top]] = text
    return labels
