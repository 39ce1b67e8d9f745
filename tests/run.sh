#!/usr/bin/env bash
# README command 2: run every test from a fresh clone.
# Creates the virtual environment (.venv, reused), installs smllm with its dev extras,
# installs the pinned Claude Code, Codex, GitHub Copilot and Gemini CLIs for the end-to-end
# tests into a cache folder
# (reused between runs), then runs pytest on two workers. Extra arguments go to pytest.
set -euo pipefail
cd "$(dirname "$0")/.."

# Debian installs some of the tools below in /usr/sbin (iptables, for Copilot CLI's sandbox),
# which a user's PATH or a bare environment may lack
case ":$PATH:" in *:/usr/sbin:*) ;; *) PATH="$PATH:/usr/sbin:/sbin" ;; esac
export PATH
PY="${PYTHON:-python3}"
VENV="${SMLLM_TEST_VENV:-.venv}"
"$PY" -c 'import sys; sys.exit(0 if sys.version_info >= (3, 10) else "smllm needs Python >= 3.10")'
if [ ! -x "$VENV/bin/python" ]; then
  echo "== creating $VENV"
  "$PY" -m venv "$VENV"
fi
# Debian packages (tests/system-packages.txt): real services and tools the tests start themselves
missing=()
while read -r pkg proof _; do
  case "$pkg" in ''|'#'*) continue ;; esac
  # shellcheck disable=SC2086 - the proof may be a glob (a versioned folder)
  compgen -G "$proof" >/dev/null || missing+=("$pkg")
done < tests/system-packages.txt
if [ "${#missing[@]}" -gt 0 ]; then
  echo "== installing Debian packages: ${missing[*]}"
  if [ "$(id -u)" = 0 ]; then as_root=(); elif command -v sudo >/dev/null; then as_root=(sudo -n); else
    echo "tests/run.sh: the tests need the Debian packages ${missing[*]}: install them (apt-get install ${missing[*]}) or run as root" >&2
    exit 1
  fi
  export DEBIAN_FRONTEND=noninteractive
  "${as_root[@]}" apt-get update -qq
  "${as_root[@]}" apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi
echo "== installing smllm with its dev dependencies"
"$VENV/bin/python" -m pip install --quiet --disable-pip-version-check -e '.[dev]'
echo "== installing the pinned Claude Code CLI for the end-to-end tests"
"$VENV/bin/python" tests/e2e/claude_cli.py ensure
echo "== installing the pinned Codex CLI for the end-to-end tests"
"$VENV/bin/python" tests/e2e/codex_cli.py ensure
echo "== installing the pinned GitHub Copilot CLI for the end-to-end tests"
"$VENV/bin/python" tests/e2e/copilot_cli.py ensure
echo "== installing the pinned Gemini CLI for the end-to-end tests"
"$VENV/bin/python" tests/e2e/gemini_cli.py ensure
echo "== running the tests"
# two workers by default (SMLLM_TEST_WORKERS; 0 runs in this process): the end-to-end tests
# spend most of their time waiting on the real CLIs, so two of them share two cores well
exec "$VENV/bin/python" -m pytest -n "${SMLLM_TEST_WORKERS:-2}" "$@"
