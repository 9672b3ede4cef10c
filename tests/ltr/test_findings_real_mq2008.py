"""``ltr findings`` and ``ltr export`` on real LETOR data: the shared MQ2008 sample's first 40 queries, split into
4 folds by query, two folds trained for 2 epochs with LearnDCG as the study grid configures it
(``[loss_params.learndcg] normalisation = "standard"``) and ApproxNDCG. Its table row is then the variant
``learndcg(normalisation=standard)``: the findings read "no learndcg runs in this configuration" for the study's
own settings before they tested the row the report tested. Skips where ``../shared`` is absent."""
from __future__ import annotations

import pytest

from core.findings import FAILS, INCONCLUSIVE, UNMEASURABLE
from tests.ltr.support import one_torch_thread, split_letor_by_query
from tests.support.paths import SHARED

EXPERIMENT = "mq2008-slice"
LEARNDCG = "learndcg(normalisation=standard)"
SOURCE = SHARED / "data" / "letor" / "mq2008_fold1_test.txt"


@pytest.fixture(scope="module")
def trained(tmp_path_factory):
    from ltr.train import RunConfig
    from ltr.train.inprocess import train_runs

    if not SOURCE.is_file():
        pytest.skip(f"{SOURCE} is absent (real data for tests lives beside the checkout)")
    lines = SOURCE.read_text().splitlines(keepends=True)
    first = list(dict.fromkeys(line.split()[1] for line in lines))[:40]
    root = tmp_path_factory.mktemp("mq2008-slice")
    (root / "slice.txt").write_text("".join(line for line in lines if line.split()[1] in set(first)))
    folder = split_letor_by_query(root / "slice.txt", root / "folds", n_folds=4)
    params = {"learndcg": {"normalisation": "standard"}}
    with one_torch_thread():
        configs = [RunConfig(data=str(folder), fold=fold, loss=loss, model="mlp", epochs=2, batch_size=8, seed=0,
                             patience=0, experiment=EXPERIMENT, device="cpu", loss_params=params.get(loss, {}))
                   for fold in (1, 2) for loss in ("learndcg", "approxndcg")]
        store_path = root / "runs.sqlite"
        outcomes = train_runs(configs, store_path)
    assert all(o.status == "completed" for o in outcomes), outcomes
    return str(folder), store_path


def test_findings_test_the_learndcg_variant_the_report_tested(trained):
    from ltr.findings import check_findings
    from ltr.report.paired import significance_table
    from ltr.store import RunStore

    data, store_path = trained
    with RunStore(store_path) as store:
        result = check_findings(store, EXPERIMENT)
        table = significance_table(store, data, "mlp", experiment=EXPERIMENT, holm=True)
    assert table.attrs["candidate"] == LEARNDCG
    rows = table.set_index("loss")
    highest = result["findings"]["learndcg_highest"]
    assert highest.verdict != UNMEASURABLE and len(highest.parts) == 4, highest.reason
    for part in highest.parts:
        k = part.measured["k"]
        assert part.measured["candidate"] == LEARNDCG and part.measured["folds"] == 2
        assert part.measured["p_holm"] == pytest.approx({"approxndcg": rows.loc["approxndcg", f"p_holm@{k}"]})
        # 20 pooled test queries, below the claim's minimum: inconclusive, whichever loss leads
        assert part.evidence["n"] == rows.loc[LEARNDCG, "queries"] == 20 and part.verdict == INCONCLUSIVE
    theta = result["findings"]["theta_d_fold_specific"].parts[0]
    assert theta.verdict in (INCONCLUSIVE, FAILS) and set(theta.measured["per_fold"]) == {1, 2}
    neural = result["findings"]["neuralloss_vs_learndcg"]
    assert neural.verdict == UNMEASURABLE and neural.parts[0].reason == "neuralloss not trained in this configuration"


def test_a_neuralloss_variant_is_compared_too(trained):
    """A NeuralLoss row with its own parameters (``neuralloss(...)``) is LearnDCG's comparison: here ApproxNDCG's
    row renamed so, as a planted NeuralLoss variant.
    """
    from ltr.findings import neuralloss_parts
    from ltr.report.paired import significance_table
    from ltr.store import RunStore

    data, store_path = trained
    with RunStore(store_path) as store:
        table = significance_table(store, data, "mlp", experiment=EXPERIMENT, holm=True)
    table["loss"] = table["loss"].replace({"approxndcg": "neuralloss(max_steps=10)"})
    parts = neuralloss_parts(table, "slice")
    rows = table.set_index("loss")
    assert [p.measured["k"] for p in parts] == [1, 3, 5, 10]
    for part in parts:
        k = part.measured["k"]
        assert part.measured["baseline"] == "neuralloss(max_steps=10)" and part.measured["candidate"] == LEARNDCG
        assert part.measured["diff"] == pytest.approx(rows.loc["neuralloss(max_steps=10)", f"diff@{k}"])
        assert part.evidence["n"] == 20 and part.verdict == INCONCLUSIVE

