#!/usr/bin/env bash
# Installs the Debian packages msivm needs to build, test and run its lab (idempotent).
#   scripts/deps.sh          build + test dependencies
#   scripts/deps.sh --lab    also what the lab and benchmarks use (QEMU for side-by-side runs)
set -euo pipefail

pkgs=(gcc make binutils libc6-dev libcmocka-dev libjansson-dev jq util-linux coreutils)
if [ "${1:-}" = "--lab" ]; then
	pkgs+=(qemu-system-x86 time gnuplot-nox librsvg2-bin)
fi

missing=()
for p in "${pkgs[@]}"; do
	dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
[ ${#missing[@]} -eq 0 ] && exit 0

SUDO=
[ "$(id -u)" -eq 0 ] || SUDO=sudo
echo "scripts/deps.sh: installing ${missing[*]}" >&2
export DEBIAN_FRONTEND=noninteractive
if ! $SUDO apt-get install -y --no-install-recommends "${missing[@]}"; then
	$SUDO apt-get update
	$SUDO apt-get install -y --no-install-recommends "${missing[@]}"
fi
