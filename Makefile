# Two commands on a fresh machine; each creates what it needs first:
#   make render STACK=dev   the main job: the stack's preview, offline, in build/<stack>/
#   make test               the tests (pytest under Pulumi's mock engine) and the linters
# `make help` lists every target.
#
# Virtualenvs are made with uv from the one lock, uv.lock (pyproject.toml's dependencies and
# groups, every package at an exact version and hash): .venv (the program's packages, the
# virtualenv Pulumi.yaml names, so `pulumi up` uses the same ones; `make test` adds the test
# group to it) and .venv-lint (the lint group, kept out of the program's environment); Checkov
# has a lock of its own, security/checkov/, in .venv-checkov. Without uv on the PATH, uv itself
# is installed from PyPI into .uv/ (requirements-uv.txt, hashed, exported from uv.lock).

PYTHON ?= python3
# Python may cache bytecode (.pyc, in git-ignored __pycache__ folders). With
# PYTHONDONTWRITEBYTECODE set, as some machines set it, every test process compiles the
# thousand modules it imports from source again: about 3 s a process, most of a warm
# `make test`'s difference (docs/design/house.md, "How long `make test` takes").
unexport PYTHONDONTWRITEBYTECODE
STACK  ?= dev
VENV   := .venv
LINT_VENV := .venv-lint
STAMP  := $(VENV)/.installed
TEST_STAMP := $(VENV)/.installed-test
MUTATION_STAMP := $(VENV)/.installed-mutation
LINT_STAMP := $(LINT_VENV)/.installed
CHECKOV_VENV := .venv-checkov
CHECKOV_STAMP := $(CHECKOV_VENV)/.installed
PROOF_VENV := .venv-proof
PROOF_STAMP := $(PROOF_VENV)/.installed
LOWEST_VENV := .venv-lowest
LOWEST := build/lowest
STACKS := $(patsubst Pulumi.%.yaml,%,$(wildcard Pulumi.*.yaml))

UV_BOOTSTRAP := .uv
UV ?= $(or $(shell command -v uv 2>/dev/null),$(UV_BOOTSTRAP)/bin/uv)
# Every install is from the lock as committed (--locked): a pyproject.toml changed without
# `make lock` stops with uv's "The lockfile needs to be updated". uv.lock is universal, one
# file for every Python version the README supports, and uv checks each wheel's hash from it.
SYNC := $(UV) sync --quiet --locked
# The lock's packages as hashed requirements files, for what reads no uv.lock: Pulumi's pip
# toolchain (requirements.txt, the program's packages) and the bootstrap's pip (requirements-uv.txt).
EXPORT := $(UV) export --quiet --locked --format requirements-txt --no-emit-project --no-header
EXPORTED_HEADER = echo "\# Generated from uv.lock by \`make lock\` ($(1)); \`make lint\` checks it. Do not edit."
export_program = { $(call EXPORTED_HEADER,the program's packages: Pulumi's pip toolchain installs them); $(EXPORT); } > $(1)
export_uv = { $(call EXPORTED_HEADER,uv for a machine without it: make installs it into .uv/); $(EXPORT) --only-group uv; } > $(1)

.DEFAULT_GOAL := help
.PHONY: help render test unit lowest lint locked snapshots urns prices schema config-docs package-args lock bench-setup bench-watch mutation proof-local proof-gpu fuzz venv clean

help: ## list the targets
	@grep -E '^[a-z-]+:.*## ' $(MAKEFILE_LIST) | awk -F':.*## ' '{printf "  make %-12s %s\n", $$1, $$2}'

render: $(STAMP) ## the stack's preview, offline, in build/<stack>/ (STACK=dev by default; CONFIG_FILE=<path> reads another stack file; STRICT=1 exits 3 where `pulumi up` would stop; WRITE_STATE=<path> also writes the state the `up` would leave, a rehearsal; STATE_FILE=<path> renders the day after from such a state or a `pulumi stack export`)
	$(VENV)/bin/python -m tools.render $(if $(CONFIG_FILE),--config-file $(CONFIG_FILE)$(if $(filter-out file,$(origin STACK)), --stack $(STACK)),--stack $(STACK))$(if $(STRICT), --strict)$(if $(STATE_FILE), --state-file $(STATE_FILE))$(if $(WRITE_STATE), --write-state $(WRITE_STATE))

# The suite and the linters share nothing (the linters read the committed snapshots): they
# run side by side, each making its own virtualenv first, and the suite spreads over both cores.
test: ## the tests and the linters, side by side on two cores
	@$(MAKE) --no-print-directory -j2 --output-sync=target unit lint

unit: $(TEST_STAMP) ## pytest under Pulumi's mock engine, on two workers
	$(VENV)/bin/python -m pytest -n 2

