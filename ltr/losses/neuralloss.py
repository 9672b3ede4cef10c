"""NeuralLoss: a frozen transformer surrogate of NDCG, used as the loss  L = - mean_q NDCG_hat_q.

The surrogate f reads a list of (score, label) pairs and predicts the list's NDCG (exp gain, whole
list or @k, no-relevant = 1). Each document becomes a token of

    z_i = (s_i - mean s) / sqrt(var s + 1e-6)                          (NDCG ignores shift and scale)
    [z_i, sin(w z_i), cos(w z_i) for w in 2^{-1..F-2}, y_i / y_max, (2^{y_i} - 1) / (2^{y_max} - 1)]

(the Fourier features let attention logits depend on s_i - s_j, which is what ranks are made of),
a pre-norm transformer encoder mixes the real tokens (padding masked), and the mean of the real
tokens goes through an MLP and a sigmoid: NDCG_hat in (0, 1).

Pre-training (what the surrogate has seen decides what it can score):

- lists of uniform random length in [min_length, max_length] and grades in {0..max_grade}: the
  trainer sets these from the data set (``max_grade`` from its spec, lengths from its training and validation lists,
  capped by the slate length), so MQ data (grades 0-2) get a 0-2 surrogate;
- each list draws its own grade mix from a flat Dirichlet, so skewed mixes (80/13/6 as in MQ2008,
  60/30/10) are as familiar as uniform ones;
- scores ``q * y + sigma * N(0, 1)`` with a per-list quality q ~ U(-1, 3) and noise sigma ~ logU(0.05, 2),
  so targets cover near-reversed to near-ideal lists;
- a fraction ``adversarial`` of each batch are lists whose scores were pushed up the *current*
  surrogate by ``adversarial_steps`` signed-gradient steps, labelled with their true NDCG: the
  surrogate is taught not to reward what is not NDCG, so a ranker optimising it raises the true
  NDCG (``tests/ltr/losses/test_neuralloss.py`` checks this on free scores);
- MSE to the exact NDCG (``ltr.metrics``), Adam with a one-cycle schedule over ``max_steps``; the
  held-out MAE (2048 fresh lists) is checked every ``eval_every`` steps and pre-training stops when it
  has not improved by 2 % for ``patience`` checks (converged), keeping the best weights. The meta
  records the steps taken, whether it converged, and the held-out MAE overall and on fixed label
  mixes (uniform, 60/30/10, 80/13/6, one relevant document).

The original NeuralLoss (Liu, Jiang & Zhou, TKDE 2025; code github.com/hitlic/neural_loss) pre-trains
on 220,000 generated lists per epoch (lengths 40..slate length, 1,000 score lists per length, each
shuffled 10 times plus 10 label-ordered copies; MQ2008 grades drawn 75/20/5), batch 32, Adam 1e-3
halved every 10 epochs, at most 20 epochs (about 137,500 steps) with early stopping (patience 5) on a
validation set. Ours is far smaller (``max_steps`` 3,000 x 64 lists at most) and stops on convergence
of the held-out error instead: what it costs and reaches is in the cached meta.

Queries without a relevant document have a constant NDCG and are left out of the mean.
"""
from __future__ import annotations

import fcntl
import json
import math
import time
from dataclasses import asdict, dataclass
from typing import Mapping

import torch
from torch import Tensor, nn

from core.atomic import atomic_write, atomic_write_text
from core.digest import content_digest
from core.paths import cache_subdir
from core.threads import torch_choice, using_torch_threads
from ltr.losses import register_loss
from ltr.losses._common import (RankingLoss, TrainingData, check_batch, exp_gain, ideal_dcg, mean_over, real_labels,
                                real_scores)

SURROGATE_VERSION = 3  # 3: pre-trained on lists chunked by length (predict_by_length); other float rounding
CHUNK_LISTS = 16  # lists per length-sorted chunk of a pre-training batch or held-out check
HELDOUT_LISTS = 2048
LENGTH_BUCKET = 16  # the surrogate's longest list is the longest seen, rounded up to a multiple of this


