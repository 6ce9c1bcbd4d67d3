#!/usr/bin/env bash
# The manual page: man/msivm.1 renders without a groff warning, and names every long option that
# `msivm run --help` and `msivm lab --help` print and every --cpuid-hide feature msivm knows.
# Needs man (man-db) and groff (groff-base).
set -u
here=$(dirname "$0")
. "$here/lib.sh"
page=${MANPAGE:-"$here/../../man/msivm.1"}

if ! command -v man >/dev/null || ! command -v groff >/dev/null; then
	status=127 out="" err="man or groff missing"
	fail "man-db and groff-base are needed to check the manual page"
	finish
	exit
fi

# Wide lines: no option is broken across two lines.
LC_ALL=C MANWIDTH=1000 man --warnings -l -P cat "$page" >"$TMP/page" 2>"$TMP/warn"
status=$?
out=""
err=$(cat "$TMP/warn")
if [ "$status" = 0 ] && [ ! -s "$TMP/warn" ] && [ -s "$TMP/page" ]; then
	pass "man -l man/msivm.1 renders without warnings (man --warnings: groff -ww)"
else
	fail "man -l man/msivm.1: warnings or failure"
fi
LC_ALL=C groff -man -ww -z "$page" 2>"$TMP/warn80"
status=$?
err=$(cat "$TMP/warn80")
[ "$status" = 0 ] && [ ! -s "$TMP/warn80" ] && pass "groff -man -ww at 80 columns: no warning" ||
	fail "groff -man -ww warns"

# in_page WORD: WORD appears in the rendered page as a word of its own.
in_page() { grep -Eq -- "(^|[^A-Za-z0-9-])$1([^A-Za-z0-9-]|$)" "$TMP/page"; }

for cmd in run lab; do
	"$MSIVM" $cmd --help >"$TMP/help" 2>&1
	opts=$(grep -Eo -- '--[a-z][a-z0-9-]*' "$TMP/help" | sort -u)
	missing=""
	for o in $opts; do
		in_page "$o" || missing="$missing $o"
	done
	status=0 out="" err=""
	if [ -n "$opts" ] && [ -z "$missing" ]; then
		pass "every option of msivm $cmd --help is in the manual ($(wc -w <<<"$opts") options)"
	else
		fail "msivm $cmd --help options missing from man/msivm.1:$missing"
	fi
done

# The features msivm knows, from its own error message for an unknown one.
run run --kernel /dev/null --cpuid-hide no-such-feature
known=$(grep -o 'known: [^)]*' <<<"$err" | sed 's/^known: //; s/,//g')
section=$(sed -n '/^CPUID FEATURES/,/^[A-Z]/p' "$TMP/page")
missing=""
for f in $known; do
	grep -Eq "^ +$f( |$)" <<<"$section" || missing="$missing $f"
done
if [ -n "$known" ] && [ -z "$missing" ]; then
	pass "every --cpuid-hide feature has an entry under CPUID FEATURES ($(wc -w <<<"$known") features)"
else
	fail "--cpuid-hide features missing from the manual:$missing (known: $known)"
fi

# Exit statuses of msivm run and the lab, and the sections an operator looks for.
missing=""
for want in 'EXIT STATUS' POWER FILES EXAMPLES ENVIRONMENT; do
	grep -q "^$want" "$TMP/page" || missing="$missing [$want]"
done
for code in 122 123 125 126 159; do
	in_page "$code" || missing="$missing $code"
done
status=0 out="" err=""
[ -z "$missing" ] && pass "the manual has EXIT STATUS (122, 123, 125, 126, 159), POWER, FILES, EXAMPLES" ||
	fail "manual lacks:$missing"

# EXAMPLES without make install: the page says where the probe is in a build tree, and its first
# example runs as given with that path (and this msivm).
examples=$(sed -n '/^EXAMPLES/,/^SEE ALSO/p' "$TMP/page")
first=$(awk '/^ +truncate/{on=1} on{print} on && !/\\$/ && !/^ +truncate/{exit}' <<<"$examples")
cmd=$(sed "s|/usr/local/lib/msivm/probe.elf|$PROBE|; s|^ *msivm |$MSIVM |; s|/tmp/disk.img|$TMP/disk.img|g" <<<"$first")
status=0
eval "$cmd" >"$TMP/ex.out" 2>&1 || status=$?
out=$(tail -n 5 "$TMP/ex.out") err=""
if grep -q 'build/guest/probe.elf' <<<"$examples" && grep -q 'make install' <<<"$examples" &&
	[ "$status" = 0 ] && grep -q 'blk verify ok' "$TMP/ex.out"; then
	pass "EXAMPLES name the build tree's probe (no make install needed); the first one runs (blk verify ok)"
else
	fail "EXAMPLES: the build tree's probe not named, or the first example failed: $first"
fi

# Every tool the README and the usage guide tell people to run beside msivm is installed by
# scripts/deps.sh.
missing=""
for tool in socat curl jq gnuplot qemu-system-x86_64 setfacl; do
	cat "$here/../../README.md" "$here/../../docs/usage.md" 2>/dev/null | grep -q -- "\b$tool\b" || continue
	pkg=$tool
	case $tool in qemu-system-x86_64) pkg=qemu-system-x86 ;; gnuplot) pkg=gnuplot-nox ;; setfacl) pkg=acl ;; esac
	grep -Eq -- "(^|[[:space:](])$pkg([[:space:])]|\$)" "$here/../../scripts/deps.sh" || missing="$missing $tool($pkg)"
done
status=0 out="" err=""
[ -z "$missing" ] && pass "every tool the README and docs/usage.md run is installed by scripts/deps.sh" ||
	fail "the README or docs/usage.md run tools scripts/deps.sh does not install:$missing"
finish
