"""The paired t-test table (:mod:`ltr.report`) as the Results page shows and exports it."""
from __future__ import annotations

import pandas as pd

from ltr.store import RunStore


def significance(store: RunStore, data: str, model: str, *, holm: bool = False, configuration: str | None = None,
                 exclude_no_relevant: bool = False) -> pd.DataFrame:
    """The ``ltr report`` significance table for one data set, ranker and configuration (see
    :mod:`ltr.report`: folds of different configurations are never paired).

    Raises :class:`ltr.report.runs.ReportError` (a ``ValueError``) when nothing can be compared.
    """
    from ltr.report.paired import significance_table

    return significance_table(store, data, model, holm=holm, configuration=configuration,
                              exclude_no_relevant=exclude_no_relevant)


def significance_display(table: pd.DataFrame, *, show_p: bool = False) -> pd.DataFrame:
    """The table as the report prints it (daggers on significant baselines), p-values appended on request."""
    from ltr.report.text import display_table

    shown = display_table(table)  # row for row the table's, losses by their table labels
    if show_p:
        for column in [c for c in table.columns if c.startswith("p@") or c.startswith("p_holm@")]:
            shown[column] = table[column].to_numpy()
    return shown.set_index("loss")


def has_tests(table: pd.DataFrame) -> bool:
    """Whether the table holds any test (p-values): without one there is nothing to export."""
    return any(c.startswith("p@") for c in table.columns)


def significance_legend(table: pd.DataFrame) -> str:
    from ltr.report.paired import ALPHA
    from ltr.report.text import BETTER_MARK, WORSE_MARK

    if not has_tests(table):
        return (f"Nothing to test yet: train {table.attrs.get('candidate', 'learndcg')} and at least one "
                f"baseline on the same folds. Values are means over folds.")
    from ltr.report.text import table_notes, test_description

    seeds = len(table.attrs.get("seeds") or [])
    over = f"folds x {seeds} seeds (the mean over folds of each fold's mean over seeds)" if seeds > 1 else "folds"
    text = (f"{BETTER_MARK} / {WORSE_MARK}: {table.attrs.get('candidate', 'learndcg')} is significantly better / "
            f"worse than this loss ({test_description(table)}). Values are means over {over}.")

    return " ".join([text, *(n[0].upper() + n[1:] + "." for n in table_notes(table))])


def seed_spread(table: pd.DataFrame) -> pd.DataFrame:
    """Per loss: folds, seeds, runs, ``mean ± seed sd`` per k and the folds' spread (:func:`ltr.report.text.spread_table`)."""
    from ltr.report.text import spread_table

    return spread_table(table)


def fold_seed(table: pd.DataFrame, k: int = 10) -> pd.DataFrame:
    """Test NDCG@k of every compared run, a row per (loss, fold), a column per seed, and the fold's mean over
    seeds (:func:`ltr.report.text.fold_seed_table`)."""
    from ltr.report.text import fold_seed_table

    return fold_seed_table(table, k)


def significance_csv(table: pd.DataFrame) -> str:
    """The full table (means, differences, p-values, flags) as CSV, like ``ltr report --csv``."""
    return table.to_csv(index=False)


def significance_latex(table: pd.DataFrame) -> str:
    from ltr.report.text import to_latex

    return to_latex(table)
