"""Training: start runs (one background job per loss, fold and seed) and watch their loss parameters live."""
import datetime as dt

import streamlit as st

from core import jobs
from ltr.views import training as view
from ltr.views import charts, drift, home, reader, run_groups
from ltr.losses import LOSS_NAMES
from ltr.gbdt import GBDT_MODELS, is_gbdt_model
from ltr.rankers import RANKER_NAMES
from pages import use_app_navigation
from pages.panels.jobs import jobs_panel

use_app_navigation()

REFRESH_SECONDS = 2.0
FOLLOW_LATEST = "__latest__"

st.title("Train a ranker")
st.caption("Each run (a loss on a fold with a seed) trains in its own background job (`python -m ltr train`): "
           "closing this tab or restarting the dashboard does not stop it, and this page finds it again.")
jobs.keep_jobs_moving()

datasets = home.dataset_choices()
with st.container(border=True):
    for name, why in home.unusable_datasets():
        st.caption(f"Not offered: {name} ({why}). See the Home page's data sets table.")
    c_data, c_folds, c_loss, c_model = st.columns([2, 2, 1.5, 1.5])
    data = c_data.selectbox("Dataset", datasets,
                            index=datasets.index("synthetic-mq2008") if "synthetic-mq2008" in datasets else 0)
    folds = c_folds.multiselect("Folds", list(range(1, home.n_folds(data) + 1)), default=[1])
    model = c_model.selectbox("Ranker", [*RANKER_NAMES, *GBDT_MODELS])  # neural rankers, then LambdaMART
    tree = is_gbdt_model(model)  # LambdaMART: LightGBM's objective, no loss to choose
    losses = [] if tree else c_loss.multiselect("Losses", LOSS_NAMES, default=["learndcg"])
    if tree:
        c_loss.caption(view.tree_model_note(model))
    c = st.columns(7)
    # no min_value/max_value: the browser would keep the old value of an out-of-range entry without a
    # word; submit_training checks each field (view.TRAINING_FIELDS) and names the bad ones
    field = view.TRAINING_FIELDS
    epochs = c[0].number_input(field["epochs"].label, value=20)
    lr = c[1].number_input(field["lr"].label, value=1e-3, step=1e-4, format="%.4g", disabled=tree)
    batch_size = c[2].number_input(field["batch_size"].label, value=64, disabled=tree)
    study_slate = home.study_slate_length(data)
    slate_length = c[3].number_input(
        field["slate_length"].label, value=study_slate or 0, key=f"slate-{data}",
        help=(f"The study trains {data} with {study_slate} documents per list (allRank's setting); " if study_slate
              else "The study trains this data set on whole lists; ") + "longer lists are sub-sampled in training "
             "only. A run whose estimated peak memory exceeds 80% of what is free is refused before it starts.",
        disabled=tree)
    seed = c[4].number_input(field["seed"].label, value=0)
    n_seeds = c[5].number_input(field["n_seeds"].label, value=1,
                                help="Each loss trains on each fold once per seed; the Results page averages "
                                     "the seeds per query and shows their spread.")
    patience = c[6].number_input(field["patience"].label, value=10)
    default_executor, ray_target = view.executor_setting()
    executor = st.radio("Run on", ["local", "ray"], index=["local", "ray"].index(default_executor), horizontal=True,
                        key="executor", format_func={"local": "this machine", "ray": "Ray"}.get)
    if executor == "ray":
        st.caption(f"Each fold runs as a Ray task on {ray_target}; its metrics stream into this dashboard's "
                   "store and **Cancel** cancels the task.")
    if st.button("Start training", type="primary", disabled=not folds or not (losses or tree)):
        request = view.TrainingRequest(data=data, folds=tuple(sorted(folds)), losses=tuple(losses), model=model,
                                       epochs=int(epochs), lr=float(lr), batch_size=int(batch_size),
                                       slate_length=int(slate_length) or None, seed=int(seed),
                                       n_seeds=int(n_seeds), patience=int(patience), executor=executor)
        try:
            job_ids = view.submit_training(request)
        except ValueError as exc:  # a bad field (FormError), an invalid config (RunInputError) or no fold
            st.error(str(exc))
        else:
            st.session_state["watch"] = FOLLOW_LATEST
            what = model if tree else f"{len(losses)} loss(es)"
            st.success(f"Queued {len(job_ids)} job(s) ({what} x {len(folds)} fold(s) x "
                       f"{int(n_seeds)} seed(s)): " + ", ".join(f"#{j}" for j in job_ids))


def jobs_table(job_list):
    with reader.session_store(st.session_state) as store:
        return view.jobs_frame(store, job_list).drop(columns=["run_id"])


