"""Data and charts for the dashboard's LTR pages: DataFrames and plotly figures built from the store.

Pages only lay out widgets; everything they show comes from here, read from the run store
(:class:`ltr.store.RunStore`) and the job queue (:mod:`core.jobs`). Nothing here imports streamlit,
so every function is testable on its own and the pages stay thin.

Charts stay light with a large store: step series are downsampled in SQL by index seeks and read
incrementally on the session's store (:meth:`ltr.store.RunStore.live_step_series`), so a refresh
reads only what was logged since the last one and a figure ships at most
``len(folds) * CHART_MAX_POINTS`` points whatever the run length.

One module per page, named after it (``home``, ``training``, ``results``), or per concern the pages share.
A page imports its own module as ``view`` (``from ltr.views import training as view``) and a shared one
under its own name; this package re-exports nothing (a re-exported ``run_groups`` or ``significance``
function would hide the module of that name):

- :mod:`ltr.views.reader`: the run store as pages open it;
- :mod:`ltr.views.home`: devices, data sets and store counts for the home page;
- :mod:`ltr.views.training`: the Training page: the form's request, its jobs and the jobs table;
- :mod:`ltr.views.run_groups`: the folds of one experiment, grouped;
- :mod:`ltr.views.charts`: live step and validation figures;
- :mod:`ltr.views.results`: configurations, cost-effectiveness, per-fold tables, failed runs;
- :mod:`ltr.views.drift`: drift reference, per-run drift diagnostic, final θ against steps;
- :mod:`ltr.views.significance`: the paired t-test table as the Results page shows and exports it.
"""
