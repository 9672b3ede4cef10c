"""Results: effectiveness against training cost, the significance table, and a per-fold drill-down."""
from functools import partial

import streamlit as st

from ltr.views import results as view
from ltr.views import drift, reader, significance
from pages import use_app_navigation

use_app_navigation()


@st.cache_data(max_entries=64, show_spinner="Running the paired t-tests...")
def significance_report(store_path: str, data: str, model: str, holm: bool, configuration: str, exclude: bool,
                        version: tuple):
    """Cached per store state (``version``): the t-tests over every pooled query take a while."""
    with reader.open_store(store_path) as store:
        return significance.significance(store, data, model, holm=holm, configuration=configuration,
                                         exclude_no_relevant=exclude)


st.title("Compare losses")

with reader.session_store(st.session_state) as store:
    options = view.result_options(store)
    failed = view.failed_runs(store)
    if options.empty:
        st.info("No completed runs yet. Train some on the **Training** page, or run a grid with "
                "`python -m ltr grid`.")
    else:
        c_data, c_model, c_k = st.columns(3)
        data = c_data.selectbox("Dataset", sorted(options["data"].unique()), format_func=view.display_name)
        model = c_model.selectbox("Ranker", view.ranker_choices(options, data))
        k = c_k.selectbox("Metric", view.NDCG_CUTOFFS, index=view.NDCG_CUTOFFS.index(10), format_func=lambda v: f"NDCG@{v}")
        every_run = view.completed_runs(store, data, model)
        choices = view.configuration_choices(every_run)
        configuration = st.selectbox(
            "Configuration (runs are compared, and folds paired, only within one)", list(choices["configuration"]),
            format_func=lambda c: f"{c}  —  {int(choices.set_index('configuration').loc[c, 'runs'])} runs")
        runs = view.runs_in_configuration(every_run, configuration)
        st.caption("Losses and folds in this configuration: "
                   + choices.set_index("configuration").loc[configuration, "losses"]
                   + (f". {len(choices) - 1} other configuration(s) are not shown." if len(choices) > 1 else "."))
        for loss, folds in view.missing_folds(runs).items():
            st.warning(f"{loss} lacks fold(s) {', '.join(map(str, folds))} in this configuration: its mean is "
                       "over fewer folds and its t-test pairs only the folds both losses have.")

        st.subheader("Effectiveness against training cost")
        table = view.cost_effectiveness(runs, k)
        st.plotly_chart(view.cost_figure(table, k, title=f"{view.display_name(data)} · {model}: test NDCG@{k} vs training time",
                                         runs=runs), width="stretch")
        st.caption(view.COST_CAPTION)
        st.dataframe(table, hide_index=True, width="stretch")

        st.subheader("Significance (paired t-test of LearnDCG against each loss)")
        holm = st.toggle("Holm correction across baselines", value=False)
        show_p = st.toggle("Show p-values", value=False)
        exclude = st.toggle("Leave queries without a relevant document out of the t-tests", value=False,
                            help="They score NDCG 1 under every loss by convention (norel=1).")
        try:
            report = significance_report(str(store.path), data, model, holm, configuration, exclude,
                                  view.results_version(runs))
        except ValueError as exc:  # ReportError: nothing to compare
            report = None
            st.warning(str(exc))
        if report is not None:
            st.dataframe(significance.significance_display(report, show_p=show_p).reset_index(), hide_index=True,
                         width="stretch", column_config={"loss": st.column_config.TextColumn("loss", width="medium",
                                                                                              pinned=True)})
            st.caption(significance.significance_legend(report))
            st.markdown("**Mean and spread** (mean over folds x seeds ± the standard deviation over seeds of the "
                        "mean each seed alone gives; fold sd: over the seed-averaged fold means)")
            st.dataframe(significance.seed_spread(report), hide_index=True, width="stretch")
            st.markdown(f"**Test NDCG@{k} per fold x seed** (the runs behind the table; the paired test pairs each "
                        "query's NDCG averaged over these seeds)")
            st.dataframe(significance.fold_seed(report, k), hide_index=True, width="stretch")
            if significance.has_tests(report):  # nothing to export while there is nothing to test
                d_csv, d_tex = st.columns(2)
                # files made on click (callables), not on every render: LaTeX goes through pandas' Styler
                d_csv.download_button("Download CSV", partial(significance.significance_csv, report),
                                      file_name=f"significance-{view.display_name(data)}-{model}.csv", mime="text/csv",
                                      on_click="ignore")
                d_tex.download_button("Download LaTeX", partial(significance.significance_latex, report),
                                      file_name=f"significance-{view.display_name(data)}-{model}.tex", mime="text/x-tex",
                                      on_click="ignore")

        points = drift.theta_vs_steps(store, runs, "theta_d")
        if not points.empty:
            st.subheader("Final θ_d against training steps")
            st.plotly_chart(drift.theta_steps_figure(points), width="stretch")
            st.dataframe(drift.fitted_slopes(points), hide_index=True, width="stretch")
            st.caption("One point per run (fold and seed) of this configuration. A slope equal to the loss-parameter "
                       "learning rate means the final θ_d is set by how many steps a run trained (drift), not by the "
                       "fold's data.")

        st.subheader("Per fold (mean over seeds)")
        st.dataframe(view.fold_table(runs, k), width="stretch")
        losses = list(table["loss"])
        chosen = st.selectbox("Drill down into a loss", losses,
                              index=losses.index("learndcg") if "learndcg" in losses else 0)
        st.dataframe(view.fold_detail(runs, chosen), hide_index=True, width="stretch")

    if not failed.empty:
        with st.expander(f"{len(failed)} failed or cancelled run(s)"):
            st.dataframe(failed, hide_index=True, width="stretch")
