#!/usr/bin/env bash
# End-to-end: dedicated-CPU options; pinning and priorities read back from /proc per thread; refusals.
# e2e: needs 2 CPUs (a one-vCPU nested host would skip it; tests/e2e/run.sh gives it two)
set -u
here=$(dirname "$0")
. "$here/lib.sh"

ncpu=$(nproc)
if [ "$ncpu" -lt 2 ]; then
	echo "skip - pinning tests need 2 host CPUs"
	finish
	exit
fi

# stat fields 40 and 41: rt_priority and policy (1 = SCHED_FIFO).
field() { sed 's/.*) //' "/proc/$pid/task/$1/stat" | awk -v f="$2" '{ print $(f - 2) }'; }
allowed() { awk '/^Cpus_allowed_list/ { print $2 }' "/proc/$pid/task/$1/status"; }

# Runs a guest that reads 32 MiB of entropy (long enough to look at its threads) with the given
# options, reads vcpu0's and the I/O thread's CPUs and scheduling from /proc, then stops it with
# SIGTERM (status, out, err as for `run`).
look() {
	"$MSIVM" run --kernel "$PROBE" --rng "" --cmdline "rng=32768" "$@" >"$TMP/out" 2>"$TMP/err" &
	pid=$!
	tid="" iotid="" v_cpus="" v_prio="" v_pol="" io_cpus="" io_prio="" io_pol=""
	for _ in $(seq 50); do
		for t in /proc/$pid/task/*; do
			case "$(cat "$t/comm" 2>/dev/null)" in
			msivm-vcpu0) tid=${t##*/} ;;
			msivm-io) iotid=${t##*/} ;;
			esac
		done
		[ -n "$tid" ] && [ -n "$iotid" ] && break
		sleep 0.05
	done
	if [ -n "$tid" ] && [ -n "$iotid" ]; then
		v_cpus=$(allowed "$tid"); v_prio=$(field "$tid" 40); v_pol=$(field "$tid" 41)
		io_cpus=$(allowed "$iotid"); io_prio=$(field "$iotid" 40); io_pol=$(field "$iotid" 41)
	fi
	kill -TERM "$pid" 2>/dev/null
	wait "$pid"
	status=$?
	out=$(cat "$TMP/out"); err=$(cat "$TMP/err")
}

look --cpu-pin vcpu0=1,io=0 --rt 7
if [ -n "$tid" ] && [ "$v_cpus" = 1 ] && [ "$v_pol" = 1 ] && [ "$v_prio" = 7 ]; then
	pass "vcpu0 thread runs on CPU 1, SCHED_FIFO priority 7 (/proc)"
else
	fail "vcpu0 thread runs on CPU 1, SCHED_FIFO priority 7 (/proc: tid=$tid cpus=${v_cpus:-} policy=${v_pol:-} prio=${v_prio:-})"
fi
if [ -n "$tid" ] && [ "$io_cpus" = 0 ] && [ "$io_pol" = 1 ] && [ "$io_prio" = 7 ]; then
	pass "I/O thread runs on CPU 0, SCHED_FIFO priority 7 (/proc)"
else
	fail "I/O thread runs on CPU 0, SCHED_FIFO priority 7 (/proc: cpus=${io_cpus:-} policy=${io_pol:-} prio=${io_prio:-})"
fi
expect "SIGTERM stops a running VM with status 143" 143

# Without io= the I/O thread goes beside pinned vCPUs, or off them when they are dedicated.
case $ncpu in 2) others=0 ;; 3) others=0,2 ;; *) others="0,2-$((ncpu - 1))" ;; esac
look --cpu-pin vcpu0=1
if [ "$v_cpus" = 1 ] && [ "$io_cpus" = 1 ]; then
	pass "--cpu-pin vcpu0=1 without io=: the I/O thread runs on CPU 1 too (/proc)"
else
	fail "--cpu-pin vcpu0=1 without io=: the I/O thread runs on CPU 1 too (/proc: vcpu0 ${v_cpus:-?}, io ${io_cpus:-?})"
fi
look --cpu-pin vcpu0=1 --dedicated
if [ "$v_cpus" = 1 ] && [ "$io_cpus" = "$others" ]; then
	pass "--cpu-pin vcpu0=1 --dedicated without io=: the I/O thread keeps off CPU 1 ($others, /proc)"
else
	fail "--cpu-pin vcpu0=1 --dedicated without io=: the I/O thread keeps off CPU 1 (/proc: vcpu0 ${v_cpus:-?}, io ${io_cpus:-?}, want $others)"
fi
look
if [ -n "$io_cpus" ] && [ "$io_cpus" = "$(awk '/^Cpus_allowed_list/ { print $2 }' /proc/self/status)" ]; then
	pass "no --cpu-pin: the I/O thread may run on every CPU ($io_cpus)"
else
	fail "no --cpu-pin: the I/O thread may run on every CPU (/proc: io ${io_cpus:-?})"
fi

run run --kernel "$PROBE" --dedicated
expect "--dedicated without pinning is refused" 125 '' 'dedicated needs every vCPU pinned'
run run --kernel "$PROBE" --cpus 2 --cpu-pin vcpu0=1,vcpu1=1 --dedicated
expect "--dedicated with two vCPUs on one CPU is refused" 125 '' 'vcpu0 and vcpu1 share host CPU 1'
run run --kernel "$PROBE" --cpu-pin vcpu0=1,io=1 --dedicated
expect "--dedicated with the I/O thread on the vCPU's CPU is refused" 125 '' 'shares host CPU 1 with the I/O thread'
# KVM refuses KVM_CAP_X86_DISABLE_EXITS once a vCPU exists: this run only
# succeeds because msivm enables it before creating the vCPUs.
run run --kernel "$PROBE" --cpu-pin vcpu0=1,io=0 --dedicated --halt-poll 20000 --rng "" --cmdline "exit=5"
expect "--dedicated with every vCPU pinned: exits disabled before vCPUs exist, guest runs" 5 \
	'probe: rng read 65536 bytes'
run run --kernel "$PROBE" --cpu-pin vcpu1=1
expect "pinning a vCPU the VM does not have is refused" 125 '' 'names vcpu1 but the VM has 1 vCPUs'
run run --kernel "$PROBE" --cpu-pin vcpu0=4096
expect "a host CPU that does not exist is refused" 125 '' "bad host CPU '4096'|not available here"
run run --kernel "$PROBE" --rt 100
expect "an out-of-range --rt is refused" 125 '' "bad --rt '100'"
if [ "$(id -u)" = 0 ] && command -v setpriv >/dev/null && command -v prlimit >/dev/null; then
	status=0
	setpriv --bounding-set=-sys_nice prlimit --rtprio=0 "$MSIVM" run --kernel "$PROBE" --rt 5 \
		>"$TMP/out" 2>"$TMP/err" || status=$?
	out=$(cat "$TMP/out"); err=$(cat "$TMP/err")
	expect "--rt without CAP_SYS_NICE or RLIMIT_RTPRIO: a clear refusal" 125 '' \
		'not permitted to use SCHED_FIFO'
fi
finish
