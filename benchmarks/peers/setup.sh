#!/usr/bin/env bash
# Creates benchmarks/peers/.venv with SPlisHSPlasH's Python bindings (pysplishsplash 2.19.0).
# Idempotent: does nothing when the venv already imports pysplishsplash 2.19.0.
set -euo pipefail

HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
VENV="$HERE/.venv"
PKG_VERSION="2.19.0"
PYTHON="${PYTHON:-python3}"

# --- Debian packages -------------------------------------------------------
# pysplishsplash bundles its own libGLdispatch, which segfaults on import when the
# system glvnd libraries are present; we preload the system libGLdispatch instead
# (see peer_env.sh), so we need libglvnd0 (libGLdispatch.so.0) and libgl1.
need_apt=()
for pkg in libglvnd0 libgl1; do
    if ! dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null | grep -q "install ok installed"; then
        need_apt+=("$pkg")
    fi
done
if ! "$PYTHON" -c "import venv, ensurepip" >/dev/null 2>&1; then
    need_apt+=(python3-venv)
fi
if [ "${#need_apt[@]}" -gt 0 ]; then
    echo "setup.sh: installing Debian packages: ${need_apt[*]}" >&2
    SUDO=""
    [ "$(id -u)" -ne 0 ] && SUDO="sudo"
    $SUDO apt-get update
    DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y --no-install-recommends "${need_apt[@]}"
fi

# --- venv ------------------------------------------------------------------
# shellcheck source=peer_env.sh
source "$HERE/peer_env.sh"

installed_ok() {
    [ -x "$VENV/bin/python" ] || return 1
    "$VENV/bin/python" - "$PKG_VERSION" <<'PY' >/dev/null 2>&1
import sys, importlib.metadata as md
want = sys.argv[1]
assert md.version("pysplishsplash") == want
assert int(md.version("numpy").split(".")[0]) < 2
import pysplishsplash  # noqa: F401  (checks the LD_PRELOAD workaround works)
PY
}

if installed_ok; then
    echo "setup.sh: $VENV already has pysplishsplash $PKG_VERSION; nothing to do" >&2
    exit 0
fi

if [ ! -x "$VENV/bin/python" ]; then
    echo "setup.sh: creating venv $VENV with $("$PYTHON" --version)" >&2
    "$PYTHON" -m venv "$VENV"
fi
"$VENV/bin/python" -m pip install --quiet "pysplishsplash==$PKG_VERSION" "numpy<2"

if installed_ok; then
    echo "setup.sh: OK: pysplishsplash $PKG_VERSION imports in $VENV" >&2
else
    echo "setup.sh: pysplishsplash installed but 'import pysplishsplash' fails; try:" >&2
    echo "  LD_PRELOAD=$SPLISH_LD_PRELOAD $VENV/bin/python -c 'import pysplishsplash'" >&2
    exit 1
fi
