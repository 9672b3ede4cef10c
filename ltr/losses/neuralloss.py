"""NeuralLoss: a frozen transformer surrogate of NDCG, used as the loss  L = - mean_q NDCG_hat_q.

The surrogate f reads a list of (score, label) pairs and predicts the list's NDCG (exp gain, whole
list or @k, no-relevant = 1). Each document becomes a token of

    z_i = (s_i - mean s) / sqrt(var s + 1e-6)                          (NDCG ignores shift and scale)
    [z_i, sin(w z_i), cos(w z_i) for w in 2^{-1..F-2}, y_i / y_max, (2^{y_i} - 1) / (2^{y_max} - 1)]

(the Fourier features let attention logits depend on s_i - s_j, which is what ranks are made of),
a pre-norm transformer encoder mixes the real tokens (padding masked), and the mean of the real
tokens goes through an MLP and a sigmoid: NDCG_hat in (0, 1).

Pre-training: lists of uniform random length in [min_length, max_length] whose labels are drawn
uniformly from {0..max_grade}; scores are q * y + N(0, 1) noise with a per-list quality q ~ U(-1, 3),
so the targets cover the whole NDCG range; MSE to the exact NDCG (``ltr.metrics``), Adam. The weights
are then frozen (``requires_grad=False``): only the scores receive gradient.

Pre-training is cached under ``cache/neuralloss/<key>.pt`` (state dict) + ``<key>.json`` (the
hyper-parameters, the original ``pretrain_seconds`` and the held-out errors), where key hashes the
hyper-parameters; both are written atomically. ``pretrain_seconds`` is the time of the original
pre-training even when the weights come from the cache (the study counts it in the loss's cost).
``heldout_mae`` / ``baseline_mae`` are the mean absolute NDCG-prediction errors on 2048 held-out
synthetic lists of the surrogate and of the best constant (the held-out mean).

Queries without a relevant document have a constant NDCG and are left out of the mean.
"""
from __future__ import annotations

import hashlib
import json
import time
from dataclasses import asdict, dataclass

import torch
from torch import Tensor, nn

from core.atomic import atomic_write, atomic_write_text
from core.paths import cache_subdir
from ltr.losses._common import RankingLoss, check_batch, exp_gain, ideal_dcg, mean_over, real_labels, real_scores

SURROGATE_VERSION = 1
HELDOUT_LISTS = 2048


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
    steps: int = 500
    batch_size: int = 64
    lr: float = 3e-3
    seed: int = 0

    def key(self) -> str:
        blob = json.dumps({**asdict(self), "version": SURROGATE_VERSION}, sort_keys=True)
        return hashlib.sha256(blob.encode()).hexdigest()[:16]


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


def synthetic_lists(cfg: SurrogateConfig, n_lists: int, generator: torch.Generator) -> tuple[Tensor, Tensor, Tensor]:
    """(scores, labels padded -1, exact NDCG) of random lists (see the module docstring)."""
    from ltr.metrics import ndcg_at_k  # ltr.metrics imports this package: import at call time

    n = cfg.max_length
    lengths = torch.randint(cfg.min_length, cfg.max_length + 1, (n_lists, 1), generator=generator)
    real = torch.arange(n)[None, :] < lengths
    labels = torch.randint(0, cfg.max_grade + 1, (n_lists, n), generator=generator).float()
    quality = torch.rand((n_lists, 1), generator=generator) * 4.0 - 1.0
    scores = quality * labels + torch.randn((n_lists, n), generator=generator)
    labels = torch.where(real, labels, torch.full_like(labels, -1.0))
    target = ndcg_at_k(scores, labels, cfg.k or n, gain="exp", no_relevant="one")
    return scores, labels, target


def pretrain(cfg: SurrogateConfig) -> tuple[NDCGSurrogate, dict]:
    """Train a surrogate from scratch (deterministic for ``cfg.seed``); returns it and its meta."""
    start = time.perf_counter()
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(cfg.seed)
        model = NDCGSurrogate(cfg)
        data_rng = torch.Generator().manual_seed(cfg.seed)
        optimiser = torch.optim.Adam(model.parameters(), lr=cfg.lr)
        schedule = torch.optim.lr_scheduler.OneCycleLR(optimiser, max_lr=cfg.lr, total_steps=cfg.steps)
        for _ in range(cfg.steps):
            scores, labels, target = synthetic_lists(cfg, cfg.batch_size, data_rng)
            loss = ((model(scores, labels) - target) ** 2).mean()
            optimiser.zero_grad(set_to_none=True)
            loss.backward()
            optimiser.step()
            schedule.step()
    seconds = time.perf_counter() - start
    model.eval().requires_grad_(False)
    heldout = synthetic_lists(cfg, HELDOUT_LISTS, torch.Generator().manual_seed(cfg.seed + 1_000_003))
    with torch.no_grad():
        predicted = model(heldout[0], heldout[1])
    target = heldout[2]
    meta = {
        "params": asdict(cfg),
        "version": SURROGATE_VERSION,
        "pretrain_seconds": seconds,
        "heldout_mae": (predicted - target).abs().mean().item(),
        "baseline_mae": (target - target.mean()).abs().mean().item(),
        "torch": torch.__version__,
    }
    return model, meta




def load_or_pretrain(cfg: SurrogateConfig) -> tuple[NDCGSurrogate, dict, bool]:
    """The cached surrogate of ``cfg`` if there is a valid one, else a freshly pre-trained one.

    Returns (frozen surrogate, meta, loaded_from_cache)."""
    folder = cache_subdir("neuralloss")
    weights, meta_path = folder / f"{cfg.key()}.pt", folder / f"{cfg.key()}.json"
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


class NeuralLoss(RankingLoss):
    def __init__(self, **surrogate_params):
        super().__init__()
        try:
            self.config = SurrogateConfig(**surrogate_params)
        except TypeError as exc:
            raise TypeError(f"NeuralLoss: {exc}; known parameters: {', '.join(asdict(SurrogateConfig()))}") from None
        self.surrogate, meta, self.loaded_from_cache = load_or_pretrain(self.config)
        self.pretrain_seconds: float = float(meta["pretrain_seconds"])
        self.heldout_mae: float = float(meta["heldout_mae"])
        self.baseline_mae: float = float(meta["baseline_mae"])

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
