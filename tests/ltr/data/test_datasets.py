"""Dataset registry, fold loading, normalisation and the synthetic presets."""
from __future__ import annotations

import shutil

import numpy as np
import pytest

from ltr.data.datasets import DATASETS, DatasetError, load_fold, resolve_dataset
from ltr.data.letor import read_letor
from ltr.data.synthetic import PRESETS, write_synthetic

SMALL_MQ = "synthetic-mq2008:n_queries=60,seed=3"


def _fold_qids(data: str, fold: int) -> dict[str, set[str]]:
    return {s: set(load_fold(data, fold, s).qids) for s in ("train", "vali", "test")}


def test_registry_lists_real_and_synthetic_sets():
    for name, (F, grade) in {"mq2007": (46, 2), "mq2008": (46, 2), "web10k": (136, 4), "yahoo": (700, 4)}.items():
        assert (DATASETS[name].n_features, DATASETS[name].max_grade) == (F, grade)
        synthetic = DATASETS[f"synthetic-{name}"]
        assert synthetic.synthetic and synthetic.n_features == F and synthetic.n_folds == 5
        assert synthetic.query_normalise == DATASETS[name].query_normalise
    assert DATASETS["web10k"].query_normalise and not DATASETS["mq2008"].query_normalise


def test_synthetic_folds_partition_the_queries():
    spec, folder = resolve_dataset(SMALL_MQ)
    assert folder.name == "synthetic-mq2008-q60-seed3"
    tests = []
    for k in range(1, 6):
        split = _fold_qids(SMALL_MQ, k)
        assert not split["train"] & split["vali"] and not split["train"] & split["test"]
        assert not split["vali"] & split["test"]
        assert len(split["train"] | split["vali"] | split["test"]) == 60
        tests.append(split["test"])
    assert sorted(q for t in tests for q in t) == sorted({q for t in tests for q in t})  # each once
    ds = load_fold(SMALL_MQ, 1, "train")
    assert ds.n_features == 46 and ds.features.min() >= 0 and ds.features.max() <= 1


def test_synthetic_is_deterministic_for_a_seed(tmp_path):
    a = write_synthetic("synthetic-mq2008", tmp_path / "a", seed=5, n_queries=30)
    b = write_synthetic("synthetic-mq2008", tmp_path / "b", seed=5, n_queries=30)
    c = write_synthetic("synthetic-mq2008", tmp_path / "c", seed=6, n_queries=30)
    for k in range(1, 6):
        for s in ("train", "vali", "test"):
            assert (a / f"Fold{k}" / f"{s}.txt").read_bytes() == (b / f"Fold{k}" / f"{s}.txt").read_bytes()
    assert (a / "Fold1" / "train.txt").read_bytes() != (c / "Fold1" / "train.txt").read_bytes()
    assert not [p for p in tmp_path.iterdir() if p.name.startswith(".tmp")]


@pytest.mark.parametrize("preset", ["synthetic-mq2008", "synthetic-web10k"])
def test_synthetic_grades_and_list_lengths_follow_the_preset(tmp_path, preset):
    spec = PRESETS[preset]
    out = write_synthetic(preset, tmp_path / "s", seed=0, n_queries=200)
    full = [read_letor(out / "Fold1" / f"{s}.txt") for s in ("train", "vali", "test")]  # all queries
    labels = np.concatenate([d.labels for d in full]).astype(int)
    share = np.bincount(labels, minlength=spec.max_grade + 1) / len(labels)
    np.testing.assert_allclose(share, spec.grade_probs, atol=0.01)
    assert share[0] == share.max() and labels.max() == spec.max_grade
    lengths = np.concatenate([d.list_lengths() for d in full])
    assert lengths.min() >= spec.min_len and lengths.max() <= spec.max_len
    assert 0.5 * spec.median_len <= np.median(lengths) <= 1.5 * spec.median_len
    assert full[0].n_features == spec.n_features


def test_synthetic_web10k_is_raw_and_load_fold_normalises_per_query():
    data = "synthetic-web10k:n_queries=40"
    _, folder = resolve_dataset(data)
    raw = read_letor(folder / "Fold1" / "test.txt")
    assert raw.features.max() > 10  # raw scales, like MSLR's counts and BM25 scores
    ds = load_fold(data, 1, "test")
    assert ds.features.shape == raw.features.shape
    starts = ds.query_ptr[:-1]
    lo, hi = np.minimum.reduceat(ds.features, starts), np.maximum.reduceat(ds.features, starts)
    varying = np.maximum.reduceat(raw.features, starts) > np.minimum.reduceat(raw.features, starts)
    np.testing.assert_allclose(lo, 0, atol=1e-6)
    np.testing.assert_allclose(hi[varying], 1, atol=1e-6)
    assert not hi[~varying].any()


def test_synthetic_features_carry_signal():
    """A linear model fitted on the training split ranks the test split far better than chance."""
    from scipy.stats import spearmanr
    from sklearn.linear_model import Ridge

    data = "synthetic-mq2008"  # the default preset (800 queries)
    train, test = load_fold(data, 1, "train"), load_fold(data, 1, "test")
    bounds = [(a, b) for a, b in zip(test.query_ptr[:-1], test.query_ptr[1:]) if np.ptp(test.labels[a:b]) > 0]

    def mean_rho(pred):  # mean per-query Spearman correlation with the grades
        return np.mean([spearmanr(pred[a:b], test.labels[a:b]).statistic for a, b in bounds])

    pred = Ridge(alpha=1.0).fit(train.features, train.labels).predict(test.features)
    assert mean_rho(pred) > 0.25  # 0.35 measured; a gradient-boosted model reaches 0.49
    assert abs(mean_rho(np.random.default_rng(0).permutation(pred))) < 0.15


