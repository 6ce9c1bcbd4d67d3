#!/usr/bin/env bash
# jail-libs.sh ROOT [MSIVM]: copies into the chroot ROOT the shared libraries msivm needs (those
# it links, and libmicrohttpd with its own, which msivm opens at run time for its API socket),
# at the paths the dynamic loader looks for them, the loader included. For Firecracker's jailer,
# which copies only the binary into its chroot (`make static` cannot be done with Debian's
# libraries: docs/kata.md). Prints each file copied; exits 1 when a library is missing.
set -eu
root=${1:?usage: jail-libs.sh ROOT [MSIVM]}
bin=${2:-$(dirname "$0")/../build/msivm}
mhd=$(ldconfig -p | awk '/libmicrohttpd\.so\.12 .*x86-64/ { print $NF; exit }')
[ -n "$mhd" ] || { echo "jail-libs.sh: libmicrohttpd.so.12 not found (Debian: apt-get install libmicrohttpd12)" >&2; exit 1; }
# Every library of the binary and of libmicrohttpd, with the loader: ldd's absolute paths.
libs=$( { ldd "$bin"; ldd "$mhd"; echo "$mhd"; } | grep -oE '(^|\s)/[^ ]+' | tr -d ' \t' | sort -u)
for f in $libs; do
	[ -e "$f" ] || { echo "jail-libs.sh: $f is missing" >&2; exit 1; }
	mkdir -p "$root$(dirname "$f")"
	cp -L "$f" "$root$f"
	echo "$f"
	# the loader also finds a library through the soname link in the same directory
done
