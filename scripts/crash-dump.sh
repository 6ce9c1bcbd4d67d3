#!/bin/bash
# Opens a crash dump msivm wrote (--dump-on-crash) of a guest running a Debian kernel in the `crash`
# utility: installs crash, fetches that kernel's debug symbols (Debian's linux-image-VERSION-dbg,
# its vmlinux cached under build/crash/), and runs crash's commands (default: sys, bt -a, the last
# 40 lines of the kernel log). KASLR is found from the dump's QEMU-format CPU notes (IDTR, CR3).
#
# usage: scripts/crash-dump.sh CORE [VERSION] [-- CRASH COMMANDS...]
#   VERSION: the guest kernel's release, e.g. 6.1.0-57-cloud-amd64 (default: read from the
#   dump's "Linux version" banner)
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
die() { echo "crash-dump: $*" >&2; exit 1; }
[ $# -ge 1 ] && [ "$1" != -h ] && [ "$1" != --help ] || { sed -n '2,9p' "$0" | sed 's/^# \{0,1\}//'; exit 2; }
core=$1
shift
[ -r "$core" ] || die "cannot read the dump '$core'"
ver=
if [ $# -ge 1 ] && [ "$1" != -- ]; then
	ver=$1
	shift
fi
[ "${1:-}" = -- ] && shift
if [ -z "$ver" ]; then
	ver=$(grep -a -m1 -o 'Linux version [0-9][^ ]*' "$core" | head -n1 | cut -d' ' -f3 || true)
	[ -n "$ver" ] || die "no 'Linux version' banner in '$core': give the kernel release as the second argument"
fi
command -v crash >/dev/null || { echo "crash-dump: installing crash (apt-get)" >&2; apt-get install -y crash >&2 || die "cannot install crash"; }
cache=$top/build/crash
vmlinux=$cache/vmlinux-$ver
if [ ! -s "$vmlinux" ]; then
	mkdir -p "$cache/dl"
	echo "crash-dump: fetching linux-image-$ver-dbg (a few hundred MB, once)" >&2
	(cd "$cache/dl" && apt-get download "linux-image-$ver-dbg" >&2) || die "cannot fetch linux-image-$ver-dbg (apt-get update? is $ver a Debian kernel?)"
	deb=$(ls "$cache/dl"/linux-image-"$ver"-dbg_*.deb | head -n1)
	dpkg-deb --fsys-tarfile "$deb" | tar -x -O "./usr/lib/debug/boot/vmlinux-$ver" >"$vmlinux.new" ||
		die "no vmlinux-$ver in $deb"
	mv "$vmlinux.new" "$vmlinux"
	rm -f "$deb"
fi
cmds=$(mktemp)
trap 'rm -f "$cmds"' EXIT
if [ $# -gt 0 ]; then
	printf '%s\n' "$@" >"$cmds"
else
	printf '%s\n' sys 'bt -a' 'log | tail -n 40' >"$cmds"
fi
echo quit >>"$cmds"
exec crash -s --kaslr=auto "$vmlinux" "$core" <"$cmds"
