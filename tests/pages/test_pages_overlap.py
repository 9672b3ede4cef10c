"""The "Failure overlap" page (AppTest) on the designed study, and its view module."""
from __future__ import annotations

import json
import os
import shutil

import pytest
from streamlit.testing.v1 import AppTest

from core import jobs
from pipeline.views import failure_overlap as view
from pipeline.sets.rule import SetSummary, hard_set
from pipeline.judging.judgments import DEFAULT_CAP
from pipeline.study.jobs import study_command, study_link
from tests.support.failure_fixture import TOPICS, run_designed_study, write_data_folder
from tests.pages.support import page_alone
from tests.support.paths import ROOT

PAGE = str(ROOT / "pages" / "failure-overlap.py")
LABEL = "designed-run | designed-answers | designed-judge | binary"


@pytest.fixture(scope="module")
def designed_study_file(tmp_path_factory):
    """The designed study, computed once (real MiniLM BERTScore) into its own cache."""
    cache_dir = tmp_path_factory.mktemp("study-cache")
    old = os.environ.get("IRDASH_CACHE_DIR")
    os.environ["IRDASH_CACHE_DIR"] = str(cache_dir)
    try:
        study = run_designed_study(tmp_path_factory.mktemp("designed"))
    finally:
        os.environ["IRDASH_CACHE_DIR"] = old
    return cache_dir / "failure" / "designed" / "studies" / f"{study['id']}.json"


@pytest.fixture
def with_study(cache, designed_study_file):
    target = cache / "failure" / "designed" / "studies" / designed_study_file.name
    target.parent.mkdir(parents=True)
    shutil.copy(designed_study_file, target)
    return target


def _page() -> AppTest:
    return page_alone("failure-overlap", timeout=90)


def test_page_without_study(cache):
    at = _page()
    assert at.title[0].value == "Failure overlap"
    assert "No study yet" in at.info[0].value


def test_page_shows_venn_tables_and_region_queries(with_study):
    at = _page()
    assert at.selectbox(key="study_dataset").value == "designed"
    assert [s.value for s in at.selectbox[3:7]] == ["designed-run", "designed-answers", "designed-judge", "binary"]
    assert len(at.get("plotly_chart")) == 1  # the clickable Venn diagram
    summary = at.dataframe[0].value.set_index("figure")
    assert summary.loc["hard in all three", "queries"] == 1 and summary.loc["hard in all three", "share"] == "12.5% (1 of 8)"
    regions = at.dataframe[1].value.set_index("region")
    assert regions.loc["all three", "queries"] == 1 and regions["queries"].sum() == 4  # q1, q6, q7, q8
    pairs = at.dataframe[2].value
    assert pairs["overlap"].tolist() == [1, 1, 1]
    assert not at.warning  # no 135M model in this configuration
    # click through: the H2R-only region holds q7, whose query and passage are hostile HTML shown as text
    at.radio[0].set_value("h2r").run()
    # passages collapsed, with their count and grades in the heading
    assert [e.label for e in at.expander if e.label.startswith("Relevant passages")] == [
        "Relevant passages with text: 1 (grade 3: 1), highest grade first"]
    assert not at.exception
    queries = at.dataframe[3].value
    assert queries["qid"].tolist() == ["q7"] and queries.loc[0, "query"] == TOPICS["q7"]
    assert queries.loc[0, "nDCG@10"] == 0.0
    texts = [t.value for t in at.text]
    assert TOPICS["q7"] in texts and "<script>alert('x')</script> tags are <b>HTML</b> markup elements." in texts
    at.radio[0].set_value("h2r&h2g&h2j").run()
    assert at.dataframe[3].value["qid"].tolist() == ["q8"]
    stability = at.dataframe[-1].value
    assert len(stability) == 2 and set(stability["largest pair"]) <= {"H2R ∩ H2G (incl. H2J)", "H2R ∩ H2J (incl. H2G)",
                                                              "H2G ∩ H2J (incl. H2R)"}


