#!/usr/bin/env bash
# Build the double-clickable one-folder app from a checkout.
#
#   packaging/build.sh [--install]
#
# Uses the venv in $TICKBENCH_VENV (default: <checkout>/.venv). A missing venv is created and
# `pip install -e ".[build]"` fills it; an existing one is reinstalled only with --install or when
# PyInstaller or the app cannot be imported. Output folders: $TICKBENCH_DIST (default <checkout>/dist)
# and $TICKBENCH_WORK (default <checkout>/build). Result: $TICKBENCH_DIST/tickbench/tickbench.
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
VENV=${TICKBENCH_VENV:-$ROOT/.venv}
DIST=${TICKBENCH_DIST:-$ROOT/dist}
WORK=${TICKBENCH_WORK:-$ROOT/build}
PYTHON=${PYTHON:-python3}        # interpreter used only to create a missing venv (3.11+)

install=0
case "${1:-}" in
    --install) install=1 ;;
    "") ;;
    *) echo "usage: packaging/build.sh [--install]" >&2; exit 2 ;;
esac

if [[ ! -x "$VENV/bin/python" ]]; then
    echo "== creating venv $VENV"
    "$PYTHON" -m venv "$VENV"
    install=1
fi
if [[ $install == 0 ]] && ! "$VENV/bin/python" -c "import PyInstaller, _pyinstaller_hooks_contrib, app, widgets, workloads" 2>/dev/null; then
    install=1
fi
if [[ $install == 1 ]]; then
    echo "== pip install -e \".[build]\" into $VENV"
    "$VENV/bin/python" -m pip install --upgrade pip
    "$VENV/bin/python" -m pip install -e "$ROOT[build]" "pyinstaller-hooks-contrib>=2025.1"
fi

echo "== pyinstaller $("$VENV/bin/python" -c 'import PyInstaller; print(PyInstaller.__version__)')," \
     "PySide6 $("$VENV/bin/python" -c 'import PySide6; print(PySide6.__version__)')"
SECONDS=0
# Run from the checkout so the spec's relative paths and `app`/`workloads` resolve to this tree.
cd "$ROOT"
"$VENV/bin/python" -m PyInstaller --clean --noconfirm --log-level WARN \
    --distpath "$DIST" --workpath "$WORK" packaging/tickbench.spec
build_seconds=$SECONDS

APP=$DIST/tickbench/tickbench
[[ -x "$APP" ]] || { echo "build.sh: PyInstaller finished but $APP is missing" >&2; exit 1; }
echo "== built in ${build_seconds} s"
echo "== app:  $APP"
echo "== size: $(du -sh "$DIST/tickbench" | cut -f1) ($DIST/tickbench)"
echo "== try:  QT_QPA_PLATFORM=offscreen $APP --self-test    or    $VENV/bin/python packaging/smoke_test.py --app $APP"
echo "== desktop entry: $DIST/tickbench/install-desktop-entry.sh"