@dataclass(frozen=True)
class SurrogateConfig:
    """Hyper-parameters of the surrogate and its pre-training (the cache key)."""

    d_model: int = 32
    n_heads: int = 4
    n_layers: int = 2
    n_frequencies: int = 6
    max_grade: int = 4
    k: int | None = None
    min_length: int = 2
    max_length: int = 40
    max_steps: int = 3000
    eval_every: int = 200
    patience: int = 3
    batch_size: int = 64
    lr: float = 3e-3
    adversarial: float = 0.125
    adversarial_steps: int = 3
    seed: int = 0

    def __post_init__(self):
        if not (1 <= self.max_grade and 1 <= self.min_length <= self.max_length and self.max_steps >= 1
                and self.eval_every >= 1 and 0.0 <= self.adversarial < 1.0):
            raise ValueError(f"invalid surrogate settings: {self}")

    def key(self) -> str:
        return content_digest({**asdict(self), "version": SURROGATE_VERSION}, 16)


# Held-out label mixes the meta reports the error on (name -> grade proportions low to high, or None =
# uniform over grades). "one relevant" = a single top-grade document per list.
HELDOUT_MIXES = {"uniform": None, "60/30/10": (0.6, 0.3, 0.1), "80/13/6": (0.81, 0.13, 0.06), "one relevant": "one"}


class NDCGSurrogate(nn.Module):
    """f(scores [B, n], labels [B, n] padded -1) -> predicted NDCG [B] in (0, 1)."""

    def __init__(self, cfg: SurrogateConfig):
        super().__init__()
        self.max_grade = cfg.max_grade
        self.register_buffer("frequencies", 2.0 ** torch.arange(-1, cfg.n_frequencies - 1, dtype=torch.float32))
        n_inputs = 1 + 2 * cfg.n_frequencies + 2
        self.embed = nn.Linear(n_inputs, cfg.d_model)
        layer = nn.TransformerEncoderLayer(
            cfg.d_model, cfg.n_heads, dim_feedforward=2 * cfg.d_model, dropout=0.0, batch_first=True, norm_first=True
        )
        self.encoder = nn.TransformerEncoder(layer, cfg.n_layers, enable_nested_tensor=False)
        self.head = nn.Sequential(nn.LayerNorm(cfg.d_model), nn.Linear(cfg.d_model, cfg.d_model), nn.GELU(),
                                  nn.Linear(cfg.d_model, 1))

    def tokens(self, scores: Tensor, labels: Tensor, real: Tensor) -> Tensor:
        s = real_scores(scores, real)
        n_real = real.sum(dim=-1, keepdim=True).clamp(min=1)
        mean = s.sum(dim=-1, keepdim=True) / n_real
        centred = torch.where(real, s - mean, torch.zeros_like(s))
        z = centred / torch.sqrt((centred**2).sum(dim=-1, keepdim=True) / n_real + 1e-6)
        angles = z[..., None] * self.frequencies.to(z.dtype)
        y = real_labels(labels, real, s.dtype).clamp(max=self.max_grade)
        grades = torch.stack([y / self.max_grade, exp_gain(y) / (2.0**self.max_grade - 1)], dim=-1)
        return torch.cat([z[..., None], angles.sin(), angles.cos(), grades], dim=-1)

    def forward(self, scores: Tensor, labels: Tensor) -> Tensor:
        real = labels != -1
        h = self.encoder(self.embed(self.tokens(scores, labels, real)), src_key_padding_mask=~real)
        h = torch.where(real[..., None], h, torch.zeros_like(h))
        pooled = h.sum(dim=1) / real.sum(dim=-1, keepdim=True).clamp(min=1)
        return torch.sigmoid(self.head(pooled).squeeze(-1))


def predict_by_length(model: "NDCGSurrogate", scores: Tensor, labels: Tensor, per_chunk: int | None = None) -> Tensor:
    """``model(scores, labels)`` computed on chunks of ``per_chunk`` (default :data:`CHUNK_LISTS`) lists of
    similar length, each cut to its
    longest list: the same value for every list (padding never reaches a real one; only the float rounding
    differs), at about half the cost where lengths vary (uniform 5..128: a batch is padded to about 128 while
    its lists average 66 documents, and attention grows with the square of the padded length)."""
    lengths = (labels != -1).sum(dim=1)
    order = torch.argsort(lengths, stable=True)
    out = scores.new_empty(scores.shape[0])
    for chunk in order.split(per_chunk or CHUNK_LISTS):
        width = max(int(lengths[chunk].max()), 1)
        out = out.index_put((chunk,), model(scores[chunk, :width], labels[chunk, :width]))
    return out