def test_sparse_yahoo_split_is_padded_to_700_features():
    ds = load_fold("synthetic-yahoo:n_queries=10", 1, "vali")
    assert ds.n_features == 700 and ds.features.shape[1] == 700
    assert 0 <= ds.features.min() and ds.features.max() <= 1


def _fold_folder(root, source, n_folds=5, splits=("train", "vali", "test")):
    """Folds built from one file, split by query (as a user would prepare Yahoo)."""
    ds_text = source.read_text().splitlines(keepends=True)
    qids = list(dict.fromkeys(line.split()[1] for line in ds_text))
    parts = [set(qids[k::n_folds]) for k in range(n_folds)]
    for k in range(n_folds):
        fold = root / f"Fold{k + 1}"
        fold.mkdir(parents=True)
        for j, split in enumerate(splits):
            chosen = parts[(k + j) % n_folds]
            (fold / f"{split}.txt").write_text("".join(l for l in ds_text if l.split()[1] in chosen))
    return root


def test_real_mq2008_folds_from_a_configured_folder(shared_dir, tmp_path, monkeypatch):
    root = _fold_folder(tmp_path / "MQ2008", shared_dir / "data" / "letor" / "mq2008_fold1_test.txt")
    monkeypatch.setenv("IRDASH_DATA_MQ2008", str(root))
    spec, folder = resolve_dataset("mq2008")
    assert folder == root and spec.n_features == 46
    ds = load_fold("mq2008", 2, "test")
    assert ds.n_features == 46 and ds.doc_ids is not None
    assert sum(load_fold("mq2008", k, "test").n_queries for k in range(1, 6)) == 156
    spec, _ = resolve_dataset(str(root))  # the same folder given as a path
    assert spec.n_features == 46 and spec.n_folds == 5 and not spec.query_normalise


def test_real_mslr_sample_is_query_normalised(shared_dir, tmp_path, monkeypatch):
    fold = tmp_path / "WEB10K" / "Fold1"
    fold.mkdir(parents=True)
    shutil.copy(shared_dir / "data" / "letor" / "mslr_fold1_test_sample.txt", fold / "test.txt")
    monkeypatch.setenv("IRDASH_DATA_WEB10K", str(tmp_path / "WEB10K"))
    ds = load_fold("web10k", 1, "test")
    assert ds.n_queries == 18 and ds.n_features == 136
    assert ds.features.min() == 0 and ds.features.max() == 1


def test_errors_are_one_clear_line(tmp_path, monkeypatch):
    def error(*args) -> str:
        with pytest.raises(DatasetError) as err:
            load_fold(*args) if len(args) == 3 else resolve_dataset(*args)
        assert "\n" not in str(err.value)
        return str(err.value)

    assert "unknown dataset 'nope'" in error("nope")
    monkeypatch.delenv("IRDASH_DATA_WEB10K", raising=False)
    assert "IRDASH_DATA_WEB10K" in error("web10k")
    monkeypatch.setenv("IRDASH_DATA_WEB10K", str(tmp_path / "absent"))
    assert "does not exist" in error("web10k")
    assert "bad option" in error("synthetic-mq2008:foo=1")
    assert "unknown split" in error(SMALL_MQ, 1, "dev")
    assert "fold 6 does not exist" in error(SMALL_MQ, 6, "train")

    (tmp_path / "mq" / "Fold1").mkdir(parents=True)
    monkeypatch.setenv("IRDASH_DATA_MQ2008", str(tmp_path / "mq"))
    assert "missing fold file" in error("mq2008", 1, "train")
    _, web = resolve_dataset("synthetic-web10k:n_queries=10")
    shutil.copy(web / "Fold1" / "vali.txt", tmp_path / "mq" / "Fold1" / "vali.txt")
    assert "136 features, but mq2008 has 46" in error("mq2008", 1, "vali")


# ---------------------------------------------------------------------------- cheap folder checks
def test_check_folder_reads_first_lines_and_names_what_is_wrong(tmp_path):
    from ltr.data.datasets import DATASETS, check_folder
    from ltr.data.synthetic import write_synthetic

    good = tmp_path / "mq2008-like"
    write_synthetic("synthetic-mq2008", good, seed=1, n_queries=25)
    check = check_folder(DATASETS["mq2008"], good)
    assert check.ok and check.summary() == "found · 5 folds · 46 features"
    # a 1-fold, 46-feature folder configured as web10k (136 features, 5 folds)
    one_fold = tmp_path / "web10k-wrong"
    shutil.copytree(good / "Fold1", one_fold / "Fold1")
    check = check_folder(DATASETS["web10k"], one_fold)
    assert not check.ok and check.folds == 1 and check.n_features == 46
    assert check.problems[0] == "1 of 5 folds (no Fold2/, Fold3/, Fold4/, Fold5/)"
    assert "Fold1/train.txt line 1 has 46 features, web10k has 136" in check.problems
    assert check.summary().startswith("broken: 1 of 5 folds") and "(+3 more)" in check.summary()
    # a missing split file and a file that is not LETOR
    (good / "Fold3" / "vali.txt").unlink()
    (good / "Fold4" / "test.txt").write_text("this is not letor\n")
    problems = check_folder(DATASETS["mq2008"], good).problems
    assert "Fold3/ has no vali.txt" in problems
    assert any("Fold4/test.txt:1: not a LETOR line" in p for p in problems)
