"""Data and charts for the dashboard's LTR pages: DataFrames and plotly figures built from the store.

Pages only lay out widgets; everything they show comes from here, read from the run store
(:class:`ltr.store.RunStore`) and the job queue (:mod:`core.jobs`). Nothing here imports streamlit,
so every function is testable on its own and the pages stay thin.

Charts stay light with a large store: step series are downsampled in SQL by index seeks and read
incrementally on the session's store (:meth:`ltr.store.RunStore.live_step_series`), so a refresh
reads only what was logged since the last one and a figure ships at most
``len(folds) * CHART_MAX_POINTS`` points whatever the run length.

One module per page or concern (this package re-exports the public names, so pages write
``views.<name>``):

- :mod:`ltr.views.reader`: the run store as pages open it;
- :mod:`ltr.views.home`: devices, data sets and store counts for the home page;
- :mod:`ltr.views.training_jobs`: the training form's request, its jobs and the jobs table;
- :mod:`ltr.views.run_groups`: the folds of one experiment, grouped;
- :mod:`ltr.views.charts`: live step and validation figures;
- :mod:`ltr.views.results`: configurations, cost-effectiveness, per-fold tables, failed runs;
- :mod:`ltr.views.drift`: drift reference, per-run drift diagnostic, final θ against steps;
- :mod:`ltr.views.significance`: the paired t-test table as the Results page shows and exports it.
"""
from ltr.cutoffs import NDCG_CUTOFFS
from ltr.jobs import TRAINING
from ltr.views.charts import (CHART_MAX_POINTS, FOLD_COLOURS, FOLD_LAYOUTS, METRIC_TITLES, PARAMETER_VIEWS,
                              has_step_metric, no_parameters_message, step_figure, validation_figure)
from ltr.views.home import (dataset_choices, dataset_overview, gpu_count, n_folds, store_summary,
                            study_slate_length, training_device, trec_dl_status, unusable_datasets)
from ltr.views.reader import open_store, session_store
from ltr.views.drift import (add_drift_reference, drift_diagnostic, fitted_slopes, theta_steps_figure,
                             theta_vs_steps)
from ltr.views.results import (completed_runs, configuration_choices, cost_effectiveness, cost_figure, failed_runs,
                               fold_detail, fold_table, missing_folds, result_options, results_version,
                               runs_in_configuration)
from ltr.views.run_groups import RunGroup, group_runs, run_groups
from ltr.views.significance import (has_tests, significance, significance_csv, significance_display,
                                    significance_latex, significance_legend)
from ltr.views.training_jobs import (CONCURRENCY_RULE, TRAINING_FIELDS, TrainingRequest, active_job_count, executor_setting, fold_tag, jobs_frame,
                                     submit_training)

__all__ = ["CONCURRENCY_RULE", "TRAINING_FIELDS", "CHART_MAX_POINTS", "FOLD_COLOURS", "FOLD_LAYOUTS", "METRIC_TITLES", "NDCG_CUTOFFS",
           "PARAMETER_VIEWS", "RunGroup", "TRAINING", "TrainingRequest", "active_job_count", "completed_runs",
           "cost_effectiveness", "cost_figure", "dataset_choices", "dataset_overview", "executor_setting", "failed_runs", "fold_detail",
           "fold_tag", "fold_table", "gpu_count", "group_runs", "has_step_metric", "has_tests", "jobs_frame",
           "n_folds", "no_parameters_message", "open_store", "result_options", "results_version",
           "run_groups", "session_store", "significance", "significance_csv", "significance_display",
           "significance_latex", "significance_legend", "step_figure", "store_summary", "study_slate_length",
           "submit_training", "training_device", "trec_dl_status", "unusable_datasets", "validation_figure",
           "add_drift_reference", "drift_diagnostic", "fitted_slopes", "theta_steps_figure", "theta_vs_steps", "configuration_choices", "runs_in_configuration", "missing_folds"]