def _mix_probabilities(mix, max_grade: int) -> Tensor:
    """Grade proportions over {0..max_grade} of a named mix: coarse mixes spread their top share
    evenly over the grades above (a 3-grade mix on a 5-grade scale)."""
    if mix is None:
        return torch.full((max_grade + 1,), 1.0 / (max_grade + 1))
    probs = torch.zeros(max_grade + 1)
    probs[0] = mix[0]
    rest = torch.tensor(mix[1:], dtype=torch.float32)
    upper = torch.linspace(1, len(rest), max_grade).round().long() - 1  # grade g >= 1 -> mix entry
    for g in range(1, max_grade + 1):
        probs[g] = rest[upper[g - 1]] / (upper == upper[g - 1]).sum()
    return probs / probs.sum()


def synthetic_lists(cfg: SurrogateConfig, n_lists: int, generator: torch.Generator, mix=False
                    ) -> tuple[Tensor, Tensor, Tensor]:
    """(scores, labels padded -1, exact NDCG) of random lists (see the module docstring).

    ``mix=False``: each list draws its grade mix from a flat Dirichlet (pre-training); otherwise a
    name's value from :data:`HELDOUT_MIXES` (None = uniform, a tuple of proportions, ``"one"``)."""
    n = cfg.max_length
    lengths = torch.randint(cfg.min_length, cfg.max_length + 1, (n_lists, 1), generator=generator)
    real = torch.arange(n)[None, :] < lengths
    if mix == "one":
        labels = torch.zeros(n_lists, n)
        top = (torch.rand(n_lists, 1, generator=generator) * lengths).long()
        labels.scatter_(1, top, float(cfg.max_grade))
    else:
        if mix is False:  # flat Dirichlet: normalised standard exponentials
            probs = -torch.log(torch.rand(n_lists, cfg.max_grade + 1, generator=generator).clamp(min=1e-12))
            probs = probs / probs.sum(dim=1, keepdim=True)
        else:
            probs = _mix_probabilities(mix, cfg.max_grade).expand(n_lists, -1)
        labels = torch.multinomial(probs, n, replacement=True, generator=generator).float()
    quality = torch.rand((n_lists, 1), generator=generator) * 4.0 - 1.0
    noise = torch.exp(torch.empty(n_lists, 1).uniform_(math.log(0.05), math.log(2.0), generator=generator))
    scores = quality * labels + noise * torch.randn((n_lists, n), generator=generator)
    labels = torch.where(real, labels, torch.full_like(labels, -1.0))
    return scores, labels, true_ndcg(cfg, scores, labels)


def true_ndcg(cfg: SurrogateConfig, scores: Tensor, labels: Tensor) -> Tensor:
    from ltr.metrics import ndcg_at_k  # ltr.metrics imports this package: import at call time

    return ndcg_at_k(scores, labels, cfg.k or scores.shape[1], gain="exp", no_relevant="one")


def adversarial_lists(model: "NDCGSurrogate", cfg: SurrogateConfig, n_lists: int, generator: torch.Generator
                      ) -> tuple[Tensor, Tensor, Tensor]:
    """Lists whose scores climbed the current surrogate (signed-gradient steps from random scores),
    labelled with their true NDCG: the places where the surrogate would be gamed."""
    _, labels, _ = synthetic_lists(cfg, n_lists, generator)
    scores = torch.randn(labels.shape, generator=generator).requires_grad_(True)
    for _ in range(cfg.adversarial_steps):
        (grad,) = torch.autograd.grad(predict_by_length(model, scores, labels).sum(), scores)
        scores = (scores + 0.5 * grad.sign()).detach().requires_grad_(True)
    scores = scores.detach()
    return scores, labels, true_ndcg(cfg, scores, labels)


def _padded_cat(parts: list[tuple[Tensor, Tensor, Tensor]]) -> tuple[Tensor, Tensor, Tensor]:
    return tuple(torch.cat(t) for t in zip(*parts))


def heldout_errors(model: "NDCGSurrogate", cfg: SurrogateConfig) -> dict[str, float]:
    """Mean absolute NDCG error on 2048 fresh lists per named label mix (and the Dirichlet draw)."""
    out = {}
    for i, (name, mix) in enumerate([("dirichlet", False), *HELDOUT_MIXES.items()]):
        gen = torch.Generator().manual_seed(cfg.seed + 1_000_003 + i)
        scores, labels, target = synthetic_lists(cfg, HELDOUT_LISTS, gen, mix=mix)
        with torch.no_grad():
            out[name] = (predict_by_length(model, scores, labels) - target).abs().mean().item()
    return out