def test_page_pairs_a_further_task_and_says_the_venn_is_the_papers(with_study):
    """A study with a fourth task (composed here from the designed study's values and a planted task, as
    run_study composes one) shows its pairs in the pairwise table and says the diagram is the paper's three."""
    from pipeline.study.result import Components, StudyResult
    from pipeline.study.run import combine, configuration_result, read_tasks
    from pipeline.study.task import HARDER, PerQueryValues, TaskResult

    study = StudyResult.from_dict(json.loads(with_study.read_text()))
    c, tasks = study.configurations[LABEL].components, read_tasks(study)
    planted = PerQueryValues("planted", "designed", "oracle", "planted score", HARDER,
                             {f"q{i}": v for i, v in enumerate([.1, .2, .3, .4, .5, .6, .9, .8], start=1)})
    chosen = {"h2r": tasks["h2r"].get(c.retriever), "h2g": tasks["h2g"].get(c.generator),
              "h2j": tasks["h2j"].get(c.judge, c.setup), "planted": planted}
    components = Components(c.retriever, c.generator, c.judge, c.setup, (("planted", "oracle"),))
    sets = combine(study.dataset, components.to_dict(), {t: v.values for t, v in chosen.items()}, {}, study.quantile,
                   universe=study.universe_rule, n_judged=len(study.queries), top={"h2j", "planted"})
    study.configurations = {components.label: configuration_result(components, chosen, sets)}
    study.further_tasks = {"planted": TaskResult("planted", "predictor", "designed", study.quantile, "", [planted])}
    with_study.write_text(json.dumps(study.to_dict()))
    at = _page()
    assert [s.value for s in at.selectbox[3:7]] == ["designed-run", "designed-answers", "designed-judge", "binary"]
    assert at.dataframe[1].value.set_index("region").loc["all three", "queries"] == 1  # the paper's regions
    pairs = at.dataframe[2].value
    assert pairs["pair"].tolist()[3:] == ["H2R ∩ PLANTED", "H2G ∩ PLANTED", "H2J ∩ PLANTED"]
    assert pairs["overlap"].tolist() == [1, 1, 1, 2, 1, 1]
    assert any("are the paper's three sets (H2R, H2G, H2J)" in c.value and "PLANTED" in c.value for c in at.caption)


def test_page_warns_about_a_135m_configuration(with_study):
    study = json.loads(with_study.read_text())
    study["configurations"][LABEL]["note"] = "generator from a 135M model: exercises the pipeline, not a finding"
    with_study.write_text(json.dumps(study))
    at = _page()
    assert "not a finding" in at.warning[0].value


def cli_default_cap() -> int:
    from pipeline.cli import build_parser

    return build_parser().parse_args(["h2j", "--qrels", __file__, "--judge", "j"]).cap  # --qrels: an existing file


def test_page_reports_set_sizes_and_warns_when_ties_decide(with_study):
    at = _page()
    captions = [c.value for c in at.caption]
    # designed study: 8 queries, target floor(7 * 0.25) + 1 = 2, every set 2 of 8 without a tie decision
    assert "Hard to judge: 2 of 8 queries (25%); threshold 0.25, target 2, tie block of 2 at 1" in captions
    assert any("0 of 8 answered queries have only some" in c for c in captions)
    assert not at.warning
    # a capped judge's shares: 1 above a block of 5 at 0.5 (target 2): sizes 1 or 6 -> 1, the block left out
    study = json.loads(with_study.read_text())
    config = study["configurations"][LABEL]
    shares = dict(zip([f"q{i}" for i in range(1, 9)], [1.0, 0.5, 0.5, 0.5, 0.5, 0.5, 0.0, 0.0]))
    config["set_info"]["h2j"] = SetSummary.of(hard_set(shares, 0.25, "h2j", top=True)).to_dict()
    with_study.write_text(json.dumps(study))
    at = _page()
    (warning,) = [w.value for w in at.warning]
    assert warning.startswith("Hard to judge: ties decide membership.") and "5 queries tie at 0.5" in warning
    assert "left out" in warning and "1 of 8" in warning


def _text_input(at, label):
    return next(t for t in at.text_input if t.label == label)


