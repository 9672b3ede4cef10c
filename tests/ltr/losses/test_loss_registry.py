"""Adding a loss is one new module in ``ltr.losses``: it is listed from its source without being imported,
built by the normal factory and trained by the normal trainer, with no other file edited."""
from __future__ import annotations

import sys
import textwrap

import pytest

import ltr.losses
from core.registry import RegistryError, RegistryWarning
from ltr.losses import LOSSES, make_loss

NEW_LOSS = '''
"""A pointwise hinge loss: one new module, nothing else edited."""
import torch

from ltr.losses import register_loss
from ltr.losses._common import RankingLoss, check_batch, mean_over, real_labels, real_scores


@register_loss("toyhinge", order=99)
class ToyHinge(RankingLoss):
    def __init__(self, margin: float = 1.0):
        super().__init__()
        self.margin = float(margin)

    def forward(self, scores, labels):
        real = check_batch(scores, labels)
        target = torch.where(real_labels(labels, real, scores.dtype) > 0, 1.0, -1.0)
        hinge = torch.relu(self.margin - target * real_scores(scores, real)) * real
        return mean_over(hinge.sum(-1) / real.sum(-1).clamp(min=1), real.any(-1))
'''


# A loss whose default depends on the data set: its own hook, nothing in the trainer names it.
NEW_DATASET_LOSS = NEW_LOSS.replace('"toyhinge", order=99', '"toygraded", order=98').replace(
    "class ToyHinge(RankingLoss):", """class ToyGraded(RankingLoss):
    @classmethod
    def dataset_defaults(cls, params, data):
        return {"margin": data.max_grade + 0.5}
""")


def _added_loss_module(tmp_path, monkeypatch, name: str, source: str):
    """``ltr.losses`` with one more module, ``<name>.py``, in a second folder of its ``__path__`` (as a
    new file in ``ltr/losses/`` would be, without writing into the checkout)."""
    folder = tmp_path / f"more_losses_{name}"
    folder.mkdir()
    (folder / f"{name}.py").write_text(source)
    monkeypatch.setattr(ltr.losses, "__path__", [*ltr.losses.__path__, str(folder)])
    LOSSES.refresh()
    yield folder
    sys.modules.pop(f"ltr.losses.{name}", None)
    LOSSES.forget(name)


@pytest.fixture
def extra_loss_module(tmp_path, monkeypatch):
    yield from _added_loss_module(tmp_path, monkeypatch, "toyhinge", NEW_LOSS)


@pytest.fixture
def dataset_loss_module(tmp_path, monkeypatch):
    yield from _added_loss_module(tmp_path, monkeypatch, "toygraded", NEW_DATASET_LOSS)


def test_a_new_loss_module_is_listed_without_being_imported(extra_loss_module):
    assert LOSSES.names()[-1] == "toyhinge"
    assert LOSSES.info("toyhinge") == {"order": 99}
    assert "ltr.losses.toyhinge" not in sys.modules  # read from its source
    loss = make_loss("ToyHinge", margin=0.5)
    assert type(loss).__module__ == "ltr.losses.toyhinge" and loss.margin == 0.5


def test_a_new_loss_module_trains_through_the_normal_trainer(extra_loss_module, tmp_path, monkeypatch):
    from ltr.store import RunStore
    from ltr.train import RunConfig, train_run

    monkeypatch.setenv("IRDASH_TORCH_THREADS", "1")
    config = RunConfig(data="synthetic-mq2008:n_queries=30,seed=1", fold=1, loss="toyhinge", model="mlp", epochs=1,
                       batch_size=16)
    with RunStore(tmp_path / "runs.sqlite") as store:
        result = train_run(config, store)
        run = store.find_run(config.run_id)
    assert result.status == "completed" and run["loss"] == "toyhinge"
    assert LOSSES.names()[-1] == "toyhinge"


def test_a_new_loss_declares_its_dataset_dependent_defaults_in_its_own_module(dataset_loss_module, monkeypatch):
    """The run fills them in from the loss's ``dataset_defaults`` hook (MQ2008 grades 0..2: margin 2.5,
    not the constructor's 1); an explicit parameter wins."""
    from ltr.train import RunConfig, prepare_run

    monkeypatch.setenv("IRDASH_TORCH_THREADS", "1")
    data = "synthetic-mq2008:n_queries=30,seed=1"
    assert prepare_run(RunConfig(data=data, fold=1, loss="toygraded", model="mlp", device="cpu")).loss_fn.margin == 2.5
    explicit = prepare_run(RunConfig(data=data, fold=1, loss="toygraded", model="mlp", device="cpu",
                                     loss_params={"margin": 0.25}))
    assert explicit.loss_fn.margin == 0.25


def test_a_declaration_without_literal_arguments_is_named_and_the_other_losses_still_work(tmp_path, monkeypatch):
    """A non-literal name made ``LOSSES.names()`` (so ``import ltr.losses``, which reads them) raise: every
    loss was down. Now that declaration alone is refused, by file and line."""
    folder = tmp_path / "bad_losses"
    folder.mkdir()
    (folder / "badloss.py").write_text(textwrap.dedent('''
        from ltr.losses import register_loss
        NAME = "bad"


        @register_loss(NAME)
        class Bad:
            pass
    '''))
    monkeypatch.setattr(ltr.losses, "__path__", [*ltr.losses.__path__, str(folder)])
    LOSSES.refresh()
    try:
        with pytest.warns(RegistryWarning, match=r"badloss\.py:6: register_loss\(\.\.\.\) takes literal arguments"):
            assert LOSSES.names() == ltr.losses.LOSS_NAMES  # every study loss still listed
        assert type(make_loss("ranknet")).__name__ == "RankNet"
        with pytest.raises(RegistryError, match=r"unknown loss 'bad'; .*refused: .*badloss\.py:6"):
            LOSSES.load("bad")
    finally:
        monkeypatch.undo()
        LOSSES.refresh()
    assert "bad" not in LOSSES.names() and LOSSES.problems() == []


def test_an_unknown_loss_names_the_known_ones():
    with pytest.raises(ValueError, match=r"unknown loss 'hinge'; expected one of ranknet, listnet, .*learndcg_meta"):
        make_loss("hinge")
