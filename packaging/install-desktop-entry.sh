#!/usr/bin/env bash
# Install (or remove) the Tickbench desktop entry for the current user, pointing at a built app.
#
#   install-desktop-entry.sh [PATH/TO/tickbench]      default: the tickbench next to this script
#                                                     (dist folder), else ../dist/tickbench/tickbench
#   install-desktop-entry.sh --uninstall
#
# Writes $XDG_DATA_HOME/applications/tickbench.desktop (default ~/.local/share/applications) and
# the icon under $XDG_DATA_HOME/icons/hicolor/. Nothing outside the user's data folder is touched.
set -euo pipefail

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
DATA_HOME=${XDG_DATA_HOME:-$HOME/.local/share}
APPS_DIR=$DATA_HOME/applications
ICONS_DIR=$DATA_HOME/icons/hicolor
ENTRY=$APPS_DIR/tickbench.desktop

refresh_caches() {  # optional tools: menus pick up the change sooner where they exist
    command -v update-desktop-database >/dev/null 2>&1 && update-desktop-database -q "$APPS_DIR" || true
    command -v gtk-update-icon-cache >/dev/null 2>&1 && gtk-update-icon-cache -q -t "$ICONS_DIR" 2>/dev/null || true
}

if [[ "${1:-}" == "--uninstall" ]]; then
    rm -f "$ENTRY" "$ICONS_DIR/256x256/apps/tickbench.png" "$ICONS_DIR/scalable/apps/tickbench.svg"
    refresh_caches
    echo "removed $ENTRY"
    exit 0
fi

if [[ $# -ge 1 ]]; then
    EXE=$1
elif [[ -x "$HERE/tickbench" && -f "$HERE/tickbench.desktop" && -d "$HERE/_internal" ]]; then
    EXE=$HERE/tickbench                              # running from inside dist/tickbench/
else
    EXE=$HERE/../dist/tickbench/tickbench            # running from packaging/ of a checkout
fi
if [[ ! -x "$EXE" || -d "$EXE" ]]; then
    echo "install-desktop-entry: no executable at $EXE; build first (packaging/build.sh) or pass its path" >&2
    exit 1
fi
EXE=$(cd "$(dirname "$EXE")" && pwd)/$(basename "$EXE")
APP_DIR=$(dirname "$EXE")
# Desktop-entry Exec quoting (freedesktop spec): these characters would need escaping; refuse them.
if [[ "$EXE" == *[\"\`\$\\%]* ]]; then
    echo "install-desktop-entry: the path $EXE contains one of \" \` \$ \\ %; move the app elsewhere" >&2
    exit 1
fi

TEMPLATE=$HERE/tickbench.desktop
[[ -f "$TEMPLATE" ]] || TEMPLATE=$APP_DIR/tickbench.desktop
[[ -f "$TEMPLATE" ]] || { echo "install-desktop-entry: tickbench.desktop template not found" >&2; exit 1; }

# Icon: the PNG rendered at build time, else the SVG shipped inside the app's resources.
if [[ -f "$APP_DIR/tickbench.png" ]]; then
    ICON_SRC=$APP_DIR/tickbench.png
    ICON=$ICONS_DIR/256x256/apps/tickbench.png
elif [[ -f "$APP_DIR/_internal/resources/icons/tickbench.svg" ]]; then
    ICON_SRC=$APP_DIR/_internal/resources/icons/tickbench.svg
    ICON=$ICONS_DIR/scalable/apps/tickbench.svg
else
    echo "install-desktop-entry: no icon found next to $EXE" >&2
    exit 1
fi

# Plain string replacement (no sed): any other character in the paths is taken literally.
# Exec is quoted so paths with spaces work; the app takes no files, so no %F.
CONTENT=$(grep -v '^# ' "$TEMPLATE")
QUOTED_EXE="\"$EXE\""
CONTENT=${CONTENT//@EXEC@/"$QUOTED_EXE"}
CONTENT=${CONTENT//@TRYEXEC@/"$EXE"}
CONTENT=${CONTENT//@ICON@/"$ICON"}

# Write and validate in a scratch folder first: a bad entry never replaces a good one.
SCRATCH=$(mktemp -d)
trap 'rm -rf "$SCRATCH"' EXIT
printf '%s\n' "$CONTENT" > "$SCRATCH/tickbench.desktop"
if command -v desktop-file-validate >/dev/null 2>&1; then
    desktop-file-validate --no-hints "$SCRATCH/tickbench.desktop"
fi
install -D -m 644 "$ICON_SRC" "$ICON"
install -D -m 644 "$SCRATCH/tickbench.desktop" "$ENTRY"
refresh_caches
echo "installed $ENTRY"
echo "  Exec=\"$EXE\""
echo "  Icon=$ICON"
