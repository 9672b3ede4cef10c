"""Training: start runs (one background job per fold) and watch their loss parameters live."""
import datetime as dt

import streamlit as st

from core import jobs
from ltr import views
from ltr.losses import LOSS_NAMES
from ltr.rankers import RANKER_NAMES
from pages import use_app_navigation

use_app_navigation()

REFRESH_SECONDS = 2.0
FOLLOW_LATEST = "__latest__"

st.title("Train a ranker")
st.caption("Each fold trains in its own background job (`python -m ltr train`): closing this tab or "
           "restarting the dashboard does not stop it, and this page finds it again.")
views.keep_jobs_moving()

datasets = views.dataset_choices()
with st.container(border=True):
    c_data, c_folds, c_loss, c_model = st.columns([2, 2, 1.5, 1.5])
    data = c_data.selectbox("Dataset", datasets,
                            index=datasets.index("synthetic-mq2008") if "synthetic-mq2008" in datasets else 0)
    folds = c_folds.multiselect("Folds", list(range(1, views.n_folds(data) + 1)), default=[1])
    loss = c_loss.selectbox("Loss", LOSS_NAMES, index=LOSS_NAMES.index("learndcg"))
    model = c_model.selectbox("Ranker", RANKER_NAMES)
    c = st.columns(6)
    epochs = c[0].number_input("Epochs", min_value=1, max_value=10_000, value=20)
    lr = c[1].number_input("Learning rate", min_value=1e-6, max_value=1.0, value=1e-3, step=1e-4, format="%.4g")
    batch_size = c[2].number_input("Batch size (queries)", min_value=1, max_value=65_536, value=64)
    slate_length = c[3].number_input("Slate length (0 = whole lists)", min_value=0, max_value=100_000, value=0)
    seed = c[4].number_input("Seed", min_value=0, max_value=2**31 - 1, value=0)
    patience = c[5].number_input("Patience (0 = never stop early)", min_value=0, max_value=10_000, value=10)
    default_executor, ray_target = views.executor_setting()
    executor = st.radio("Run on", ["local", "ray"], index=["local", "ray"].index(default_executor), horizontal=True,
                        key="executor", format_func={"local": "this machine", "ray": "Ray"}.get)
    if executor == "ray":
        st.caption(f"Each fold runs as a Ray task on {ray_target}; its metrics stream into this dashboard's "
                   "store and **Cancel** cancels the task.")
    if st.button("Start training", type="primary", disabled=not folds):
        request = views.TrainingRequest(data=data, folds=tuple(sorted(folds)), loss=loss, model=model,
                                        epochs=int(epochs), lr=float(lr), batch_size=int(batch_size),
                                        slate_length=int(slate_length) or None, seed=int(seed),
                                        patience=int(patience), executor=executor)
        try:
            job_ids = views.submit_training(request)
        except ValueError as exc:  # an invalid config (RunInputError) or no fold
            st.error(str(exc))
        else:
            st.session_state["watch"] = FOLLOW_LATEST
            st.success(f"Queued {len(job_ids)} job(s): " + ", ".join(f"#{j}" for j in job_ids))


def jobs_section(store) -> None:
    job_list = views.ltr_jobs()
    if not job_list:
        st.info("No training jobs yet: choose a data set and press **Start training**.")
        return
    frame = views.jobs_frame(store, job_list)
    st.dataframe(frame.drop(columns=["run_id"]), hide_index=True, width="stretch",
                 column_config={"progress": st.column_config.ProgressColumn("progress", min_value=0.0, max_value=1.0,
                                                                             format="percent")})
    active = [j for j in job_list if j.active]
    if active:
        cols = st.columns(min(len(active), 4))
        for i, job in enumerate(active):
            cols[i % len(cols)].button(f"Cancel #{job.id} ({job.label})", key=f"cancel-{job.id}",
                                       on_click=jobs.cancel, args=(job.id,))
    for job in [j for j in job_list if j.status == "failed"][:3]:
        with st.expander(f"Job #{job.id} failed: {job.label}"):
            st.code(job.log_tail or "(no output)", language=None)


def charts_section(store) -> None:
    groups = views.run_groups(store)
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
    st.dataframe(views.group_runs(store, group), hide_index=True, width="stretch")

    if views.has_step_metric(store, group.run_ids, "theta_d"):
        view = st.segmented_control("Loss parameter", list(views.PARAMETER_VIEWS), default="θ_d", key="param_view")
        names = views.PARAMETER_VIEWS[view or "θ_d"]
        fig, n_points = views.step_figure(store, group.run_ids, names, title="Loss parameters over training")
        st.plotly_chart(fig, key="param_chart", width="stretch")
        st.caption(f"{n_points} points (long series are downsampled) · updated {dt.datetime.now():%H:%M:%S}")
    else:
        st.info("No learnable loss parameters logged for these runs (yet): only LearnDCG learns θ_g, θ_d, θ_α; "
                "its trajectories appear after the first logged steps.")
    left, right = st.columns(2)
    with left:
        fig, _ = views.step_figure(store, group.run_ids, ["loss"], title="Training loss")
        st.plotly_chart(fig, key="loss_chart", width="stretch")
    with right:
        fig, _ = views.validation_figure(store, group.run_ids, "ndcg@10")
        st.plotly_chart(fig, key="vali_chart", width="stretch")


@st.fragment(run_every=REFRESH_SECONDS)
def live() -> None:
    with views.open_store() as store:
        st.subheader("Jobs")
        jobs_section(store)
        st.subheader("Live trajectories")
        charts_section(store)


live()
