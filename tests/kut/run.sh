#!/usr/bin/env bash
# kvm-unit-tests x86 under msivm and under QEMU on the same KVM, one table (docs/kut.md).
#
#   tests/kut/run.sh [--nested] [--direct] [--vmm both|msivm|qemu] [--require E1,E2...] [ENTRY...]
#                                                                        (make check-kut)
#
# Builds the suite (../shared/kvm-unit-tests, unmodified) into build/kut/kvm-unit-tests once, then
# runs the suite's own harness (run_tests.sh: x86/unittests.cfg's smp, extra_params, arch, accel,
# groups, timeout; x86/run's QEMU command line) twice: with QEMU, and with QEMU=tests/kut/qemu-msivm
# (msivm behind that command line). Prints one line per entry (QEMU's verdict, msivm's, the first
# line where their logs differ) and last `N passed, N failed` for msivm. Exit 1 if an entry QEMU
# passes is not passed by msivm and is not in tests/kut/known-differences (entry, reason), or if
# msivm does not pass an entry of --require (CI: .ci/run).
# --nested: the same inside the nested rig (scripts/nested/run.sh, under flock
# /tmp/msivm-nested.lock): a hardware-style KVM for the interrupt and instruction entries.
# Results: build/kut/<kind of KVM>/{qemu,msivm}.results and their logs (build/kut/pvm/, .../hardware/).
# --direct: each entry's command line straight (tests/kut/direct.sh), not through run_tests.sh:
# seconds instead of about a minute an entry in the nested rig (CI's nested kut stage).
# In the nested rig an entry the suite FAILs only in sub-tests tests/kut/nested-failures lists
# for it (entry, sub-test, reason: the TCG L1's, QEMU fails them there too) still meets --require.
# --find-src: print where the suite's tarball is (status 1 if nowhere) and stop.
# Environment: KUT_SRC (the tarball), KUT_TIMEOUT (per-entry timeout overriding unittests.cfg's),
# KUT_NESTED_SMP (nested host vCPUs, default 2), KUT_NESTED_TIMEOUT (s, default 3600),
# KUT_NESTED_RETRIES (boots again after a dead nested host, default 1).
set -u
here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/../.." && pwd)
# The suite: KUT_SRC, else the copy in this tree (third_party/), else the shared copy beside it or
# at /work/shared.
find_src() {
	local c
	for c in ${KUT_SRC:-} "$top/third_party/kvm-unit-tests/kvm-unit-tests-1da1819e.tar.gz" \
		"$top/../shared/kvm-unit-tests/kvm-unit-tests-1da1819e.tar.gz" \
		/work/shared/kvm-unit-tests/kvm-unit-tests-1da1819e.tar.gz; do
		[ -f "$c" ] && { echo "$c"; return 0; }
	done
	echo "no kvm-unit-tests source (kvm-unit-tests-1da1819e.tar.gz; set KUT_SRC)"
	return 1
}
[ "${1:-}" = --find-src ] && { find_src; exit $?; }
dir=$top/build/kut/kvm-unit-tests
vmm=both nested= require= notable= direct=
while [ $# -gt 0 ]; do
	case "$1" in
	--nested) nested=1; shift ;;
	--vmm) vmm=$2; shift 2 ;;
	--require) require=$2; shift 2 ;;
	--no-table) notable=1; shift ;;
	--direct) direct=1; shift ;;
	--) shift; break ;;
	-*) echo "run.sh: unknown option $1 (see the header of $0)" >&2; exit 2 ;;
	*) break ;;
	esac
done
entries=("$@")

