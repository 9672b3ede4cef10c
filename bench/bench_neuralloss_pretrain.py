"""NeuralLoss's one-time surrogate pre-training: where its time goes, and lists chunked by length against whole
padded batches (issue 41: 18 min in the stored MQ2008 reproduction).

The MQ2008 surrogate (grades 0-2, lists of 5..128 documents, batch 64 of which 8 adversarial lists, 3,000 steps
at most, a held-out check of 2,048 lists every 200 steps) on one torch thread, CPU seconds (``time.process_time``,
so a busy machine's waiting is left out) of:

- each part of a step: generating 56 lists, the 8 adversarial lists (3 signed-gradient steps through the
  surrogate), the forward + backward + Adam step on the 64 lists; one held-out check; each median of
  ``--repeats``;
- the pre-training itself on a reduced budget (``--steps``, a held-out check every ``--steps // 2``), whole padded
  batches (every list padded to 128: the computation before, ``per_chunk`` = the batch) against
  ``ltr.losses.neuralloss.predict_by_length`` (chunks of ``CHUNK_LISTS`` lists of similar length, each cut to its
  longest list), with the ratio; and the largest difference of the two predictions of one batch (float rounding).

The step parts times 3,000 steps plus 15 checks give the estimate of a full pre-training, printed for both.

    .venv/bin/python bench/bench_neuralloss_pretrain.py [--steps 30] [--repeats 5] [--out FILE.json]
"""
from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

MQ2008 = {"max_grade": 2, "min_length": 5, "max_length": 128}


def cpu_median(fn, repeats: int) -> float:
    fn()  # warm-up: allocator, thread pool
    times = []
    for _ in range(repeats):
        start = time.process_time()
        fn()
        times.append(time.process_time() - start)
    return statistics.median(times)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--steps", type=int, default=30, help="pre-training steps of the reduced run (default 30)")
    ap.add_argument("--repeats", type=int, default=5)
    ap.add_argument("--out", type=Path, default=None)
    args = ap.parse_args()

    import torch

    from ltr.losses import neuralloss as nl

    torch.set_num_threads(1)
    cfg = nl.SurrogateConfig(**MQ2008)
    torch.manual_seed(0)
    model = nl.NDCGSurrogate(cfg)
    optimiser = torch.optim.Adam(model.parameters(), lr=cfg.lr)
    gen = torch.Generator().manual_seed(0)
    n_adv = int(round(cfg.adversarial * cfg.batch_size))
    batch = nl._padded_cat([nl.synthetic_lists(cfg, cfg.batch_size - n_adv, gen),
                            nl.adversarial_lists(model, cfg, n_adv, gen)])
    heldout = nl.synthetic_lists(cfg, nl.HELDOUT_LISTS, gen)
    whole = cfg.batch_size * nl.HELDOUT_LISTS  # a chunk larger than any batch: the whole padded batch at once

    def step(per_chunk):
        def run():
            scores, labels, target = batch
            loss = ((nl.predict_by_length(model, scores, labels, per_chunk) - target) ** 2).mean()
            optimiser.zero_grad(set_to_none=True)
            loss.backward()
            optimiser.step()
        return run

    def check(per_chunk):
        def run():
            with torch.no_grad():
                nl.predict_by_length(model, heldout[0], heldout[1], per_chunk)
        return run

    with torch.no_grad():
        difference = (nl.predict_by_length(model, *batch[:2], whole)
                      - nl.predict_by_length(model, *batch[:2], nl.CHUNK_LISTS)).abs().max().item()
    parts = {"generate_lists": cpu_median(lambda: nl.synthetic_lists(cfg, cfg.batch_size - n_adv, gen), args.repeats)}
    result = {"setting": {**MQ2008, "batch": cfg.batch_size, "adversarial_lists": n_adv, "threads": 1,
                          "chunk_lists": nl.CHUNK_LISTS, "torch": torch.__version__},
              "largest_prediction_difference": difference, "variants": {}}
    original = nl.CHUNK_LISTS
    for name, per_chunk in (("whole padded batches (before)", whole), ("chunked by length", nl.CHUNK_LISTS)):
        nl.CHUNK_LISTS = per_chunk  # what adversarial_lists and _pretrain use
        try:
            timed = {**parts,
                     "adversarial_lists": cpu_median(lambda: nl.adversarial_lists(model, cfg, n_adv, gen), args.repeats),
                     "forward_backward_step": cpu_median(step(per_chunk), args.repeats),
                     "heldout_check": cpu_median(check(per_chunk), max(1, args.repeats // 2))}
            reduced = nl.SurrogateConfig(**MQ2008, max_steps=args.steps, eval_every=max(1, args.steps // 2),
                                         patience=10**6)
            start = time.process_time()
            nl._pretrain(reduced)
            pretrain_cpu = time.process_time() - start
        finally:
            nl.CHUNK_LISTS = original
        per_step = timed["generate_lists"] + timed["adversarial_lists"] + timed["forward_backward_step"]
        full = cfg.max_steps * per_step + (cfg.max_steps // cfg.eval_every) * timed["heldout_check"]
        result["variants"][name] = {"cpu_seconds": timed, "reduced_pretrain_cpu_seconds": pretrain_cpu,
                                    "estimated_full_pretrain_cpu_minutes": full / 60}
    before, after = (result["variants"][k] for k in result["variants"])
    result["ratios_before_over_after"] = {
        **{part: before["cpu_seconds"][part] / after["cpu_seconds"][part]
           for part in ("adversarial_lists", "forward_backward_step", "heldout_check")},
        "reduced_pretrain": before["reduced_pretrain_cpu_seconds"] / after["reduced_pretrain_cpu_seconds"]}
    text = json.dumps(result, indent=1)
    print(text)
    if args.out:
        args.out.write_text(text + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
