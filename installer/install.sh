#!/usr/bin/env bash
# README step 1: set smllm up on a fresh machine that has python3 (>= 3.10) and access
# to the package index.
#
#   installer/install.sh [PROJECT_DIR]
#
# 1. creates an isolated virtual environment (reused when it exists):
#      $SMLLM_VENV, else $SMLLM_HOME/venv, else ${XDG_DATA_HOME:-~/.local/share}/smllm/venv
# 2. pip-installs this clone of smllm into it (not editable: the clone can move later)
# 3. runs `smllm install --project PROJECT_DIR` (default: the current folder), which
#    merges smllm's hooks into PROJECT_DIR/.claude/settings.json with the venv's
#    absolute interpreter path
# After it, `claude` run in PROJECT_DIR is journaled and governed by smllm.
#
# Knobs: PYTHON (interpreter to build the venv with, default python3), SMLLM_VENV,
#        SMLLM_PIP_ARGS (extra pip arguments, e.g. --index-url or --find-links).
set -euo pipefail

say() { printf 'smllm-installer: %s\n' "$*"; }
die() { printf 'smllm-installer: error: %s\n' "$*" >&2; exit 1; }

case "${1:-}" in
  -h|--help) sed -n '2,17p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
esac
[ "$#" -le 1 ] || die "too many arguments (usage: installer/install.sh [PROJECT_DIR])"

REPO="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
PROJECT="${1:-$PWD}"
[ -d "$PROJECT" ] || die "project folder $PROJECT does not exist (create it first)"
PROJECT="$(cd "$PROJECT" && pwd)"
PY="${PYTHON:-python3}"
command -v "$PY" >/dev/null 2>&1 || die "$PY not found (install Python >= 3.10, or set PYTHON=/path/to/python3)"
"$PY" -c 'import sys; sys.exit(0 if sys.version_info >= (3, 10) else 1)' \
  || die "$("$PY" -V 2>&1) is too old: smllm needs Python >= 3.10 (set PYTHON=/path/to/python3.10+)"

if [ -n "${SMLLM_VENV:-}" ]; then VENV="$SMLLM_VENV"
elif [ -n "${SMLLM_HOME:-}" ]; then VENV="$SMLLM_HOME/venv"
else VENV="${XDG_DATA_HOME:-$HOME/.local/share}/smllm/venv"
fi

if [ -x "$VENV/bin/python" ]; then
  say "reusing the environment $VENV"
else
  say "creating an isolated environment in $VENV (with $("$PY" -V 2>&1))"
  ( umask 077 && mkdir -p "$(dirname "$VENV")" )  # the store is private (0700)
  "$PY" -m venv "$VENV" \
    || die "could not create a virtual environment (on Debian/Ubuntu: apt install python3-venv)"
fi

say "installing smllm from $REPO into it"
# shellcheck disable=SC2086 # SMLLM_PIP_ARGS is a list of words on purpose
"$VENV/bin/python" -m pip install --quiet --disable-pip-version-check --no-input \
  ${SMLLM_PIP_ARGS:-} "$REPO" \
  || die "pip could not install smllm (check access to the package index, or set SMLLM_PIP_ARGS)"

say "adding smllm's hooks to $PROJECT/.claude/settings.json"
"$VENV/bin/smllm" install --project "$PROJECT"

say "done: $("$VENV/bin/smllm" --version) in $VENV"
say "next: run \`claude\` in $PROJECT; check the set-up with: $VENV/bin/smllm doctor --project $PROJECT"
say "optional: put $VENV/bin on your PATH to use the smllm command directly"
