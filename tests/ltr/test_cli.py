"""``python -m ltr``: argument parsing, bad-input error paths (one line, exit 2, store untouched),
``--out`` JSON, no retraining of a completed run, and grids from TOML/YAML files."""
from __future__ import annotations

import argparse
import json
import subprocess
import sys
from pathlib import Path

import pytest

from core.paths import PROJECT_ROOT
from ltr.cli import main, parse_param
from ltr.grid import GridError, expand_grid, read_grid_file, run_grid, split_done
from ltr.store import RunStore
from ltr.train import RunConfig

pytestmark = pytest.mark.usefixtures("one_thread")  # tests/ltr/conftest.py

CONFIGS = PROJECT_ROOT / "ltr" / "configs"


def test_parse_param():
    assert parse_param("alpha=1.5") == ("alpha", 1.5)
    assert parse_param("normalisation=learned") == ("normalisation", "learned")
    assert parse_param("hidden=[64, 32]") == ("hidden", [64, 32])
    assert parse_param("gated=true") == ("gated", True)
    with pytest.raises(argparse.ArgumentTypeError):
        parse_param("no-equals-sign")


def _bad(capsys, argv, store: Path, match: str):
    assert main(argv + ["--store", str(store)]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("error:") and match in err[0], err
    assert not store.exists()  # validated before the store was even opened


@pytest.fixture
def letor_folder(tmp_path):
    """A 46-feature LETOR folder (Fold1) copied from the tiny synthetic data set."""
    def make(name, tiny, drop=()):
        out = tmp_path / name / "Fold1"
        out.mkdir(parents=True)
        for split in ("train", "vali", "test"):
            if split not in drop:
                (out / f"{split}.txt").write_text((Path(tiny) / "Fold1" / f"{split}.txt").read_text())
        return out.parent
    return make


def test_bad_input_is_one_line_and_writes_nothing(capsys, tmp_path, tiny_data, letor_folder, monkeypatch):
    store = tmp_path / "store" / "runs.sqlite"
    base = ["train", "--data", tiny_data, "--fold", "1", "--epochs", "1"]
    _bad(capsys, base + ["--loss", "lambdamartt", "--model", "mlp"], store, "unknown loss 'lambdamartt'")
    # the lambdarank objective is a tree ranker's (ltr.gbdt), not a loss of a neural one
    _bad(capsys, base + ["--loss", "lambdamart", "--model", "mlp"], store, "train it with --model lambdamart")
    _bad(capsys, base + ["--loss", "ranknet", "--model", "gbdt"], store, "unknown model 'gbdt'")
    _bad(capsys, ["train", "--data", "mq2009", "--fold", "1", "--loss", "ranknet", "--model", "mlp"], store,
         "unknown dataset 'mq2009'")
    _bad(capsys, ["train", "--data", tiny_data, "--fold", "9", "--loss", "ranknet", "--model", "mlp"], store,
         "fold 9")
    missing = letor_folder("missing", tiny_data, drop=("vali",))
    _bad(capsys, ["train", "--data", str(missing), "--fold", "1", "--loss", "ranknet", "--model", "mlp"], store,
         "vali.txt")
    _bad(capsys, base + ["--loss", "learndcg", "--model", "mlp", "--loss-param", "b_d=0.5"], store, "b_d")
    with pytest.raises(SystemExit) as exit_:  # argparse refuses it, by the Training form's rule (core.fields)
        main(base + ["--loss", "ranknet", "--model", "mlp", "--lr", "0", "--store", str(store)])
    assert exit_.value.code == 2 and "argument --lr: expected a number > 0, got 0" in capsys.readouterr().err
    assert not store.exists()
    # A configured MQ2008 folder whose files have a different feature count (MSLR-shaped: 136).
    mslr = tmp_path / "mslr-as-mq2008"
    synthetic_web10k = subprocess.run([sys.executable, "-c", (
        "import sys; from ltr.data.synthetic import write_synthetic; "
        "write_synthetic('synthetic-web10k', sys.argv[1], n_queries=10)"), str(mslr)], cwd=PROJECT_ROOT)
    assert synthetic_web10k.returncode == 0
    monkeypatch.setenv("IRDASH_DATA_MQ2008", str(mslr))
    _bad(capsys, ["train", "--data", "mq2008", "--fold", "1", "--loss", "ranknet", "--model", "mlp"], store,
         "features")
    monkeypatch.delenv("IRDASH_DATA_MQ2008")
    _bad(capsys, ["train", "--data", "mq2008", "--fold", "1", "--loss", "ranknet", "--model", "mlp"], store,
         "IRDASH_DATA_MQ2008")


def test_a_stored_run_with_another_config_is_refused(capsys, tmp_path, tiny_data):
    config = RunConfig(data=tiny_data, fold=1, loss="ranknet", model="mlp", epochs=1, device="cpu")
    store_path = tmp_path / "runs.sqlite"
    with RunStore(store_path) as store:  # e.g. written before the data folder changed
        store.register_run(config.run_id, {**config.result_config(), "data_signature": {"n_features": 7}})
    assert main(["train", *config.to_cli_args(), "--store", str(store_path)]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "different configuration" in err[0]
    with RunStore(store_path) as store:
        run = store.get_run(config.run_id)
        assert run["status"] == "pending" and run["config"]["data_signature"] == {"n_features": 7}
        assert store.step_series([config.run_id], ["loss"]).empty


@pytest.mark.slow
def test_train_out_json_and_no_retraining(tmp_path, tiny_data, capsys):
    config = RunConfig(data=tiny_data, fold=2, loss="learndcg", model="mlp", epochs=2, batch_size=8, device="cpu")
    store, out = tmp_path / "runs.sqlite", tmp_path / "out" / "run.json"
    cmd = [sys.executable, "-m", "ltr", "train", *config.to_cli_args(), "--store", str(store), "--out", str(out)]
    first = subprocess.run(cmd, cwd=PROJECT_ROOT, capture_output=True, text=True)
    assert first.returncode == 0, first.stderr
    assert "epoch 1" in first.stderr and config.run_id in first.stdout
    result = json.loads(out.read_text())
    assert {"run_id", "config", "validation", "loss_parameters", "test", "test_per_query_ndcg@10", "train_seconds",
            "pretrain_seconds"} <= set(result)
    assert result["run_id"] == config.run_id and result["config"]["loss"] == "learndcg"
    assert set(result["test"]) == {"ndcg@1", "ndcg@3", "ndcg@5", "ndcg@10"}
    assert len(result["validation"]) == 2 and result["train_seconds"] > 0
    assert "theta_d" in result["loss_parameters"][0] and "b_d" in result["loss_parameters"][-1]
    assert len(result["test_per_query_ndcg@10"]) == result["config"]["data_signature"]["test_queries"]
    out.unlink()
    assert main(cmd[3:]) == 0  # the same command again: the stored result, no training
    err = capsys.readouterr().err
    assert "already completed" in err and "epoch" not in err
    assert json.loads(out.read_text())["test"] == result["test"]
    with RunStore(store) as s:
        assert len(s.list_runs()) == 1


def test_shipped_grid_configs_expand():
    study = expand_grid(read_grid_file(CONFIGS / "study_grid.toml"), source="study_grid.toml")
    assert len(study.configs) == 4 * 5 * 11 * 4 * 3  # x seeds 0, 1, 2 (issue 34)
    assert {c.data for c in study.configs} == {"mq2007", "mq2008", "web10k", "yahoo"} and \
        {c.seed for c in study.configs} == {0, 1, 2}
    # learndcg_fixed at its defaults is approxndcg bit for bit: its 240 configs are approxndcg's runs
    assert len({c.run_id for c in study.configs}) == len(study.configs) - 4 * 5 * 4 * 3
    assert not any(c.loss == "learndcg_fixed" for c in study.configs)
    web10k = next(c for c in study.configs if c.data == "web10k")
    assert web10k.slate_length is not None and web10k.experiment == study.name
    small = expand_grid(read_grid_file(CONFIGS / "synthetic_small.toml"), source="synthetic_small.toml")
    assert all(c.data.startswith("synthetic-") for c in small.configs)


def test_grid_files_toml_and_yaml_agree_and_errors(tmp_path):
    toml = tmp_path / "g.toml"
    toml.write_text('name = "g"\ndata = ["synthetic-mq2008"]\nfolds = [1, 2]\nlosses = ["ranknet", "learndcg"]\n'
                    'models = ["mlp"]\n[train]\nepochs = 2\n[loss_params.learndcg]\nb_d = 3.0\n'
                    '[overrides.loss.ranknet]\nlr = 0.01\n')
    yaml = tmp_path / "g.yaml"
    yaml.write_text("name: g\ndata: [synthetic-mq2008]\nfolds: [1, 2]\nlosses: [ranknet, learndcg]\nmodels: [mlp]\n"
                    "train: {epochs: 2}\nloss_params: {learndcg: {b_d: 3.0}}\noverrides: {loss: {ranknet: {lr: 0.01}}}\n")
    a, b = (expand_grid(read_grid_file(p), source=str(p)) for p in (toml, yaml))
    assert [c.run_id for c in a.configs] == [c.run_id for c in b.configs] and len(a.configs) == 4
    by_loss = {c.loss: c for c in a.configs}
    assert by_loss["learndcg"].loss_params == {"b_d": 3.0} and by_loss["ranknet"].lr == 0.01
    assert by_loss["learndcg"].lr == RunConfig.lr  # the dataclass default where the grid is silent
    bad = tmp_path / "bad.toml"
    bad.write_text('data = ["synthetic-mq2008"]\nfolds = [1]\nlosses = ["ranknet"]\nmodels = ["mlp"]\nepochz = 3\n')
    with pytest.raises(GridError, match="unknown key"):
        expand_grid(read_grid_file(bad), source=str(bad))
    bad.write_text('data = ["synthetic-mq2008"]\nfolds = [1]\nlosses = ["ranknet"]\nmodels = ["mlp"]\n[train]\nepoch = 3\n')
    with pytest.raises(GridError, match="epoch"):
        expand_grid(read_grid_file(bad), source=str(bad))
    bad.write_text("data = [")
    with pytest.raises(GridError, match="bad.toml"):
        read_grid_file(bad)


@pytest.mark.slow
def test_grid_runs_in_parallel_and_skips_completed(tmp_path, tiny_data, capsys):
    spec = {"name": "tiny", "data": [tiny_data], "folds": [1, 2], "losses": ["ranknet"], "models": ["mlp"],
            "train": {"epochs": 1, "batch_size": 16}}
    grid = expand_grid(spec)
    store = tmp_path / "runs.sqlite"
    outcome = run_grid(grid, store, workers=2, devices=["cpu"], progress=False)
    assert sorted(outcome.completed) == sorted(c.run_id for c in grid.configs) and not outcome.failed
    with RunStore(store) as s:
        assert set(s.list_runs(experiment="tiny", status="completed")["fold"]) == {1, 2}
        assert split_done(grid, s)[0] == []
        assert s.experiments()["name"].tolist() == ["tiny"]
    again = run_grid(grid, store, workers=2, devices=["cpu"], progress=False)
    assert again.completed == [] and len(again.skipped) == 2
    # The CLI front end: a dry run lists nothing left to do; unknown names fail before any run.
    assert main(["grid", "--data", tiny_data, "--folds", "1", "2", "--losses", "ranknet", "--models", "mlp",
                 "--epochs", "1", "--batch-size", "16", "--name", "tiny", "--store", str(store), "--dry-run"]) == 0
    assert capsys.readouterr().out.strip() == ""
    assert main(["grid", "--data", tiny_data, "--folds", "1", "--losses", "nope", "--models", "mlp",
                 "--store", str(store)]) == 2
    assert "unknown loss 'nope'" in capsys.readouterr().err


def test_a_run_that_fails_while_training_is_one_line_and_exit_1(tmp_path, tiny_data, capsys):
    """A diverging run (NaN loss) is marked failed in the store; the terminal gets one line, no traceback."""
    store = tmp_path / "runs.sqlite"
    argv = ["train", "--data", tiny_data, "--fold", "1", "--loss", "rmse", "--model", "mlp", "--epochs", "2",
            "--lr", "1e30", "--quiet", "--store", str(store)]
    assert main(argv) == 1
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("error: run ") and "FloatingPointError" in err[0], err
    with RunStore(store) as s:
        run = s.list_runs().iloc[0]
    assert run["status"] == "failed" and "Traceback" in run["error"]  # the details stay in the store


def test_runs_lists_full_run_ids_and_matches_data_as_stored(tmp_path, capsys):
    store = tmp_path / "runs.sqlite"
    config = RunConfig(data="synthetic-mq2008:seed=4,n_queries=60", fold=1, loss="learndcg_fixed",
                       model="attention_mil")
    with RunStore(store) as s:
        s.register_run(config.run_id, config.result_config(), total_epochs=1)
        s.fail_run(config.run_id, "FloatingPointError: training loss became nan\nTraceback (most recent call last):")
    assert len(config.run_id) > 60
    # Spelled differently from the stored canonical name (option order, spaces): the same data set.
    assert main(["runs", "--store", str(store), "--data", "synthetic-mq2008: n_queries=60,seed=4"]) == 0
    out = capsys.readouterr().out
    assert config.run_id in out and "training loss became nan" in out and "Traceback" not in out


def test_loss_parameter_values_invalid_or_huge(capsys, tmp_path, tiny_data):
    """b_d=1000 trains (it used to overflow inverse_softplus); only values without an inverse are refused."""
    store = tmp_path / "store" / "runs.sqlite"
    base = ["train", "--data", tiny_data, "--fold", "1", "--epochs", "1", "--loss", "learndcg", "--model", "mlp"]
    for bad, match in (("b_d=1", "need finite b_g > 1, b_d > 1"), ("b_d=NaN", "b_d=nan"), ("alpha=-2", "alpha > 0"),
                       ("b_g=1e300", "beyond float32")):
        _bad(capsys, base + ["--loss-param", bad], store, match)
    assert main(base + ["--loss-param", "b_d=1000", "--store", str(store)]) == 0
    with RunStore(store) as s:
        (run,) = s.list_runs().to_dict("records")
        assert run["status"] == "completed"
        first_b_d = s.step_series([run["run_id"]], ["b_d"])["value"].iloc[0]
    assert first_b_d == pytest.approx(1000.0, rel=1e-6)