build_suite() {
	if [ ! -f "$dir/x86/unittests.cfg" ]; then
		local src
		src=$(find_src) || { echo "kut: $src" >&2; return 1; }
		mkdir -p "$top/build/kut" && tar -xzf "$src" -C "$top/build/kut" || return 1
	fi
	# msivm's own entries (tests/kut/extra.cfg), once, after the suite's.
	grep -q '^\[vmexit_pci\]' "$dir/x86/unittests.cfg" ||
		{ echo; cat "$here/extra.cfg"; } >> "$dir/x86/unittests.cfg" || return 1
	if [ ! -f "$dir/x86/smptest.flat" ]; then
		echo "kut: building kvm-unit-tests in $dir (about a minute)"
		(cd "$dir" && ./configure >/dev/null && nice make -j2 >"$top/build/kut/build.log" 2>&1) ||
			{ echo "kut: build failed, see build/kut/build.log" >&2; return 1; }
	fi
}

build_suite || exit 1
[ -x "${MSIVM:-$top/build/msivm}" ] || { echo "kut: build/msivm missing (make)" >&2; exit 1; }

table() { # $1: the results directory [$2: the nested rig's sub-test failures]
	KUT_SUBFAIL=${2:-} "$here/table.sh" "$1" "$dir/x86/unittests.cfg" "$here/known-differences" ${require//,/ }
}
if [ -n "$nested" ]; then
	# The passes in the nested host, the table here (bash is slow under TCG).
	# A nested host that dies (its kernel, not msivm or a guest) is booted again once, saying so.
	flock /tmp/msivm-nested.lock "$top/scripts/nested/run.sh" --name kut \
		--smp "${KUT_NESTED_SMP:-2}" --mem 4G --timeout "${KUT_NESTED_TIMEOUT:-3600}" \
		--retries "${KUT_NESTED_RETRIES:-1}" -- \
		"$here/run.sh" --no-table ${direct:+--direct} --vmm "$vmm" "${entries[@]}" || exit $?
	table "$top/build/kut/hardware" "$here/nested-failures"
	exit $?
fi

host=$("${MSIVM:-$top/build/msivm}" host 2>/dev/null | head -n1)
echo "kut: KVM here: $host"
# Results of each kind of KVM apart: build/kut/pvm/, build/kut/hardware/ (the nested rig's).
res=$top/build/kut/${host%%:*}
mkdir -p "$res"
# A PASS of entry $2 stands only if its log ($1/$2.log) has $4 lines matching $3 (an experiment
# the guest skips still exits 0); else it becomes a FAIL saying how many.
expect_lines() {
	local n
	grep -q "^PASS $2\( \|\$\)" "$1.results" || return 0
	n=$(tr -d '\r' < "$1/$2.log" 2>/dev/null | grep -cE "$3")
	[ "${n:-0}" -ge "$4" ] ||
		sed -i "s/^PASS $2\( \|\$\).*/FAIL $2 (${n:-0} of its $4 experiments ran)/" "$1.results"
}
# One pass of the suite's harness; its verdict lines go to $res/$1.results, logs to $res/$1/.
pass() {
	local name=$1; shift
	local out=$res/$name
	rm -rf "$out" "$out.old"
	local t0=$SECONDS
	if [ -n "$direct" ]; then
		(cd "$dir" && env "$@" "$here/direct.sh" --vmm "$name" --out "$out" "${entries[@]}")
	else
		(cd "$dir" && env "$@" unittest_log_dir="$out" ${KUT_TIMEOUT:+TIMEOUT=$KUT_TIMEOUT} \
			./run_tests.sh "${entries[@]}" 2>&1) | sed 's/\x1b\[[0-9;]*m//g' > "$out.results"
	fi
	expect_lines "$out" vmexit_pci '^(mmio|portio)-[a-z-]*eventfd:pci-(mem|io) [0-9]+$' 6
	echo "kut: $name: $((SECONDS - t0)) s, $(grep -c '^PASS' "$out.results") PASS, $(grep -c '^FAIL' "$out.results") FAIL, $(grep -c '^SKIP' "$out.results") SKIP"
}
case "$vmm" in both|qemu) pass qemu ;; esac
case "$vmm" in both|msivm) pass msivm QEMU="$here/qemu-msivm" MSIVM="${MSIVM:-$top/build/msivm}" ;; esac
[ -n "$notable" ] || table "$res"
