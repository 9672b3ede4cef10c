"""Issue 29, the LearnDCG side: ``ltr findings`` and ``ltr export`` on a tiny real training (LearnDCG and
ApproxNDCG, two folds of a small synthetic MQ2008-shaped set, two epochs each): the findings read the
significance table's Holm p-values and the drift diagnostic; the export writes the NDCG-vs-time scatter
and the θ_d trajectories as SVG (text kept as text) and PDF, and a booktabs table whose caption carries
the training configuration."""
from __future__ import annotations

import hashlib
import json
import re
import xml.etree.ElementTree as ET

import pytest

from core.export import latex_document
from core.findings import FAILS, INCONCLUSIVE, UNMEASURABLE
from tests.ltr.support import one_torch_thread
from tests.support.latex import PDFLATEX, compile_tex

EXPERIMENT = "paper-tiny"


@pytest.fixture(scope="module")
def trained(tmp_path_factory):
    from ltr.data.synthetic import write_synthetic
    from ltr.train import RunConfig
    from ltr.train.inprocess import train_runs

    folder = tmp_path_factory.mktemp("tiny") / "mq2008-like"
    write_synthetic("synthetic-mq2008", folder, seed=3, n_queries=90)
    with one_torch_thread():
        configs = [RunConfig(data=str(folder), fold=fold, loss=loss, model="mlp", epochs=2, batch_size=16, seed=0,
                             patience=0, experiment=EXPERIMENT, device="cpu")
                   for fold in (1, 2) for loss in ("learndcg", "approxndcg")]
        store_path = tmp_path_factory.mktemp("store") / "runs.sqlite"
        outcomes = train_runs(configs, store_path)
    assert all(o.status == "completed" for o in outcomes), outcomes
    return str(folder), store_path


def _cli_json(capsys, argv):
    from ltr import cli

    assert cli.main(argv) == 0, capsys.readouterr().err
    return json.loads(capsys.readouterr().out)


def test_ltr_findings_read_the_report_and_the_drift_diagnostic(trained, capsys):
    from ltr.drift import drift_diagnostic
    from ltr.findings import TEST, check_findings
    from ltr.report.paired import significance_table
    from ltr.store import RunStore

    data, store_path = trained
    printed = _cli_json(capsys, ["findings", "--experiment", EXPERIMENT, "--store", str(store_path), "--json"])
    with RunStore(store_path) as store:
        result = check_findings(store, EXPERIMENT)
        table = significance_table(store, data, "mlp", experiment=EXPERIMENT, holm=True).set_index("loss")
        runs = store.list_runs(experiment=EXPERIMENT, loss="learndcg")
        diag = drift_diagnostic(store, list(runs["run_id"]))
    highest = result["findings"]["learndcg_highest"]
    assert "Holm" in TEST and highest.definitions["test"] == TEST and len(highest.parts) == 4
    for part in highest.parts:
        k = part.measured["k"]
        assert part.measured["p_holm"]["approxndcg"] == pytest.approx(table.loc["approxndcg", f"p_holm@{k}"])
        # 2 folds of 90 synthetic queries pool fewer test queries than the claim's minimum: no verdict
        n_test = table.loc["learndcg", "queries"]
        assert part.evidence["n"] == n_test < part.evidence["minimum_n"] and part.verdict == INCONCLUSIVE
        assert f"n = {n_test} paired queries (2 folds × 1 seed)" in part.reason
    assert highest.verdict == INCONCLUSIVE and highest.rule["min_queries"] == part.evidence["minimum_n"]
    theta = result["findings"]["theta_d_fold_specific"].parts[0]
    # the folds are compared at the tested checkpoint (the trainer records the loss parameters per epoch), the last
    # step's values (the drift diagnostic's) beside them
    runs_measured = [r for f in theta.measured["per_fold"].values() for r in f["seeds"].values()]
    tested = [r["theta_d_tested"] for r in runs_measured]
    assert theta.measured["read_at"] == "tested checkpoint"
    assert theta.measured["theta_d_range"] == pytest.approx(max(tested) - min(tested), abs=1e-6)
    finals = diag[diag["parameter"] == "theta_d"]["theta_final"]
    assert sorted(r["theta_d_final"] for r in runs_measured) == pytest.approx(sorted(finals))
    # one seed: the seed-to-seed spread is unknown, so fold-specificity cannot be told (unless a run drifted)
    assert set(theta.measured["per_fold"]) == {1, 2} and theta.verdict in (INCONCLUSIVE, FAILS)
    neural = result["findings"]["neuralloss_vs_learndcg"]
    assert neural.verdict == UNMEASURABLE and "neuralloss not trained" in neural.reason
    (ranking,) = result["cost_ranking"].values()
    assert [r["loss"] for r in ranking] and sorted(r["minutes_mean"] for r in ranking) == [r["minutes_mean"] for r in ranking]
    assert printed["findings"]["learndcg_highest"] == highest.to_dict() and printed["test"] == TEST
    assert printed["cost_ranking"] == result["cost_ranking"]
    assert highest.rests_on[0]["run_ids"] == sorted(runs["run_id"].tolist() + store_ids(store_path, "approxndcg"))