def plateaued(history: list[tuple[int, float]], last: float = 1 / 3, share: float = 0.1) -> bool:
    """Whether a held-out error curve ``[(step, mae), ...]`` has flattened: its last third of steps
    gained less than ``share`` of the whole run's improvement. With the one-cycle schedule the learning
    rate anneals to the end of the budget, so the early stop on ``patience`` may never fire although the
    curve is flat; this is the convergence reported then."""
    if len(history) < 3:
        return False
    first, final = history[0][1], history[-1][1]
    cut = history[-1][0] * (1 - last)
    at_cut = next(mae for step, mae in reversed(history) if step <= cut)
    total = first - final
    return total > 0 and (at_cut - final) < share * total


def pretrain(cfg: SurrogateConfig) -> tuple[NDCGSurrogate, dict]:
    """Train a surrogate from scratch until its held-out error converges (deterministic for ``cfg.seed``).

    On this process's torch threads (``core.threads``; the count before is restored after): the loss is
    made before a run applies its threads, and on torch's default a busy 2-core machine spent over four
    times the CPU on the same pre-training (the meta records the threads and the load they were chosen at)."""
    threads = torch_choice()
    with using_torch_threads(threads.threads):
        model, meta = _pretrain(cfg)
    meta["threads"] = {"threads": threads.threads, "load": threads.load, "source": threads.source}
    return model, meta


def _pretrain(cfg: SurrogateConfig) -> tuple[NDCGSurrogate, dict]:
    start = time.perf_counter()
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(cfg.seed)
        model = NDCGSurrogate(cfg)
        data_rng = torch.Generator().manual_seed(cfg.seed)
        heldout = synthetic_lists(cfg, HELDOUT_LISTS, torch.Generator().manual_seed(cfg.seed + 1_000_003))
        optimiser = torch.optim.Adam(model.parameters(), lr=cfg.lr)
        schedule = torch.optim.lr_scheduler.OneCycleLR(optimiser, max_lr=cfg.lr, total_steps=cfg.max_steps)
        n_adversarial = int(round(cfg.adversarial * cfg.batch_size))
        best, best_state, bad, steps, history = math.inf, None, 0, 0, []
        while steps < cfg.max_steps:
            parts = [synthetic_lists(cfg, cfg.batch_size - n_adversarial, data_rng)]
            if n_adversarial:
                parts.append(adversarial_lists(model, cfg, n_adversarial, data_rng))
            scores, labels, target = _padded_cat(parts)
            loss = ((predict_by_length(model, scores, labels) - target) ** 2).mean()
            optimiser.zero_grad(set_to_none=True)
            loss.backward()
            optimiser.step()
            schedule.step()
            steps += 1
            if steps % cfg.eval_every == 0 or steps == cfg.max_steps:
                with torch.no_grad():
                    mae = (predict_by_length(model, heldout[0], heldout[1]) - heldout[2]).abs().mean().item()
                history.append((steps, mae))
                if mae < best * 0.98:
                    best, best_state, bad = mae, {k: v.clone() for k, v in model.state_dict().items()}, 0
                else:
                    bad += 1
                    if bad >= cfg.patience:
                        break
        if best_state is not None:
            model.load_state_dict(best_state)
    seconds = time.perf_counter() - start
    model.eval().requires_grad_(False)
    errors = heldout_errors(model, cfg)
    target = heldout[2]
    meta = {
        "params": asdict(cfg),
        "version": SURROGATE_VERSION,
        "pretrain_seconds": seconds,
        "steps": steps,
        "converged": steps < cfg.max_steps or plateaued(history),
        "history": history,
        "heldout_mae": errors["dirichlet"],
        "heldout_mae_by_mix": errors,
        "baseline_mae": (target - target.mean()).abs().mean().item(),
        "torch": torch.__version__,
    }
    return model, meta


