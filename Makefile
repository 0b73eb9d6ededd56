# Two entry points: `make demo` runs the main job on the bundled corpus, `make test`
# runs the suite. Both create .venv and install the package into it first.
PYTHON ?= python3
VENV ?= .venv
PY := $(VENV)/bin/python
DEMO_DIR ?= demo_output

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
	$(PY) -m pytest test

clean:
	rm -rf $(VENV) $(DEMO_DIR)
