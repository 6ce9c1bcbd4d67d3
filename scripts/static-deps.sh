#!/usr/bin/env bash
# Builds the one library `make static` needs and Debian ships no static archive of (usable): libmicrohttpd.
# Usage: scripts/static-deps.sh DIR   (make static passes build-static/deps)
#
# Debian's libmicrohttpd.a needs gnutls's archive, which needs p11-kit's, and Debian ships no
# libp11-kit.a. msivm's API is a unix socket and needs no TLS, so this builds Debian's own
# libmicrohttpd source package (with Debian's patches) with --disable-https: no gnutls at all.
# The only network it uses is Debian's archive, through apt: it adds a deb-src entry for
# deb.debian.org if the host has none for bookworm, runs `apt-get update` only when apt does not know the
# source package yet, and `apt-get source --download-only`. Idempotent: a finished build (DIR/lib/
# libmicrohttpd.a with its stamp) is reused; sources already in DIR/src are not fetched again.
# Leaves DIR/include/microhttpd.h and DIR/lib/libmicrohttpd.a. Needs root only to add the deb-src entry.
# Authenticity: apt checks the files against the signed Sources index; dpkg-source then may print
# "gpgv: Can't check signature: No public key" (it has no keyring of Debian's uploaders), harmless.
set -euo pipefail
die() { echo "static-deps.sh: $*" >&2; exit 1; }
[ $# -eq 1 ] || die "usage: scripts/static-deps.sh DIR"
mkdir -p "$1"
dir=$(cd "$1" && pwd)
pkg=libmicrohttpd
stamp="$dir/lib/$pkg.a.stamp"
if [ -f "$stamp" ] && [ -f "$dir/lib/$pkg.a" ] && [ -f "$dir/include/microhttpd.h" ]; then
	echo "static-deps.sh: $dir/lib/$pkg.a already built ($(cat "$stamp"))"
	exit 0
fi

mkdir -p "$dir/src"
dsc=$(ls "$dir"/src/${pkg}_*.dsc 2>/dev/null | head -n1 || true)
if [ -z "$dsc" ]; then
	list=/etc/apt/sources.list.d/msivm-src.sources
	# A deb-src line for Debian's archive already there (one-line or deb822 format)?
	if ! grep -rqsE '^(deb-src[[:space:]]|Types:.*deb-src)' /etc/apt/sources.list /etc/apt/sources.list.d/; then
		[ "$(id -u)" -eq 0 ] || die "no deb-src entry in /etc/apt and not root to add $list: add Debian's deb-src (docs/kata.md) or run as root"
		. /etc/os-release
		suite=${VERSION_CODENAME:?no VERSION_CODENAME in /etc/os-release}
		cat >"$list" <<EOF
Types: deb-src
URIs: http://deb.debian.org/debian
Suites: $suite $suite-updates
Components: main
Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg
EOF
		echo "static-deps.sh: added $list"
	fi
	if ! apt-cache showsrc "$pkg" 2>/dev/null | grep -q '^Package:'; then
		apt-get update -qq || die "apt-get update failed"
	fi
	(cd "$dir/src" && apt-get source -qq --download-only "$pkg") ||
		die "apt-get source --download-only $pkg failed (is Debian's archive reachable?)"
	dsc=$(ls "$dir"/src/${pkg}_*.dsc | head -n1)
fi

tree="$dir/src/tree"
rm -rf "$tree"
dpkg-source -x "$dsc" "$tree" >/dev/null || die "dpkg-source -x $dsc failed"
log="$dir/build.log"
echo "static-deps.sh: building $(basename "$dsc" .dsc) without HTTPS (log: $log)"
(
	cd "$tree"
	./configure --prefix="$dir" --libdir="$dir/lib" --includedir="$dir/include" \
		--enable-static --disable-shared --disable-https --disable-doc --disable-examples \
		--disable-curl --disable-nls --without-gnutls
	make -j"$(nproc)" -C src/microhttpd
	make -C src/microhttpd install
	make -C src/include install
) >"$log" 2>&1 || { tail -n 30 "$log" >&2; die "building $pkg failed (whole log: $log)"; }
[ -f "$dir/lib/$pkg.a" ] && [ -f "$dir/include/microhttpd.h" ] || die "$pkg built but $dir/lib/$pkg.a or microhttpd.h missing"
rm -rf "$tree"
basename "$dsc" .dsc >"$stamp"
echo "static-deps.sh: $dir/lib/$pkg.a"
