# The two commands: `make all` (run the pipeline) and `make test` (run the tests);
# `make eval` scores segmentation and extracted fields on the annotated fixtures (and the seeds)
# against tests/eval_baseline.json, dedup on tests/fixtures/dedup against its baseline.json, and
# the real-world corpus's dev split (tests/fixtures/real) against tests/real_eval_baseline.json;
# it stops at the first gate that fails. `make eval-test` scores the held-out test split.
# Both create .venv and install the project with its dependencies when missing: `make all` what a
# run needs, `make test` also the test tools, the sentence-transformers embedder and Ray (the
# extras of pyproject.toml).

PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed
TEST_STAMP := $(VENV)/.installed-test
CORPUS ?= corpora/sample
OUT    ?= outputs/$(notdir $(abspath $(CORPUS)))
ARGS   ?=

# Nothing may download a model at run time: the embedders load from installed packages.
export HF_HUB_OFFLINE = 1
export TRANSFORMERS_OFFLINE = 1
export TOKENIZERS_PARALLELISM = false

N          ?= 1000
SEED       ?= 0
BENCH_ARGS ?=

.PHONY: all test eval eval-test install clean-outputs browser bench bench-corpus

all: $(STAMP)
	$(BIN)/python -m pipeline run "$(CORPUS)" --out "$(OUT)" $(ARGS)

test: $(TEST_STAMP) browser
	$(BIN)/python -m pytest -q -n auto --dist worksteal

# The report's browser test drives Debian's headless Chromium (tests/test_report.py) and checks
# that Chinese renders, with the Noto CJK fonts; installing them needs root (CI runs as root).
# Without Chromium that test skips, and fails under CI; without the fonts its CJK check fails.
browser:
	@{ command -v chromium >/dev/null 2>&1 && fc-list 2>/dev/null | grep -q "Noto Sans CJK"; } || { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends chromium fonts-noto-cjk; } \
	  || echo "warning: could not install chromium and fonts-noto-cjk (needs root); the report's browser test will skip (fail under CI)"

eval: $(STAMP)
	$(BIN)/python -m evaluation.evaluate tests/fixtures/segmentation --baseline tests/eval_baseline.json
	$(BIN)/python -m evaluation.evaluate_dedup tests/fixtures/dedup --baseline tests/fixtures/dedup/baseline.json
	$(BIN)/python -m evaluation.evaluate_real --split dev --baseline tests/real_eval_baseline.json

# The real-world corpus's test split (tests/fixtures/real/test): scored only on request, no floors.
eval-test: $(STAMP)
	$(BIN)/python -m evaluation.evaluate_real --split test

# Benchmarks (bench/README.md): `make bench-corpus N=1000 SEED=0` writes a generated corpus;
# `make bench` times every stage on 1k/10k/50k articles against jieba, OpenCC and the embedder.
bench-corpus: $(STAMP)
	$(BIN)/python -m bench.generate "outputs/bench-corpus-$(N)-$(SEED)" --n $(N) --seed $(SEED)

bench: $(STAMP)
	$(BIN)/python -m bench.run $(BENCH_ARGS)

install: $(STAMP)

$(STAMP): pyproject.toml
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e .
	touch $(STAMP)

# torch is installed first, pinned: 2.13.0 is the local CPU build (any other pulls CUDA).
$(TEST_STAMP): $(STAMP)
	$(BIN)/python -m pip install --quiet "torch==2.13.0"
	$(BIN)/python -m pip install --quiet -e ".[test,ray]"
	touch $(TEST_STAMP)

clean-outputs:
	find outputs -mindepth 1 -maxdepth 1 ! -name .gitkeep -exec rm -rf {} +