# The lower bounds hold: the suite against the lowest version of each direct dependency that
# pyproject.toml's dependencies and test group allow (uv's --resolution lowest-direct; what
# those need, at the newest that fits), in a virtualenv of its own. A fresh resolution each run
# into build/lowest/, never uv.lock: `uv pip compile` reads pyproject.toml and writes only its
# -o file. A bound that resolves to a newer release (another package needs more) fails before
# the tests (tools/lowest.py): it would claim a version nothing tested (docs/design/house.md, "Dependencies").
lowest: $(UV) ## the tests at the lowest versions pyproject.toml allows (uv --resolution lowest-direct)
	@mkdir -p $(LOWEST)
	$(UV) venv --quiet --allow-existing --python $(PYTHON) $(LOWEST_VENV)
	$(UV) pip compile --quiet --resolution lowest-direct --python $(LOWEST_VENV)/bin/python \
	  pyproject.toml --group test -o $(LOWEST)/requirements.txt
	$(UV) pip sync --quiet --python $(LOWEST_VENV)/bin/python $(LOWEST)/requirements.txt
	$(LOWEST_VENV)/bin/python -m tools.lowest
	$(LOWEST_VENV)/bin/python -m pytest -n 2

# A stack's Checkov settings: its own, or those of any stack a team adds (security/checkov-aks.yaml).
checkov_settings = $(or $(wildcard security/checkov-aks-$(1).yaml),security/checkov-aks.yaml)