def load_or_pretrain(cfg: SurrogateConfig) -> tuple[NDCGSurrogate, dict, bool]:
    """The cached surrogate of ``cfg`` if there is a valid one, else a freshly pre-trained one.

    Returns (frozen surrogate, meta, loaded_from_cache)."""
    folder = cache_subdir("neuralloss")
    weights, meta_path = folder / f"{cfg.key()}.pt", folder / f"{cfg.key()}.json"
    # One pre-training per surrogate: a run needing one that another process (a grid's other worker, on the
    # folds that share it) is pre-training waits for it and loads it, instead of paying it a second time at once.
    # The kernel releases the lock when its holder ends, a kill included.
    with open(folder / f"{cfg.key()}.lock", "a+") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if weights.is_file() and meta_path.is_file():
            try:
                meta = json.loads(meta_path.read_text())
                if meta.get("params") == asdict(cfg) and meta.get("version") == SURROGATE_VERSION:
                    model = NDCGSurrogate(cfg)
                    model.load_state_dict(torch.load(weights, map_location="cpu", weights_only=True))
                    return model.eval().requires_grad_(False), meta, True
            except (OSError, ValueError, RuntimeError, KeyError):
                pass  # unreadable or stale cache entry: pre-train again and overwrite it
        model, meta = pretrain(cfg)
        # weights first, meta last: a meta file only ever describes complete weights
        atomic_write(weights, lambda tmp: torch.save(model.state_dict(), tmp))
        atomic_write_text(meta_path, json.dumps(meta, indent=2))
        return model, meta, False


@register_loss("neuralloss", order=9, pretrains_once=True)
class NeuralLoss(RankingLoss):
    def __init__(self, **surrogate_params):
        super().__init__()
        try:
            self.config = SurrogateConfig(**surrogate_params)
        except TypeError as exc:
            raise TypeError(f"NeuralLoss: {exc}; known parameters: {', '.join(asdict(SurrogateConfig()))}") from None
        self.surrogate, meta, self.loaded_from_cache = load_or_pretrain(self.config)
        self.pretrain_seconds: float = float(meta["pretrain_seconds"])  # the original time, also when loaded
        self.pretrain_key: str = self.config.key()  # every run with this key shares that one pre-training
        self.pretrain_paid: bool = not self.loaded_from_cache
        self.pretrain_steps: int = int(meta["steps"])
        self.converged: bool = bool(meta["converged"])
        self.heldout_mae: float = float(meta["heldout_mae"])
        self.heldout_mae_by_mix: dict[str, float] = dict(meta["heldout_mae_by_mix"])
        self.baseline_mae: float = float(meta["baseline_mae"])

    @classmethod
    def dataset_defaults(cls, params: Mapping, data: TrainingData) -> dict:
        """The surrogate is pre-trained for the data set's grade range and list lengths (capped by the slate
        length), not a fixed 0..4 and 2..40. The lengths are those of the fold's training and validation lists
        (never its test lists: issue 41), the longest rounded up to a multiple of :data:`LENGTH_BUCKET`, so the
        folds of a cross-validation, whose longest seen lists differ by a few documents (MQ2008: 119 or 121),
        share one surrogate (before the lengths were keyed per fold's training split: three surrogates for five
        folds, 1,292 + 763 + 524 s). A surrogate pre-trained on longer lists scores shorter ones as well."""
        lengths = data.seen_list_lengths if data.seen_list_lengths is not None else data.list_lengths
        longest = -(-max(int(lengths.max()), 2) // LENGTH_BUCKET) * LENGTH_BUCKET
        if data.slate_length is not None:
            longest = min(longest, data.slate_length)
        max_length = params.get("max_length", longest)
        return {"max_grade": max(int(data.max_grade), 1), "max_length": longest,
                "min_length": min(max(int(lengths.min()), 1), max_length)}

    def provenance(self) -> dict:
        return {"surrogate": self.config.key(), "surrogate_version": SURROGATE_VERSION,
                "surrogate_lengths_from": f"the fold's training and validation lists (never its test lists), the "
                                          f"longest rounded up to a multiple of {LENGTH_BUCKET}"}

    def train(self, mode: bool = True):
        super().train(mode)
        self.surrogate.eval()  # frozen: never switch the surrogate to training behaviour
        return self

    def forward(self, scores: Tensor, labels: Tensor) -> Tensor:
        real = check_batch(scores, labels)
        dtype = self.surrogate.embed.weight.dtype
        predicted = self.surrogate(scores.to(dtype), labels.to(dtype))
        has_relevant = ideal_dcg(exp_gain(real_labels(labels, real, scores.dtype))) > 0
        return -mean_over(predicted, has_relevant)