def concurrency_section() -> None:
    """How many jobs run at once per resource class (irdash.toml [jobs] limits, overridden here)."""
    limits = jobs.resource_limits()
    classes = ["cpu"] + [f"cuda:{i}" for i in range(home.gpu_count())]
    with st.expander("Concurrency: " + ", ".join(f"{r} {limits.get(r, jobs.default_limit(r))} at once" for r in classes)):
        st.caption("Jobs that may run at the same time on each resource (default 1; `[jobs] limits` in "
                   "irdash.toml). A change here applies to the next job the worker starts.")
        cols = st.columns(len(classes))
        for col, resource in zip(cols, classes):
            current = limits.get(resource, jobs.default_limit(resource))
            value = col.number_input(resource, value=current, key=f"limit-{resource}")
            problem = view.CONCURRENCY_RULE.problem(value)
            if problem:  # kept as it was, and said so (the widget itself would keep the old value silently)
                col.error(f"{resource}: {problem}; the limit stays {current}.")
            elif value != current:
                jobs.set_limit(resource, int(value))


def charts_section(store) -> None:
    groups = run_groups.run_groups(store)
    if not groups:
        st.info("Charts appear here once a run has started.")
        return
    by_key = {g.key: g for g in groups}
    options = [FOLLOW_LATEST] + list(by_key)
    if st.session_state.get("watch") not in options:
        st.session_state["watch"] = FOLLOW_LATEST
    choice = st.selectbox("Runs to watch", options, key="watch",
                          format_func=lambda k: f"Most recently active: {groups[0].label}" if k == FOLLOW_LATEST
                          else by_key[k].label)
    group = groups[0] if choice == FOLLOW_LATEST else by_key[choice]
    st.dataframe(run_groups.group_runs(store, group), hide_index=True, width="stretch")

    if charts.has_step_metric(store, group.run_ids, "theta_d"):
        c_param, c_layout = st.columns([3, 2])
        parameter_view = c_param.segmented_control("Loss parameter", list(charts.PARAMETER_VIEWS), default="θ_d",
                                                   key="param_view")
        layout = c_layout.segmented_control("Folds", list(charts.FOLD_LAYOUTS), default="one panel per fold",
                                            key="fold_layout",
                                            help="Folds often follow the same path: one panel per fold, or each "
                                                 "fold's change since its first step, keeps every fold visible.")
        names = charts.PARAMETER_VIEWS[parameter_view or "θ_d"]
        fold_layout = charts.FOLD_LAYOUTS[layout or "one panel per fold"]
        fig, n_points = charts.step_figure(store, group.run_ids, names, title="Loss parameters over training",
                                           **fold_layout)
        diagnostic = drift.drift_diagnostic(store, group.run_ids)
        drift.add_drift_reference(fig, store, group.run_ids, names, diagnostic=diagnostic, **fold_layout)
        st.plotly_chart(fig, key="param_chart", width="stretch")
        st.caption(f"{n_points} points (long series are downsampled) · updated {dt.datetime.now():%H:%M:%S} · "
                   "dashed: the drift reference θ₀ + (loss-parameter learning rate) × step, where Adam takes a θ "
                   "whose gradient never changes sign. A trajectory on it is drifting, not learning.")
        st.markdown("**Drift or learning?** Per run and θ: the share of logged steps whose θ gradient was "
                    "negative / zero / positive, the majority sign's share of the non-zero ones (`one_sign`), and "
                    "the final θ against the drift reference (`of_reference` ≈ ±1 or beyond: drift; a gradient "
                    "that keeps growing makes Adam overshoot it).")
        st.dataframe(diagnostic.drop(columns="run_id"), hide_index=True,
                     width="stretch")
    else:
        st.info(charts.no_parameters_message(store, group))
    left, right = st.columns(2)
    with left:
        fig, _ = charts.step_figure(store, group.run_ids, ["loss"], title="Training loss")
        st.plotly_chart(fig, key="loss_chart", width="stretch")
    with right:
        fig, _ = charts.validation_figure(store, group.run_ids, "ndcg@10")
        st.plotly_chart(fig, key="vali_chart", width="stretch")


st.subheader("Jobs")
jobs_panel(view.TRAINING, jobs_table, limit=30, every=REFRESH_SECONDS, idle_every=REFRESH_SECONDS,
           empty="No training jobs yet: choose a data set and press **Start training**.",
           cancel=view.cancel_tag, failed_logs=3,
           columns={"progress": st.column_config.ProgressColumn("progress", min_value=0.0, max_value=1.0,
                                                                format="percent"),
                    "message": st.column_config.TextColumn(width="large")})


@st.fragment(run_every=REFRESH_SECONDS)
def live() -> None:
    concurrency_section()
    st.subheader("Live trajectories")
    with reader.session_store(st.session_state) as store:
        charts_section(store)


live()
