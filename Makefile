# Two commands on a fresh machine; each creates the virtualenv from requirements.txt first.
#   make render STACK=dev   the program's desired state, offline, in build/<stack>/
#   make test               the test suite (pytest with Pulumi's mock engine)
# The virtualenv is .venv, the one Pulumi.yaml names, so `pulumi up` uses the same packages.

PYTHON ?= python3
VENV   := .venv
STACK  ?= dev
STAMP  := $(VENV)/.requirements-installed

.PHONY: render test venv clean

venv: $(STAMP)

$(STAMP): requirements.txt
	$(PYTHON) -m venv $(VENV)
	$(VENV)/bin/python -m pip install --quiet --disable-pip-version-check -r requirements.txt
	touch $@

render: $(STAMP)
	$(VENV)/bin/python -m tools.render --stack $(STACK)

test: $(STAMP)
	$(VENV)/bin/python -m pytest

clean:
	rm -rf build $(VENV)