def test_ltr_findings_text_fits_100_columns_and_verbose_holds_every_reason(trained, capsys):
    """Issue 40: the text output was one line of 1,000+ characters per part. Now a line per finding (verdict,
    n, reason cut) and per part (verdict, n, test), none over 100 columns; --verbose wraps everything whole."""
    from ltr import cli

    _, store_path = trained
    argv = ["findings", "--experiment", EXPERIMENT, "--store", str(store_path)]
    printed = _cli_json(capsys, [*argv, "--json"])["findings"]
    assert cli.main(argv) == 0
    lines = capsys.readouterr().out.splitlines()
    assert max(map(len, lines)) <= 100
    parts = sum(len(f["parts"]) for f in printed.values())
    # the experiment line, one per finding and per part, the cost ranking and its convention, the hint
    assert len(lines) == 1 + len(printed) + parts + 2 + 1
    assert any(line.startswith("learndcg_highest: inconclusive (n = ") for line in lines)
    assert cli.main([*argv, "--verbose"]) == 0
    verbose = capsys.readouterr().out
    assert max(map(len, verbose.splitlines())) <= 100
    joined = "".join(verbose.split())
    for finding in printed.values():
        assert "".join(finding["reason"].split()) in joined
        assert all("".join(p["reason"].split()) in joined for p in finding["parts"])


def store_ids(store_path, loss):
    from ltr.store import RunStore

    with RunStore(store_path) as store:
        return store.list_runs(experiment=EXPERIMENT, loss=loss)["run_id"].tolist()


def test_ltr_export_writes_scatter_and_theta_as_svg_and_pdf_and_a_captioned_table(trained, tmp_path, capsys):
    data, store_path = trained
    out = tmp_path / "paper"
    manifest = _cli_json(capsys, ["export", "--data", data, "--model", "mlp", "--experiment", EXPERIMENT,
                                  "--out", str(out), "--store", str(store_path), "--json"])
    names = {p.name for p in out.iterdir()}
    for stem in ("ndcg-vs-time", "theta-d-trajectories"):
        assert {f"{stem}.svg", f"{stem}.pdf", f"{stem}.png"} <= names
        svg = ET.parse(out / f"{stem}.svg")
        texts = " ".join("".join(t.itertext()) for t in svg.iter("{http://www.w3.org/2000/svg}text"))
        # issue 33: a short title naming the data by its name (the folder's), never the path; the
        # configuration is in the caption (the figure's .tex, the manifest, the PDF's metadata)
        assert "mq2008-like · mlp" in texts and "epochs=2" not in texts and "/tmp" not in texts and data not in texts
        caption = (out / f"{stem}.tex").read_text()
        for part in ("mq2008-like / mlp", "epochs=2", "seed=0", "folds 1, 2", rf"\label{{fig:{stem}}}"):
            assert part in caption, part
        assert data not in caption
        pdf = (out / f"{stem}.pdf").read_bytes()
        assert pdf.startswith(b"%PDF-") and len(re.findall(rb"/Type\s*/Page\b", pdf)) == 1
    assert "fold 1" in "".join(ET.parse(out / "theta-d-trajectories.svg").getroot().itertext())
    tex = (out / "significance.tex").read_text()
    assert r"\toprule" in tex and r"\bottomrule" in tex
    caption = re.search(r"\\caption\{(.*)\}", tex).group(1)
    for part in ("mlp", "epochs=2", "lr=0.001", "seed=0", "folds 1, 2", "paired t-test", "Holm"):
        assert part in caption, part
    assert data not in tex and "mq2008-like / mlp" in caption
    # † and ‡ are explained under the table; p-values print as a paper prints them
    assert r"$^\dagger$ LearnDCG significantly better than this loss, $^\ddagger$ significantly worse" in tex
    assert r"\label{tab:significance}" in tex
    assert manifest == json.loads((out / "manifest.json").read_text()) | {"created": manifest["created"]}
    assert manifest["experiment"] == EXPERIMENT and len(manifest["run_ids"]) == 4
    assert {f["file"] for f in manifest["files"]} == names - {"manifest.json"}
    # the sha256 of every LETOR file the runs read: train, vali, test of folds 1 and 2
    assert manifest["data"] == "mq2008-like" and manifest["data_as_runs_name_it"] == data
    letor = [item for item in manifest["inputs"] if item["role"] == "letor"]
    assert sorted((item["fold"], item["split"]) for item in letor) == sorted(
        (fold, split) for fold in (1, 2) for split in ("train", "vali", "test"))
    for item in letor:
        assert item["sha256"] == hashlib.sha256(open(item["path"], "rb").read()).hexdigest()
    if not PDFLATEX:
        pytest.skip("pdflatex/pdftotext not installed: the .tex files were not compiled")
    compiled = compile_tex(out, "preview.tex")  # every table and figure, as a paper includes them
    assert compiled.overfull(10) == [] and compiled.too_large() == []
    # issue 40: no table scaled (theta-d-drift was set at 45%) and no type under \footnotesize
    assert compiled.publishable() == [] and {t["table"] for t in compiled.tables()} >= {
        "tab:significance", "tab:cost", "tab:theta-d-drift", "tab:findings"}
    # every figure's type at least 8 pt where it is set (ndcg-vs-time was drawn 7.5 in wide and set at x0.64)
    assert "ndcg-vs-time.pdf" in {f["figure"] for f in compiled.figures()}
    assert data not in compiled.text()
    assert not [f for f in out.glob("*.tex") if re.search(r"0\.0{6,}", f.read_text())]  # no p as 0.0000000...


