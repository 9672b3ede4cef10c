"""The memory guard: the peak of a training step is estimated before a run starts, and a run that
would not fit is refused with one line naming a slate length that fits and the study's default."""
from __future__ import annotations

import numpy as np
import pytest
import torch

from ltr import memory
from ltr.cli import main
from ltr.losses import make_loss
from ltr.rankers import make_ranker

pytestmark = pytest.mark.usefixtures("one_thread")  # tests/ltr/conftest.py

F = 46


def _parts(loss: str, model: str = "mlp"):
    torch.manual_seed(0)
    return make_ranker(model, F), make_loss(loss)


def test_estimate_grows_with_the_square_of_the_list_for_pairwise_losses(one_thread):
    model, loss = _parts("neuralndcg")
    step = memory.estimate_step_memory(model, loss, F, batch_size=64, list_length=1250)
    # WEB10K-sized lists at batch 64: NeuralNDCG's [64, 1250, 1250] tensors (400 MB each) add up to tens of GB
    assert step.bytes > 20 * 2**30
    assert step.at(2500) / step.at(1250) == pytest.approx(4.0, rel=0.05)
    listnet = memory.estimate_step_memory(*_parts("listnet"), F, batch_size=64, list_length=1250)
    assert listnet.bytes < step.bytes / 5  # listwise softmax: no n x n tensor saved


@pytest.mark.parametrize("loss, n", [("approxndcg", 200), ("approxndcg", 400), ("neuralndcg", 400)])
def test_extrapolated_saved_bytes_match_a_real_step(one_thread, loss, n):
    """Probed at 64/160/256 documents, the fit predicts what autograd saves for a longer list
    (NeuralNDCG's Sinkhorn count still grows a little: there the prediction may only be higher)."""
    model, loss_fn = _parts(loss)
    step = memory.estimate_step_memory(model, loss_fn, F, batch_size=1, list_length=n)
    real = memory._saved_bytes(model, loss_fn, F, n, torch.device("cpu"))
    predicted = memory.saved_bytes_per_list(step.saved_per_list, n)
    assert real * 0.97 <= predicted <= real * 1.3, (predicted, real)


def test_probe_changes_neither_the_model_nor_the_random_stream(one_thread):
    model, loss = _parts("learndcg", "attention_mil")
    before = {k: v.clone() for k, v in model.state_dict().items()}
    state = torch.get_rng_state()
    memory.estimate_step_memory(model, loss, F, batch_size=8, list_length=100)
    assert all(torch.equal(before[k], v) for k, v in model.state_dict().items())
    assert all(p.grad is None for p in model.parameters())
    assert torch.equal(state, torch.get_rng_state())


def test_refusal_names_a_slate_that_fits_and_the_study_default(one_thread):
    model, loss = _parts("neuralndcg")
    lengths = np.r_[np.full(70, 40), 1250, 900]  # the longest lists share the largest batch
    with pytest.raises(memory.MemoryEstimateError) as err:
        memory.check_training_memory(model, loss, n_features=F, list_lengths=lengths, batch_size=64, slate_length=None,
                                     device="cpu", what="web10k fold 1 neuralndcg/mlp", study_slate_length=240,
                                     available=8 * 2**30)
    text = str(err.value)
    assert "\n" not in text and "web10k fold 1" in text and "1,250 documents (whole lists)" in text
    assert "--slate-length 240 (the study's setting for this data set)" in text
    fits = memory.largest_fitting_slate(memory.estimate_step_memory(model, loss, F, 64, 1250), int(0.8 * 8 * 2**30))
    assert fits is not None and 240 <= fits < 1250 and f"up to {fits}" in text
    # capped at the study's slate, the same run fits
    assert memory.check_training_memory(model, loss, n_features=F, list_lengths=lengths, batch_size=64,
                                        slate_length=240, device="cpu", what="x", available=8 * 2**30) is not None


def test_cli_refuses_before_writing_anything(capsys, tmp_path, tiny_data, one_thread, monkeypatch):
    monkeypatch.setattr(memory, "available_bytes", lambda device: 4 * 2**20)  # a 4 MiB machine
    store = tmp_path / "store" / "runs.sqlite"
    argv = ["train", "--data", tiny_data, "--fold", "1", "--epochs", "1", "--loss", "neuralndcg", "--model", "mlp",
            "--store", str(store)]
    assert main(argv) == 2
    (line,) = capsys.readouterr().err.strip().splitlines()
    assert line.startswith("error: ") and "needs about" in line and "MiB available on cpu" in line
    assert "--slate-length" in line or "lower --batch-size" in line
    assert not store.exists()
    monkeypatch.setenv(memory.SKIP_ENV, "1")
    assert main(argv) == 0
