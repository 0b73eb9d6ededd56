# Two entry points: `make demo` runs the main job on the bundled corpus, `make test`
# runs the suite. Both create .venv and install the package into it first.
PYTHON ?= python3
VENV ?= .venv
PY := $(VENV)/bin/python
DEMO_DIR ?= demo_output
# pytest-xdist workers; whole files go to one worker, so a module's fixtures are built once.
# Most tests run one busy thread (tracing, TFLite conversion, small models), so two workers
# keep two cores busy. TEST_WORKERS=0 runs the suite in this process.
TEST_WORKERS ?= 2

.PHONY: demo test install clean

install: $(VENV)/.installed

$(VENV)/.installed: setup.py
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet -e '.[test]'
	touch $@

demo: install
	$(PY) examples/demo/run_demo.py --outdir $(DEMO_DIR)

test: install
	$(PY) -m pytest -n $(TEST_WORKERS) --dist loadfile test

clean:
	rm -rf $(VENV) $(DEMO_DIR)
