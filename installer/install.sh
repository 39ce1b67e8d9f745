#!/usr/bin/env bash
# README step 1: set smllm up on a fresh machine that has python3 (>= 3.10) and access
# to the package index.
#
#   installer/install.sh [--no-modify-path] [--harness claude|codex|copilot|gemini] [PROJECT_DIR]
#
# 1. creates an isolated virtual environment (reused when it exists):
#      $SMLLM_VENV, else $SMLLM_HOME/venv, else ${XDG_DATA_HOME:-~/.local/share}/smllm/venv
# 2. pip-installs this clone of smllm into it (not editable: the clone can move later),
#    with its extras `serve` (the web viewer) and `team` (the PostgreSQL team store)
# 3. puts the `smllm` command on PATH the way pipx and `uv tool` do: a link in your bin
#    folder ($SMLLM_BIN_DIR, else $XDG_BIN_HOME, else ~/.local/bin) to the environment's
#    smllm; when new login shells would not have that folder on PATH, it adds one line to
#    ~/.profile (and ~/.bash_profile, ~/.bash_login or ~/.zprofile where they exist) and
#    says so; --no-modify-path (or SMLLM_NO_MODIFY_PATH=1) only prints the line to add
# 4. runs `smllm install --project PROJECT_DIR` (default: the current folder), which
#    merges smllm's hooks into PROJECT_DIR/.claude/settings.json (each one short command:
#    the venv's bin/smllm-hook EVENT) and ends with a summary of what it set up
# After it, `claude` is governed (`codex` with --harness codex, `copilot` with --harness
# copilot, `gemini` with --harness gemini: smllm install --harness NAME).
#
# Knobs: PYTHON (interpreter to build the venv with, default python3), SMLLM_VENV,
#        SMLLM_BIN_DIR, SMLLM_NO_MODIFY_PATH=1,
#        SMLLM_PIP_ARGS (extra pip arguments, e.g. --index-url or --find-links),
#        SMLLM_EXTRAS (default "serve,team"; empty for smllm alone).
set -euo pipefail

say() { printf 'smllm-installer: %s\n' "$*"; }
die() { printf 'smllm-installer: error: %s\n' "$*" >&2; exit 1; }

MODIFY_PATH=1
[ "${SMLLM_NO_MODIFY_PATH:-}" = 1 ] && MODIFY_PATH=0
HARNESS=claude
USAGE="usage: installer/install.sh [--no-modify-path] [--harness claude|codex|copilot|gemini] [PROJECT_DIR]"
while [ "$#" -gt 0 ]; do
  case "$1" in
    -h|--help) sed -n '2,25p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    --no-modify-path) MODIFY_PATH=0; shift ;;
    --harness) [ "$#" -ge 2 ] || die "--harness needs claude, codex, copilot or gemini ($USAGE)"; HARNESS=$2; shift 2 ;;
    --harness=*) HARNESS=${1#--harness=}; shift ;;
    -*) die "unknown option $1 ($USAGE)" ;;
    *) break ;;
  esac
done
case "$HARNESS" in claude|codex|copilot|gemini) ;; *) die "unknown harness $HARNESS ($USAGE)" ;; esac
[ "$#" -le 1 ] || die "too many arguments ($USAGE)"

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

EXTRAS="${SMLLM_EXTRAS-serve,team}"
say "installing smllm${EXTRAS:+[$EXTRAS]} from $REPO into it"
# shellcheck disable=SC2086 # SMLLM_PIP_ARGS is a list of words on purpose
"$VENV/bin/python" -m pip install --quiet --disable-pip-version-check --no-input \
  ${SMLLM_PIP_ARGS:-} "$REPO${EXTRAS:+[$EXTRAS]}" \
  || die "pip could not install smllm (check access to the package index, or set SMLLM_PIP_ARGS)"

# ---------------------------------------------------------------- smllm on PATH
BIN="${SMLLM_BIN_DIR:-${XDG_BIN_HOME:-$HOME/.local/bin}}"
LINK="$BIN/smllm"
TARGET="$VENV/bin/smllm"
mkdir -p "$BIN"
if [ -L "$LINK" ] || [ ! -e "$LINK" ]; then
  ln -sfn "$TARGET" "$LINK"
