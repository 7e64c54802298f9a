#!/usr/bin/env bash
# Sets up glassgrad in ./.venv (plus Graphviz's `dot` when missing), then runs:
#   bash bootstrap.sh            -> the app on lesson 1 (plain text when there is no terminal)
#   bash bootstrap.sh test       -> the whole test suite
set -euo pipefail
cd "$(dirname "$0")"
mode="${1:-run}"

say() { printf '\033[1m[glassgrad]\033[0m %s\n' "$*" >&2; }

if ! command -v dot >/dev/null 2>&1; then
    say "installing Graphviz (dot was not found)"
    SUDO=""; [ "$(id -u)" -ne 0 ] && SUDO="sudo"
    $SUDO apt-get update -qq >/dev/null
    DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq graphviz >/dev/null
fi
if [ "$mode" = "test" ] && ! command -v tmux >/dev/null 2>&1; then
    say "installing tmux (used by the end-to-end test)"
    SUDO=""; [ "$(id -u)" -ne 0 ] && SUDO="sudo"
    $SUDO apt-get update -qq >/dev/null || true
    DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq tmux >/dev/null || say "tmux unavailable; its test will skip"
fi

PY="${PYTHON:-python3}"
if [ ! -x .venv/bin/python ]; then
    say "creating .venv"
    "$PY" -m venv .venv
fi
stamp=".venv/.glassgrad-installed"
if [ ! -f "$stamp" ] || [ pyproject.toml -nt "$stamp" ]; then
    say "installing glassgrad and its dependencies"
    .venv/bin/python -m pip install -q --upgrade pip >/dev/null
    .venv/bin/python -m pip install -q -e '.[test]'
    touch "$stamp"
fi

case "$mode" in
    run)
        shift || true
        [ $# -eq 0 ] && set -- lesson 1
        exec .venv/bin/glassgrad "$@"
        ;;
    test)
        shift || true
        set +e
        .venv/bin/python -m pytest -q -p no:cacheprovider "$@"
        rc=$?
        set -e
        if [ "$rc" -eq 5 ]; then say "pytest collected no tests: that is a failure"; exit 1; fi
        exit "$rc"
        ;;
    *)
        echo "usage: bash bootstrap.sh [run|test] [args...]" >&2; exit 2;;
esac