def test_start_run_queues_exactly_the_chosen_judges(with_study):
    at = _page()
    _text_input(at, "LLM judge (LLM spec, empty for none)").set_value("embedded")
    next(n for n in at.number_input if n.label == "Queries (0 = all)").set_value(5)
    next(b for b in at.button if b.label == "Start").click().run()
    assert not at.exception
    (job,) = jobs.list_jobs()
    assert job.command[1:4] == ["-m", "pipeline", "run"] and job.meta["kind"] == view.STUDY.name
    judges = [job.command[i + 1] for i, c in enumerate(job.command) if c == "--judge"]
    assert judges == ["embedded"]  # no data folder here: nothing imported was added silently
    assert job.command[job.command.index("--max-queries") + 1] == "5"
    study_id = job.command[job.command.index("--study-id") + 1]
    assert job.meta["study_id"] == study_id == job.meta["progress"]
    # the page's cap is the one default (pipeline.judging.judgments.DEFAULT_CAP), as the CLI's
    assert job.command[job.command.index("--cap") + 1] == str(DEFAULT_CAP) == str(cli_default_cap())
    assert job.command[job.command.index("--partial-references") + 1] == "exclude" and job.status == "queued"
    assert next(b for b in at.button if b.label == "Start").disabled  # one study run at a time
    # the queued job says why it waits (the cpu limit is 0 in these tests)
    frame = view.jobs_frame(jobs.list_jobs())
    assert frame.loc[0, "status"] == "queued" and "limit is 0" in frame.loc[0, "progress"]


def test_no_judge_chosen_is_refused_with_a_message(with_study):
    at = _page()
    next(b for b in at.button if b.label == "Start").click().run()
    assert not jobs.list_jobs() and "choose at least one judge" in at.error[0].value


def test_a_running_study_replaces_no_study_yet(cache):
    view.submit_study("dl19", None, generator="auto", llm_judge="embedded")
    at = _page()
    assert "A study is running" in at.info[0].value and not any("No study yet" in i.value for i in at.info)


def test_study_command_uses_the_data_folder_judgments(shared_dir):
    folder = shared_dir / "data" / "trec_dl"
    if not folder.is_dir():
        pytest.skip("no shared TREC DL folder")
    assert view.imported_judges("dl20", folder) == ["flan-t5-large", "llama-3.3-70b"]
    command = study_command("dl20", folder, generator="embedded", imported_judges=["llama-3.3-70b"],
                                 llm_judge="embedded", cap=3)
    judges = [command[i + 1] for i, c in enumerate(command) if c == "--judge"]
    assert judges == ["llama-3.3-70b", "embedded"]  # only what was chosen
    command = study_command("dl20", folder, generator="embedded", llm_judge="embedded", cap=3)
    assert [command[i + 1] for i, c in enumerate(command) if c == "--judge"] == ["embedded"]
    with pytest.raises(ValueError, match="no judgments file for nope"):
        study_command("dl20", folder, generator="embedded", imported_judges=["nope"])


def test_study_command_uses_the_data_folder_answers(shared_dir):
    folder = shared_dir / "data" / "trec_dl"
    assert view.imported_generators("dl19", folder) == ["gpt-4o-mini", "text-davinci-003"]
    command = study_command("dl19", folder, imported_generators=["text-davinci-003"], imported_judges=["llama-3.3-70b"])
    assert [command[i + 1] for i, c in enumerate(command) if c == "--generator"] == ["text-davinci-003"]
    with pytest.raises(ValueError, match="no answers file for nope"):
        study_command("dl19", folder, imported_generators=["nope"], imported_judges=["llama-3.3-70b"])
    with pytest.raises(ValueError, match="choose at least one generator"):
        study_command("dl19", folder, imported_judges=["llama-3.3-70b"])


@pytest.fixture
def data_folder(cache, tmp_path, monkeypatch):
    """The designed collection as the configured DL19 data folder (runs, judgments, two answers files, models.tsv)."""
    folder = write_data_folder(tmp_path / "trec_dl")
    monkeypatch.setenv("IRDASH_DATA_TREC_DL", str(folder))
    return folder


def test_the_form_offers_the_folders_answers_and_queues_a_run_without_an_llm(data_folder):
    at = _page()
    answers = next(m for m in at.multiselect if m.label == "Imported answers")
    assert answers.options == ["designed-answers", "other-answers"] and answers.value == answers.options
    assert _text_input(at, view.forms.STUDY_GENERATOR.label).value == ""  # answers files: no LLM by default
    assert "--judge designed-judge` runs on the data folder's runs, answers" in at.info[0].value  # the hint
    next(b for b in at.button if b.label == "Start").click().run()
    assert not at.exception and not at.error
    (job,) = jobs.list_jobs()
    assert [job.command[i + 1] for i, c in enumerate(job.command) if c == "--generator"] == answers.options
    assert [job.command[i + 1] for i, c in enumerate(job.command) if c == "--judge"] == ["designed-judge"]


