#!/usr/bin/env bash
# Installs the Debian packages msivm needs to build, test and run its lab (idempotent).
# Build, tests, lab and benchmarks share one list: the tests run the probe under QEMU side by
# side, the lab draws its charts with gnuplot, check-linux's distro image comes from debootstrap,
# the README's console examples use socat. The lab's HTML report is checked in a headless chromium.
set -euo pipefail

pkgs=(gcc make binutils libc6-dev libcmocka-dev libjansson-dev liburing-dev clang libclang-rt-14-dev libseccomp-dev libmicrohttpd-dev nettle-dev jq util-linux coreutils man-db groff-base python3 curl
	qemu-system-x86 time gnuplot-nox librsvg2-bin iproute2 iputils-ping perl acpica-tools
	debootstrap e2fsprogs chromium socat)

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