def test_ltr_report_latex_caption_carries_the_configuration_and_the_test(trained, tmp_path):
    """``ltr report --latex`` and the Results page's LaTeX download (``ltr.report.text.to_latex``) name data,
    ranker, epochs, learning rate, seed, folds, test and correction in the caption (issue 29)."""
    from ltr.report.paired import significance_table
    from ltr.report.text import to_latex
    from ltr.store import RunStore

    data, store_path = trained
    with RunStore(store_path) as store:
        plain = to_latex(significance_table(store, data, "mlp", experiment=EXPERIMENT))
        holm = to_latex(significance_table(store, data, "mlp", experiment=EXPERIMENT, holm=True))
    caption = re.search(r"\\caption\{(.*)\}", plain).group(1)
    for part in ("mlp", "mean over 2 folds", "epochs=2", "lr=0.001", "seed=0", "paired t-test",
                 "no multiple-comparison correction", "alpha = 0.05"):
        assert part in caption, part
    assert "Holm-corrected across the baselines" in holm
    # issue 33: the caption says what † and ‡ mean, through the one escaping function
    assert r"$^\dagger$/$^\ddagger$: learndcg significantly better/worse than this loss" in holm
    # issue 40: set by the exports' one table writer and held to the same checks (it was pandas' own LaTeX)
    if PDFLATEX:
        (tmp_path / "report.tex").write_text(holm)
        (tmp_path / "preview.tex").write_text(latex_document(["report.tex"]))
        compiled = compile_tex(tmp_path, "preview.tex")
        (table,) = compiled.tables()
        assert table["table"].startswith("tab:significance-") and table["table"].endswith("-mlp")
        assert compiled.publishable() == [] and compiled.overfull() == []


def test_ltr_findings_of_an_unknown_experiment_is_bad_input(trained, capsys):
    from ltr import cli

    assert cli.main(["findings", "--experiment", "nope", "--store", str(trained[1])]) == cli.EXIT_BAD_INPUT
    assert "no completed runs in experiment 'nope'" in capsys.readouterr().err


def test_the_manifest_hashes_the_users_own_letor_file_not_only_its_folds(tmp_path):
    """Issue 40: for ``FILE.txt:folds=3`` only the fold files derived in the cache were hashed, so the
    manifest could not say which file of the user's the runs read."""
    from core.export import Export
    from ltr.data.synthetic import write_synthetic
    from ltr.export import letor_inputs

    folder = tmp_path / "generated"
    write_synthetic("synthetic-mq2008", folder, seed=1, n_queries=30)
    mine = tmp_path / "my-letor.txt"
    mine.write_bytes(b"".join((folder / "Fold1" / f"{s}.txt").read_bytes() for s in ("train", "vali", "test")))
    export = Export(tmp_path / "out", {})
    letor_inputs(export, f"{mine}:folds=3", [1, 2])
    (source,) = [i for i in export.inputs if i["role"] == "letor source"]
    assert source["path"] == str(mine.resolve()) and (source["folds"], source["seed"]) == (3, 0)
    assert source["sha256"] == hashlib.sha256(mine.read_bytes()).hexdigest()
    assert len([i for i in export.inputs if i["role"] == "letor"]) == 6  # the derived fold files, as before