def test_a_configuration_already_stored_is_not_queued_again(data_folder):
    from pipeline.study import store
    from pipeline.study.jobs import study_config

    options = dict(imported_generators=["designed-answers"], imported_judges=["designed-judge"])
    configuration = study_config("dl19", data_folder, **options).with_default_components().stored()
    stored = {"id": "20261201T000000Z-00000000-0000", "dataset": "dl19", "configuration": configuration,
              "time": "2026-12-01T00:00:00Z", "finished": "2026-12-01T00:01:00Z", "configurations": {}}
    store.save_study(stored)
    with pytest.raises(view.AlreadyStored) as refused:
        view.submit_study("dl19", data_folder, **options)
    assert refused.value.link == study_link("dl19", stored["id"]) and not jobs.list_jobs()
    # with an LLM component it is queued: its run may retry failed calls (and stores nothing if all is the same)
    assert view.submit_study("dl19", data_folder, generator="embedded", **options)


@pytest.fixture
def two_studies(with_study):
    """The designed study and a later copy whose H2R set lost q7 (as if a second retriever run differed)."""
    study = json.loads(with_study.read_text())
    later = json.loads(with_study.read_text())
    later["id"] = study["id"][:4] + "1231T235959Z" + study["id"][16:]
    later["time"] = "2099-12-31T23:59:59Z"
    config = later["configurations"][LABEL]
    config["sets"]["h2r"] = ["q8"]
    config["analysis"]["sizes"]["h2r"] = 1
    path = with_study.parent / f"{later['id']}.json"
    path.write_text(json.dumps(later))
    return study, later


def test_two_studies_listed_newest_first_compared_and_deleted_with_confirmation(two_studies):
    first, later = two_studies
    at = _page()
    chosen = at.selectbox(key="study-designed")
    assert chosen.options[0].endswith(later["id"]) and chosen.value == later["id"]  # newest by default
    assert "2099-12-31 23:59 UTC" in chosen.options[0]  # a readable date
    compare = at.selectbox(key="compare-designed")
    assert compare.value == first["id"]
    counts = next(d.value for d in at.dataframe if "figure" in d.value and "|H2R|" in set(d.value["figure"]))
    row = counts.set_index("figure").loc["|H2R|"]
    assert (row["first"], row["second"], row["difference"]) == (1, 2, 1)  # later (first column) has 1, the other 2
    differences = at.dataframe[-1].value.set_index("task")
    assert differences.loc["H2R", "only in second"] == "q7" and differences.loc["H2R", "in both"] == 1
    # delete: asks first, cancel keeps it, confirm removes it
    next(b for b in at.button if b.label == "Delete study…").click().run()
    assert "cannot be undone" in at.warning[-1].value
    next(b for b in at.button if b.label == "Cancel").click().run()
    assert len(list(view.list_studies("designed"))) == 2
    next(b for b in at.button if b.label == "Delete study…").click().run()
    next(b for b in at.button if b.label == "Yes, delete it").click().run()
    assert not at.exception
    assert [s["id"] for s in view.list_studies("designed")] == [first["id"]]
    assert at.selectbox(key="study-designed").value == first["id"]


def test_a_job_row_links_to_its_study_and_the_link_selects_it(two_studies):
    first, _ = two_studies
    at = AppTest.from_file(PAGE, default_timeout=90)
    at.query_params["dataset"] = "designed"
    at.query_params["study"] = first["id"]
    at.run()
    assert not at.exception and at.selectbox(key="study-designed").value == first["id"]
    assert study_link("designed", first["id"]) == f"/failure-overlap?dataset=designed&study={first['id']}"


def test_venn_regions_are_clickable_traces(designed_study_file):
    analysis = json.loads(designed_study_file.read_text())["configurations"][LABEL]["analysis"]
    fig = view.venn_plotly(analysis)
    clickable = {t.name: t for t in fig.data if t.customdata is not None}
    assert set(clickable) == set(view.VENN_ORDER)
    assert all(set(t.customdata) == {name} and len(t.x) >= 1 for name, t in clickable.items())
    assert view.region_from_selection({"points": [{"customdata": ["h2j"], "x": 0, "y": 0}]}) == "h2j"
    assert view.region_from_selection({"points": []}) is None
    assert view.venn_png(analysis)[:8] == b"\x89PNG\r\n\x1a\n"  # the matplotlib-venn export