# The workflows against GitHub's schema and zizmor's audits; every stack file against the
# stack schema; Checkov on every stack's manifests and Azure resources, each stack with its
# own settings (tools/checkov_runs.py: one Checkov start, a forked run per setting). Checkov
# reads the committed renderings, tests/snapshots/<stack>/, which are what a pull request's
# reviewer sees; tests/test_snapshots.py, in the same `make test`, fails unless they are
# exactly what the program renders now (`make snapshots` refreshes them). Whatever the stacks
# are called; with no stack file at all (a team between deleting the samples and adding its
# own), the two per-stack lines have nothing to check and expand to nothing.
# First, Pulumi.yaml and every stack file read as Pulumi's CLI reads them (tools/stack_yaml.py;
# PyYAML is all it needs, so .venv-lint runs it): a value the CLI reads otherwise than written
# or than YAML 1.2 does (`017`), one line each, with what to write, before the schema's word.
lint: $(LINT_STAMP) $(CHECKOV_STAMP) $(STAMP) locked ## the locks, ruff, mypy, import-linter, check-jsonschema, zizmor and Checkov (on the committed snapshots)
	$(LINT_VENV)/bin/ruff check .
	$(LINT_VENV)/bin/ruff format --check .
	$(VENV)/bin/python -m mypy .
	$(LINT_VENV)/bin/lint-imports --no-cache
	$(LINT_VENV)/bin/check-jsonschema --builtin-schema vendor.github-workflows .github/workflows/*.yml
	$(LINT_VENV)/bin/check-jsonschema --builtin-schema vendor.dependabot .github/dependabot.yml
	$(LINT_VENV)/bin/python -m tools.stack_yaml Pulumi.yaml $(STACKS:%=Pulumi.%.yaml)
	$(if $(STACKS),$(LINT_VENV)/bin/check-jsonschema --schemafile schema/stack.schema.json $(STACKS:%=Pulumi.%.yaml))
	$(LINT_VENV)/bin/zizmor --offline --min-severity medium .github
	$(if $(STACKS),$(CHECKOV_VENV)/bin/python tools/checkov_runs.py --config-file security/checkov-kubernetes.yaml \
	  $(foreach s,$(STACKS),-f tests/snapshots/$(s)/manifests.yaml) \
	  $(foreach s,$(STACKS),-- --config-file $(call checkov_settings,$(s)) -f tests/snapshots/$(s)/azure.json))

# Every Pulumi.<stack>.yaml; the folder of a stack whose file is gone is removed (tools/render.py).
# And the component package's schema, as its provider host answers GetSchema (tools/package_schema.py).
snapshots: $(STAMP) ## re-render tests/snapshots/ after an intended change, and the package's schema
	$(VENV)/bin/python -m tools.render --snapshots
	$(VENV)/bin/python -m tools.package_schema --write

# The URNs the 1.0 sample stacks declared, pinned in tests/fixtures/stacks-1.0/urns.txt (tools/urns.py
# says when to write it again); tests/test_urns.py fails while one is neither declared nor aliased.
urns: $(STAMP) ## print every URN the 1.0 sample stacks declare (make urns > tests/fixtures/stacks-1.0/urns.txt)
	@$(VENV)/bin/python -m tools.urns

prices: $(STAMP) ## refresh the shipped price snapshot components/catalog/prices.json from the Retail Prices API (needs the network)
	$(VENV)/bin/python -m tools.prices

schema: $(STAMP) ## regenerate schema/stack.schema.json from components/config/
	$(VENV)/bin/python -m tools.schema

# The package's GpuEnvironment takes every key of the stack schema as an input (docs/design/package.md).
package-args: schema ## regenerate the Args of the package's components (components/environment/args.py) from the stack schema and kinds.py
	$(VENV)/bin/python -m tools.package_args

# Every key's default, what is allowed and what it does, from the schema (tools/config_docs.py),
# the timings docs/proof.md states from the program's constants (tools/doc_figures.py), and the
# README's and docs/existing-cluster.md's sample renders from the render (tools/render_sample.py);
# tests/test_config_docs.py, tests/test_docs_pages.py and tests/test_readme_sample.py fail while a committed page differs.
config-docs: package-args ## regenerate schema/stack.schema.json and the package's inputs, then docs/configuration-keys.md, the README's list of every key and sample render, and docs/proof.md's timings
	$(VENV)/bin/python -m tools.config_docs
	$(VENV)/bin/python -m tools.doc_figures
	$(VENV)/bin/python -m tools.render_sample

LOCKED := build/locked
# After an edit of pyproject.toml or security/checkov/pyproject.toml. Without --upgrade, uv keeps
# every locked version the edit leaves allowed; Dependabot proposes the upgrades (.github/dependabot.yml).
lock: $(UV) ## re-lock uv.lock and security/checkov/uv.lock, and export requirements.txt and requirements-uv.txt from uv.lock
	$(UV) lock --quiet
	$(UV) lock --quiet --project security/checkov
	@mkdir -p $(LOCKED)
	@$(call export_program,$(LOCKED)/requirements.txt)
	@$(call export_uv,$(LOCKED)/requirements-uv.txt)
	@# Copied only when changed: a new requirements-uv.txt makes make reinstall .uv/.
	@for f in requirements.txt requirements-uv.txt; do cmp -s $(LOCKED)/$$f $$f || cp $(LOCKED)/$$f $$f; done

# The locks match the project files (uv lock --check), and the exported files match uv.lock:
# what Pulumi installs is what the tests ran.
locked: $(UV)
	$(UV) lock --quiet --check
	$(UV) lock --quiet --check --project security/checkov
	@mkdir -p $(LOCKED)
	@$(call export_program,$(LOCKED)/requirements.txt)
	@$(call export_uv,$(LOCKED)/requirements-uv.txt)
	@cmp -s requirements.txt $(LOCKED)/requirements.txt || { echo "requirements.txt is not uv.lock's export: run make lock"; exit 1; }
	@cmp -s requirements-uv.txt $(LOCKED)/requirements-uv.txt || { echo "requirements-uv.txt is not uv.lock's export: run make lock"; exit 1; }

# Minutes, not seconds: not part of `make test` (docs/design/mutation.md says when to run it).
mutation: $(MUTATION_STAMP) ## mutation testing (cosmic-ray) of the managed pool's provider, the cost estimate and the prices
	$(VENV)/bin/python -m tools.mutation

# The Job's own script (proof/train_mnist.py) on this machine, without a GPU: it trains on
# digits it draws, on the CPU, and says so; then its tests (proof/tests/). Its PyTorch is the
# one the Job's default image carries, from uv.lock's proof group (docs/proof.md). All 500
# steps, as the Job runs them: the drawn digits pass the mark only late; a CPU takes minutes
# for what a GPU does in seconds, so the time limit is the CPU's.
proof-local: $(PROOF_STAMP) ## the Job's script trained here on the CPU, and its tests (PyTorch: several GB on Linux)
	$(PROOF_VENV)/bin/python proof/train_mnist.py --device cpu --data synthetic --max-seconds 1800
	$(PROOF_VENV)/bin/python -m pytest -q -p no:cacheprovider proof/tests

# The Job's script, as shipped, on this machine's CUDA GPU with the PyTorch already installed
# here: $(PYTHON) (python3, or PYTHON=/path/to/python); nothing is installed. It trains on
# MNIST when the script's mirror answers (one small file is fetched to find out), else on the
# digits it draws, as a pod with no egress does (PROOF_GPU_DATA=mnist or synthetic decides
# instead). One GPU: the first, unless CUDA_VISIBLE_DEVICES names one. Its PROOF line is
# printed and its whole log kept in $(PROOF_GPU_LOG); the exit status is the script's.
PROOF_GPU_LOG ?= build/proof-gpu.log
PROOF_GPU_DATA ?=
MNIST_PROBE := https://storage.googleapis.com/cvdf-datasets/mnist/t10k-labels-idx1-ubyte.gz
proof-gpu: ## the Job's script on this machine's CUDA GPU, with its own PyTorch (PYTHON=...); log in build/
	@mkdir -p $(dir $(PROOF_GPU_LOG))
	@data="$(PROOF_GPU_DATA)"; \
	if [ -z "$$data" ]; then \
	  if $(PYTHON) -c "import urllib.request; urllib.request.urlopen('$(MNIST_PROBE)', timeout=15).read()" 2>/dev/null; \
	  then data=mnist; else data=synthetic; echo "MNIST's mirror did not answer: training on drawn digits"; fi; \
	fi; \
	echo "$(PYTHON) proof/train_mnist.py --device cuda --data $$data (log: $(PROOF_GPU_LOG))"; \
	CUDA_VISIBLE_DEVICES="$${CUDA_VISIBLE_DEVICES-0}" $(PYTHON) proof/train_mnist.py --device cuda --data $$data \
	  --data-dir build/mnist > $(PROOF_GPU_LOG) 2>&1; status=$$?; \
	grep '^PROOF ' $(PROOF_GPU_LOG) || tail -n 5 $(PROOF_GPU_LOG); exit $$status

# Minutes: 10,000 generated configurations and saved files with fresh seeds (make test runs a
# few dozen with a fixed one); FUZZ_EXAMPLES sets how many per run kind (docs/configuration.md).
FUZZ_EXAMPLES ?= 5000
fuzz: $(TEST_STAMP) ## a long run of the generated-input test: 2 x FUZZ_EXAMPLES configurations, previews and deployments
	AKS_GPU_EXAMPLES=$(FUZZ_EXAMPLES) $(VENV)/bin/python -m pytest -q -n 2 -p no:randomly tests/test_generated_input.py tests/test_generated_files.py

bench-setup: ## time a cold set-up against a plain pip install (tools/bench_setup.sh)
	bash tools/bench_setup.sh

bench-watch: $(STAMP) ## time one look of the proof's watch on 10,000 events and a 1 MB message (tools/bench_watch.py)
	$(VENV)/bin/python -m tools.bench_watch

venv: $(STAMP)

$(UV_BOOTSTRAP)/bin/uv: requirements-uv.txt
	$(PYTHON) -m pip install --quiet --disable-pip-version-check --require-hashes --target $(UV_BOOTSTRAP) -r requirements-uv.txt
	@touch $@

# --seed puts pip in .venv too: Pulumi's pip toolchain (Pulumi.yaml) calls it (`pip list`,
# pulumi/pulumi sdk/python/toolchain/pip.go ListPackages); --inexact keeps it, and keeps the
# test group when `make render` syncs the program's packages after `make test`.
$(STAMP): pyproject.toml uv.lock $(UV)
	$(UV) venv --quiet --seed --allow-existing --python $(PYTHON) $(VENV)
	UV_PROJECT_ENVIRONMENT=$(VENV) $(SYNC) --inexact
	@touch $@

$(TEST_STAMP): pyproject.toml uv.lock $(STAMP)
	UV_PROJECT_ENVIRONMENT=$(VENV) $(SYNC) --inexact --group test
	@touch $@

$(MUTATION_STAMP): pyproject.toml uv.lock $(TEST_STAMP)
	UV_PROJECT_ENVIRONMENT=$(VENV) $(SYNC) --inexact --group mutation
	@touch $@

# The other virtualenvs hold one group each: UV_PROJECT_ENVIRONMENT names the one uv syncs.
$(LINT_STAMP): pyproject.toml uv.lock $(UV)
	$(UV) venv --quiet --allow-existing --python $(PYTHON) $(LINT_VENV)
	UV_PROJECT_ENVIRONMENT=$(LINT_VENV) $(SYNC) --only-group lint
	@touch $@

$(CHECKOV_STAMP): security/checkov/pyproject.toml security/checkov/uv.lock $(UV)
	$(UV) venv --quiet --allow-existing --python $(PYTHON) $(CHECKOV_VENV)
	UV_PROJECT_ENVIRONMENT=$(abspath $(CHECKOV_VENV)) $(SYNC) --project security/checkov
	@touch $@

$(PROOF_STAMP): pyproject.toml uv.lock $(UV)
	$(UV) venv --quiet --allow-existing --python $(PYTHON) $(PROOF_VENV)
	UV_PROJECT_ENVIRONMENT=$(PROOF_VENV) $(SYNC) --only-group proof
	@touch $@

clean: ## remove build/ and the virtualenvs
	rm -rf build $(VENV) $(LINT_VENV) $(CHECKOV_VENV) $(PROOF_VENV) $(LOWEST_VENV) $(UV_BOOTSTRAP)
