"""Which run a grid's worker takes next (ltr.grid): runs of the fold it holds first, and never a second run of a
loss whose one-time pre-training another worker may be paying (it would wait on that pre-training's lock: in the
MQ2008 reproduction one of two cores sat idle for the 353 s of NeuralLoss's surrogate)."""
from __future__ import annotations

from ltr.grid import _held_losses, _next_config, _Slot
from ltr.losses import PRETRAINED_ONCE
from ltr.train import RunConfig

DATA = "synthetic-mq2008"


def run(loss: str, fold: int, seed: int = 0) -> RunConfig:
    return RunConfig(data=DATA, fold=fold, loss=loss, model="mlp", seed=seed)


def test_neuralloss_is_the_loss_with_a_one_time_pre_training():
    assert PRETRAINED_ONCE == ("neuralloss",)


def test_a_second_worker_trains_other_runs_while_the_first_pays_the_pre_training():
    paying, asking = _Slot("cpu", {}, config=run("neuralloss", 1)), _Slot("cpu", {}, config=run("ranknet", 1))
    paid = {"ranknet"}  # the asking worker's run just ended
    held = _held_losses([paying, asking], paid)
    assert held == {"neuralloss"}
    todo = [run("neuralloss", 1, seed=1), run("listnet", 1), run("neuralloss", 2), run("listnet", 2)]
    assert _next_config(todo, (DATA, 1), held) == run("listnet", 1)  # not the held loss, though first and same fold
    assert _next_config(todo, (DATA, 1), held) == run("listnet", 2)  # another fold before a wait
    assert _next_config(todo, (DATA, 2), held) == run("neuralloss", 2)  # only held runs left: it takes one
    # once a run of it has ended here, the pre-training is cached: nothing is held and the fold comes first again
    paid.add("neuralloss")
    assert _held_losses([paying, asking], paid) == frozenset()
    todo = [run("listnet", 3), run("neuralloss", 1, seed=1)]
    assert _next_config(todo, (DATA, 1), _held_losses([paying, asking], paid)) == run("neuralloss", 1, seed=1)


def test_a_loss_without_pre_training_is_never_held():
    slots = [_Slot("cpu", {}, config=run("ranknet", 1)), _Slot("cpu", {}, config=run("learndcg", 2)), _Slot("cpu", {})]
    assert _held_losses(slots, set()) == frozenset()
    todo = [run("ranknet", 1, seed=1), run("learndcg", 1, seed=1)]
    assert _next_config(todo, (DATA, 1), _held_losses(slots, set())) == run("ranknet", 1, seed=1)
