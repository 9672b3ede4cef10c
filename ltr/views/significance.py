"""The paired t-test table (:mod:`ltr.report`) as the Results page shows and exports it."""
from __future__ import annotations

import pandas as pd

from ltr.store import RunStore


def significance(store: RunStore, data: str, model: str, *, holm: bool = False) -> pd.DataFrame:
    """The ``ltr report`` significance table for one data set and ranker (see :mod:`ltr.report`).

    Raises :class:`ltr.report.ReportError` (a ``ValueError``) when nothing can be compared.
    """
    from ltr.report import significance_table

    return significance_table(store, data, model, holm=holm)


def significance_display(table: pd.DataFrame, *, show_p: bool = False) -> pd.DataFrame:
    """The table as the report prints it (daggers on significant baselines), p-values appended on request."""
    from ltr.report import display_table

    shown = display_table(table).set_index("loss")
    if show_p:
        p_cols = [c for c in table.columns if c.startswith("p@") or c.startswith("p_holm@")]
        shown = shown.join(table.set_index("loss")[p_cols])
    return shown


def significance_legend(table: pd.DataFrame) -> str:
    from ltr.report import ALPHA, BETTER_MARK, WORSE_MARK

    if not any(c.startswith("p@") for c in table.columns):
        return (f"Nothing to test yet: train {table.attrs.get('candidate', 'learndcg')} and at least one "
                f"baseline on the same folds. Values are means over folds.")
    holm = "Holm-corrected " if table.attrs.get("holm") else ""
    text = (f"{BETTER_MARK} / {WORSE_MARK}: {table.attrs.get('candidate', 'learndcg')} is significantly better / "
            f"worse than this loss (two-sided paired t-test over the pooled test queries of all folds, "
            f"{holm}p < {table.attrs.get('alpha', ALPHA)}). Values are means over folds.")
    if table.attrs.get("left_out"):
        text += f" {table.attrs['left_out']} older run(s) of the same loss and fold were left out (the latest is used)."
    return text


def significance_csv(table: pd.DataFrame) -> str:
    """The full table (means, differences, p-values, flags) as CSV, like ``ltr report --csv``."""
    return table.to_csv(index=False)


def significance_latex(table: pd.DataFrame) -> str:
    from ltr.report import to_latex

    return to_latex(table)
