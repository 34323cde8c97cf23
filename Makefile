# The two commands of the README: `make demo` and `make test`. Both create .venv when missing.
PYTHON ?= python3
VENV   ?= .venv
PY     := $(VENV)/bin/python
STAMP  := $(VENV)/.modus-installed

.PHONY: demo test test-python test-editor snapshots bench clean chromium postgresql dist vsix

$(STAMP): pyproject.toml
	@test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet -e '.[test]'
	$(PY) -m compileall -q server protocol  # an editable install leaves its modules uncompiled
	@touch $@

demo: $(STAMP)
	$(PY) -m server demo

test: test-python test-editor

# Four workers: the end-to-end tests wait on subprocesses more than they compute (2 cores, 2,385
# tests: 5.5 min with four, 6.4 with three, and 1.3 of the 2 cores busy with three).
test-python: $(STAMP) chromium postgresql
	$(PY) -m pytest -q -n 4

# Debian's chromium when missing: browser_action's tests drive it (Playwright, the system's browser).
chromium:
	@editor-client/scripts/chromium.sh

# Debian's postgresql when missing: the team space tests start a throwaway cluster of their own.
postgresql:
	@scripts/postgresql.sh

# Writes tests/snapshots/prompts/ anew from the current prompts: read the diff before committing.
snapshots: $(STAMP)
	$(PY) -m pytest -q tests/test_prompt_snapshots.py --update-snapshots

test-editor: $(STAMP)
	MODUS_PYTHON=$(abspath $(PY)) editor-client/scripts/test.sh

bench: $(STAMP) chromium postgresql
	$(PY) -m compileall -q server protocol  # start-up is measured: no module compiled on the way
	@failed=0; for b in run agents checkpoints context search inbound sdk projectfiles webview browser firstrun space; do \
	  $(PY) bench/$$b.py || { failed=1; echo "bench/$$b.py: a target was missed"; }; \
	done; exit $$failed  # every benchmark prints, whatever an earlier one found

# The release files: the wheel and sdist (checked by twine, as PyPI would), and the .vsix with the
# server inside (editor-client/modus.vsix; `npm run package -- --target linux-x64` for an offline one).
dist: $(STAMP)
	rm -rf dist && $(PY) -m build --outdir dist . && $(PY) -m twine check --strict dist/*

vsix: $(STAMP)
	cd editor-client && { [ -d node_modules ] || npm ci --no-audit --no-fund --loglevel=error; } && MODUS_PYTHON=$(abspath $(PY)) npm run package

clean:
	rm -rf $(VENV) .pytest_cache build *.egg-info dist editor-client/bundled
