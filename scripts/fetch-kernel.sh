#!/bin/sh
# fetch-kernel.sh: Debian's cloud kernel package -> a cached bzImage; prints its path.
#
#   scripts/fetch-kernel.sh [DIR]      (default DIR: $MSIVM_KERNEL_DIR or build/kernel)
#
# Resolves the versioned package behind linux-image-cloud-amd64
# (apt-cache depends), downloads it with apt-get download, extracts
# /boot/vmlinuz-* (and the matching config-*) with dpkg-deb -x and leaves
# DIR/vmlinuz (plus DIR/config and DIR/version). When DIR/vmlinuz exists it
# only prints the path. Exit status: 0 with the path on stdout, 1 with a
# reason on stderr.
set -eu

dir=${1:-${MSIVM_KERNEL_DIR:-build/kernel}}
meta=linux-image-cloud-amd64

die() { echo "fetch-kernel: $*" >&2; exit 1; }

if [ -s "$dir/vmlinuz" ]; then
	echo "$dir/vmlinuz"
	exit 0
fi

for tool in apt-cache apt-get dpkg-deb; do
	command -v "$tool" >/dev/null 2>&1 || die "$tool not found (this script needs Debian's apt and dpkg)"
done

# The meta package depends on exactly one versioned image package.
resolve() {
	apt-cache depends "$meta" 2>/dev/null |
		sed -n 's/^ *Depends: \(linux-image-[0-9][^ ]*\)$/\1/p' | head -n 1
}
pkg=$(resolve)
if [ -z "$pkg" ] && [ "$(id -u)" = 0 ]; then
	echo "fetch-kernel: $meta unknown to apt; running apt-get update" >&2
	apt-get update -qq >&2 || die "apt-get update failed"
	pkg=$(resolve)
fi
[ -n "$pkg" ] || die "cannot resolve the kernel package behind $meta (apt-cache depends $meta)"

mkdir -p "$dir"
tmp=$(cd "$dir" && mktemp -d "$PWD/.fetch.XXXXXX")
trap 'rm -rf "$tmp"' EXIT INT TERM
chmod 755 "$tmp" # apt's _apt user writes the download when it can

echo "fetch-kernel: downloading $pkg" >&2
(cd "$tmp" && apt-get download -q "$pkg" >&2 2>"$tmp/apt.err") ||
	{ cat "$tmp/apt.err" >&2; die "apt-get download $pkg failed"; }
deb=$(ls "$tmp"/*.deb 2>/dev/null | head -n 1)
[ -n "$deb" ] || die "apt-get download left no .deb in $tmp"

dpkg-deb -x "$deb" "$tmp/root" || die "dpkg-deb -x $deb failed"
img=$(ls "$tmp"/root/boot/vmlinuz-* 2>/dev/null | head -n 1)
[ -n "$img" ] || die "$deb holds no /boot/vmlinuz-*"
ver=${img##*/vmlinuz-}

cfg="$tmp/root/boot/config-$ver"
[ -f "$cfg" ] && cp "$cfg" "$tmp/config"
echo "$pkg $ver" >"$tmp/version"
cp "$img" "$tmp/vmlinuz"
# Publish: config and version first, vmlinuz last (its presence means done).
[ -f "$tmp/config" ] && mv -f "$tmp/config" "$dir/config"
mv -f "$tmp/version" "$dir/version"
mv -f "$tmp/vmlinuz" "$dir/vmlinuz"
echo "$dir/vmlinuz"
