# Two commands on a fresh machine; each creates what it needs first.
#   make render STACK=dev   the program's desired state, offline, in build/<stack>/
#   make test               the test suite (pytest with Pulumi's mock engine), then the linters
# And one for reviewers:
#   make snapshots          refresh tests/snapshots/ after an intended change
# The virtualenv is .venv, the one Pulumi.yaml names, so `pulumi up` uses the same packages.
# The linters live in .venv-lint (requirements-lint.txt), away from the program's packages.

PYTHON ?= python3
VENV   := .venv
STACK  ?= dev
STAMP  := $(VENV)/.requirements-installed
LINT_VENV  := .venv-lint
LINT_STAMP := $(LINT_VENV)/.requirements-installed
STACKS := $(patsubst Pulumi.%.yaml,%,$(wildcard Pulumi.*.yaml))

.PHONY: render test unit lint snapshots venv clean

venv: $(STAMP)

$(STAMP): requirements.txt
	$(PYTHON) -m venv $(VENV)
	$(VENV)/bin/python -m pip install --quiet --disable-pip-version-check -r requirements.txt
	touch $@

$(LINT_STAMP): requirements-lint.txt
	$(PYTHON) -m venv $(LINT_VENV)
	$(LINT_VENV)/bin/python -m pip install --quiet --disable-pip-version-check -r requirements-lint.txt
	touch $@

render: $(STAMP)
	$(VENV)/bin/python -m tools.render --stack $(STACK)

test: unit lint

unit: $(STAMP)
	$(VENV)/bin/python -m pytest

# The workflows against GitHub's schema and zizmor's audits; Checkov on every stack's
# rendered Kubernetes manifests and on its Azure resources (rendered as an ARM template).
lint: $(STAMP) $(LINT_STAMP)
	$(LINT_VENV)/bin/check-jsonschema --builtin-schema vendor.github-workflows .github/workflows/*.yml
	$(LINT_VENV)/bin/check-jsonschema --builtin-schema vendor.dependabot .github/dependabot.yml
	$(LINT_VENV)/bin/zizmor --offline --min-severity medium .github
	$(VENV)/bin/python -m tools.render --all --out build/lint > /dev/null
	$(LINT_VENV)/bin/checkov --config-file security/checkov-kubernetes.yaml $(foreach s,$(STACKS),-f build/lint/$(s)/manifests.yaml)
	$(foreach s,$(STACKS),$(LINT_VENV)/bin/checkov --config-file security/checkov-aks-$(s).yaml -f build/lint/$(s)/azure.json &&) true

snapshots: $(STAMP)
	$(VENV)/bin/python -m tools.render --snapshots

clean:
	rm -rf build $(VENV) $(LINT_VENV)