else
  die "$LINK exists and is not a link (an smllm from elsewhere?); move it aside, or set SMLLM_BIN_DIR to another folder"
fi
say "linked $LINK -> $TARGET"

# the line that puts $BIN on PATH, written with $HOME when $BIN is under it
case "$BIN" in
  "$HOME"/*) SHOWN_BIN="\$HOME/${BIN#"$HOME"/}" ;;
  *) SHOWN_BIN="$BIN" ;;
esac
PATH_LINE="export PATH=\"$SHOWN_BIN:\$PATH\""
MARK="# added by smllm's installer: the smllm command"

on_path() {  # is folder $1 in the colon-separated list $2?
  case ":$2:" in *":$1:"*) return 0 ;; *) return 1 ;; esac
}

login_path() {  # PATH as a new login shell sets it (the user's own profile files included)
  env -i HOME="$HOME" USER="${USER:-}" LOGNAME="${LOGNAME:-}" SHELL=/bin/bash TERM=dumb \
    bash -l -c 'printf "%s" "$PATH"' </dev/null 2>/dev/null || true
}

add_to_profile() {  # append the marked line to file $1 unless it is there already
  if [ -f "$1" ] && grep -qF "$MARK" "$1"; then return 1; fi
  printf '\n%s\n%s\n' "$MARK" "$PATH_LINE" >>"$1"
}

if on_path "$BIN" "$(login_path)"; then
  if on_path "$BIN" "$PATH"; then
    say "smllm is on your PATH ($BIN)"
  else
    say "new login shells have $BIN on PATH; for this shell run: $PATH_LINE"
  fi
elif [ "$MODIFY_PATH" = 1 ]; then
  changed=
  for f in "$HOME/.profile" "$HOME/.bash_profile" "$HOME/.bash_login" "$HOME/.zprofile"; do
    case "$f" in
      "$HOME/.profile") ;;  # read by sh, dash, and bash when the two below are absent
      *) [ -f "$f" ] || continue ;;
    esac
    if add_to_profile "$f"; then changed="$changed ${f/#$HOME/\~}"; fi
  done
  if [ -n "$changed" ]; then
    say "added $BIN to PATH in:$changed (new login shells); for this shell run: $PATH_LINE"
  else
    say "your profile already adds $BIN to PATH, but a login shell does not get it; add this line where your shell reads it: $PATH_LINE"
  fi
else
  say "$BIN is not on PATH; add this line to ~/.profile (or your shell's profile): $PATH_LINE"
fi

# ---------------------------------------------------------------- the project
if [ "$HARNESS" != claude ]; then
  case "$HARNESS" in
    codex) say "adding smllm's hooks to $PROJECT/.codex/hooks.json (each trusted in Codex's config.toml)"
           NEXT="run \`codex\` in $PROJECT (trust the folder when it asks)" ;;
    copilot) say "adding smllm's hooks to $PROJECT/.github/hooks/smllm.json (the folder trusted in ~/.copilot/config.json)"
             NEXT="run \`copilot\` in $PROJECT" ;;
    gemini) say "adding smllm's hooks to $PROJECT/.gemini/settings.json (Gemini's tool sandbox on)"
            NEXT="run \`gemini\` in $PROJECT (trust the folder when it asks)" ;;
  esac
  "$VENV/bin/smllm" install --harness "$HARNESS" --project "$PROJECT"
  say "done: $("$VENV/bin/smllm" --version) in $VENV"
  say "next: $NEXT; check the set-up with: smllm doctor --harness $HARNESS --project $PROJECT"
  exit 0
fi
say "adding smllm's hooks to $PROJECT/.claude/settings.json"
"$VENV/bin/smllm" install --project "$PROJECT"

say "done: $("$VENV/bin/smllm" --version) in $VENV"
say "next: run \`claude\` in $PROJECT; check the set-up with: smllm doctor --project $PROJECT"
