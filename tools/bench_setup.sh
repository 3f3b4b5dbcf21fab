#!/usr/bin/env bash
# `make bench-setup`: how long a newcomer waits on a fresh clone, against a plain pip install.
#
# In one run, on this machine, with every package cache empty and no uv on the PATH (as on
# a new machine; `make` then bootstraps uv from PyPI):
#   baseline  python3 -m venv + pip install of the card's five packages
#             (pulumi pulumi-azure-native pulumi-kubernetes pytest pyyaml)
#   render    make render STACK=dev   in a fresh clone of HEAD
#   test      make test               in the same clone, right after (it reuses .venv)
# and prints each time and the ratios to the baseline. Targets (issue #11): render <= 0.3x,
# test <= 0.8x. Wall-clock seconds: run it on an otherwise idle machine.
set -euo pipefail
repo="$(cd "$(dirname "$0")/.." && pwd)"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT

export PIP_NO_CACHE_DIR=1 UV_CACHE_DIR="$work/uv-cache" XDG_CACHE_HOME="$work/cache"
# No uv on the PATH: keep only the directories that do not provide one.
clean_path=""
IFS=: read -ra dirs <<<"$PATH"
for d in "${dirs[@]}"; do [[ -x "$d/uv" ]] || clean_path="${clean_path:+$clean_path:}$d"; done
export PATH="$clean_path"

calc() { python3 -c "print($1)"; }
timed() {
  local t0=$EPOCHREALTIME
  "$@" >"$work/last.log" 2>&1 || { cat "$work/last.log" >&2; exit 1; }
  calc "$EPOCHREALTIME - $t0"
}

git clone --quiet "$repo" "$work/clone"
# The README's dev; a project that replaced the samples (README, "Making it yours"): its first stack.
stack=dev
if [[ ! -e "$work/clone/Pulumi.dev.yaml" ]]; then
  files=("$work"/clone/Pulumi.*.yaml) && stack=${files[0]##*/Pulumi.} && stack=${stack%.yaml}
fi
baseline=$(timed bash -c "python3 -m venv '$work/pip-venv' && '$work/pip-venv/bin/pip' install --quiet pulumi pulumi-azure-native pulumi-kubernetes pytest pyyaml")
render=$(timed make -C "$work/clone" render STACK="$stack")
test=$(timed make -C "$work/clone" test)

printf '%-44s %7.1f s\n' "python3 -m venv + pip install (5 packages)" "$baseline"
printf '%-44s %7.1f s  %4.2fx  (target 0.30x)\n' "make render STACK=$stack (fresh clone)" "$render" "$(calc "$render / $baseline")"
printf '%-44s %7.1f s  %4.2fx  (target 0.80x)\n' "make test (after make render)" "$test" "$(calc "$test / $baseline")"
