#!/usr/bin/env bash
# make check's end-to-end part: the e2e suites once with MSIVM and once with SAN_MSIVM (the
# ASan+UBSan build, CRASH_ITERS=5), each through tests/e2e/run.sh. With a usable /dev/kvm (`msivm
# host`: hardware or pvm) the two passes run one after the other, as the suites time things on a
# host that runs nothing else. Without one each pass runs its suites in its own one-vCPU nested host
# and the two run side by side (one host CPU each): the sanitizer pass's verdict lines show as they
# come ("[sanitizer] == ..."), its whole output after the normal pass's. Then the suites that need
# two CPUs run in a two-vCPU nested host, one pass after the other (side by side, four vCPUs on
# two CPUs, the ASan build took up to 1017 ms to stop after SIGTERM in test_hostile; alone, 270-310).
# Exit 1 if either pass failed.
set -u
here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/../.." && pwd)
: "${MSIVM:?}" "${SAN_MSIVM:?}" "${PROBE:?}"
export PROBE
kind=$("$MSIVM" host 2>&1)
mode=${E2E_MODE:-auto}
if [ "$mode" = auto ]; then
	case "$kind" in none:*) mode=nested ;; *) mode=direct ;; esac
fi
echo "e2e: this host's KVM: $kind; the suites run $([ "$mode" = nested ] && echo 'in nested hosts (QEMU TCG, kvm_amd), the two passes side by side' || echo 'on this host, one pass after the other')"
t0=$SECONDS
if [ "$mode" != nested ]; then
	st=0
	echo "=== e2e pass 1 of 2: $MSIVM"
	E2E_MODE=$mode MSIVM=$MSIVM "$here/run.sh" || st=1
	echo "=== e2e pass 2 of 2 (ASan+UBSan): $SAN_MSIVM"
	E2E_MODE=$mode CRASH_ITERS=5 MSIVM=$SAN_MSIVM "$here/run.sh" || st=1
	echo "e2e: both passes in $((SECONDS - t0)) s: $([ $st = 0 ] && echo passed || echo FAILED)"
	exit $st
fi

log=$top/build/nested/e2e-san.log
mkdir -p "$top/build/nested"
: >"$log"
E2E_MODE=nested E2E_GROUPS=1 E2E_NAME=e2e-san CRASH_ITERS=5 MSIVM=$SAN_MSIVM "$here/run.sh" >"$log" 2>&1 &
san=$!
tail -n +1 -F --pid="$san" "$log" 2>/dev/null | grep --line-buffered -E '^(== .*: (PASS|FAIL)|e2e: (RETRY|nested host))' |
	sed -u 's/^/[sanitizer] /' &
shower=$!
trap 'kill "$san" "$shower" 2>/dev/null; exit 143' TERM INT
echo "=== e2e pass 1 of 2: $MSIVM, suites for one CPU (the sanitizer pass's, $SAN_MSIVM, run beside it; log: $log)"
st1=0 st2=0
E2E_MODE=nested E2E_GROUPS=1 E2E_NAME=e2e MSIVM=$MSIVM "$here/run.sh" || st1=1
wait "$san" || st2=1
wait "$shower" # tail ends with the sanitizer pass
echo "=== e2e pass 2 of 2 (ASan+UBSan), suites for one CPU: its whole output"
cat "$log"
echo "=== e2e pass 1 of 2: $MSIVM, suites for two CPUs"
E2E_MODE=nested E2E_GROUPS=2 E2E_NAME=e2e MSIVM=$MSIVM "$here/run.sh" || st1=1
echo "=== e2e pass 2 of 2 (ASan+UBSan): $SAN_MSIVM, suites for two CPUs"
E2E_MODE=nested E2E_GROUPS=2 E2E_NAME=e2e-san CRASH_ITERS=5 MSIVM=$SAN_MSIVM "$here/run.sh" || st2=1
echo "e2e: both passes in $((SECONDS - t0)) s: normal $([ $st1 = 0 ] && echo passed || echo FAILED), sanitizer $([ $st2 = 0 ] && echo passed || echo FAILED)"
[ $st1 = 0 ] && [ $st2 = 0 ]
