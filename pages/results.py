"""Results: effectiveness against training cost, the significance table, and a per-fold drill-down."""
import streamlit as st

from ltr import views
from pages import use_app_navigation

use_app_navigation()


@st.cache_data(max_entries=64, show_spinner="Running the paired t-tests...")
def significance(store_path: str, data: str, model: str, holm: bool, version: tuple):
    """Cached per store state (``version``): the t-tests over every pooled query take a while."""
    with views.open_store(store_path) as store:
        return views.significance(store, data, model, holm=holm)


st.title("Compare losses")

with views.open_store() as store:
    options = views.result_options(store)
    failed = views.failed_runs(store)
    if options.empty:
        st.info("No completed runs yet. Train some on the **Training** page, or run a grid with "
                "`python -m ltr grid`.")
    else:
        c_data, c_model, c_k = st.columns(3)
        data = c_data.selectbox("Dataset", sorted(options["data"].unique()))
        model = c_model.selectbox("Ranker", sorted(options.loc[options["data"] == data, "model"]))
        k = c_k.selectbox("Metric", views.NDCG_CUTOFFS, index=views.NDCG_CUTOFFS.index(10), format_func=lambda v: f"NDCG@{v}")
        runs = views.completed_runs(store, data, model)

        st.subheader("Effectiveness against training cost")
        table = views.cost_effectiveness(runs, k)
        st.plotly_chart(views.cost_figure(table, k, title=f"{data} · {model}: test NDCG@{k} vs training time"),
                        width="stretch")
        st.caption("One point per loss: mean over folds, error bars one standard deviation over folds. "
                   "Training time includes NeuralLoss's surrogate pre-training.")
        st.dataframe(table, hide_index=True, width="stretch")

        st.subheader("Significance (paired t-test of LearnDCG against each loss)")
        holm = st.toggle("Holm correction across baselines", value=False)
        show_p = st.toggle("Show p-values", value=False)
        try:
            report = significance(str(store.path), data, model, holm, views.results_version(runs))
        except ValueError as exc:  # ReportError: nothing to compare
            report = None
            st.warning(str(exc))
        if report is not None:
            st.dataframe(views.significance_display(report, show_p=show_p), width="stretch")
            st.caption(views.significance_legend(report))
            d_csv, d_tex = st.columns(2)
            d_csv.download_button("Download CSV", views.significance_csv(report),
                                  file_name=f"significance-{data}-{model}.csv", mime="text/csv")
            d_tex.download_button("Download LaTeX", views.significance_latex(report),
                                  file_name=f"significance-{data}-{model}.tex", mime="text/x-tex")

        st.subheader("Per fold")
        st.dataframe(views.fold_table(runs, k), width="stretch")
        losses = list(table["loss"])
        chosen = st.selectbox("Drill down into a loss", losses,
                              index=losses.index("learndcg") if "learndcg" in losses else 0)
        st.dataframe(views.fold_detail(runs, chosen), hide_index=True, width="stretch")

    if not failed.empty:
        with st.expander(f"{len(failed)} failed or cancelled run(s)"):
            st.dataframe(failed, hide_index=True, width="stretch")
