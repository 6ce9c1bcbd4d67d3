#!/usr/bin/env bash
# End-to-end: least privilege — --user/--chroot after setup, inherited fds closed, no new privileges, hardened binary.
set -u
here=$(dirname "$0")
. "$here/lib.sh"
# A process that dropped root (not dumpable) or left /proc behind cannot be leak-checked by
# LeakSanitizer at exit: no leak check for this file's runs in a sanitizer build.
export ASAN_OPTIONS=${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0

# The binary: full RELRO with immediate binding, stack protector, fortified calls.
status=0; out=$(readelf -d "$MSIVM" 2>&1; readelf -l "$MSIVM" 2>&1; nm -D "$MSIVM" 2>&1); err=""
if grep -q BIND_NOW <<<"$out" && grep -q GNU_RELRO <<<"$out" && grep -q __stack_chk_fail <<<"$out" &&
	grep -q '_chk@' <<<"$out"; then
	pass "msivm is built with full RELRO, BIND_NOW, stack protector and FORTIFY_SOURCE"
else
	fail "msivm is built with full RELRO, BIND_NOW, stack protector and FORTIFY_SOURCE"
fi

# Every thread of a running VM with every device and the API is under seccomp: the process
# baseline (main: 1 filter) and each thread's own list on top of it (vCPU, I/O, control, API: 2).
# (--seccomp on: a sanitizer build's default is off.)
truncate -s 1M "$TMP/sc.img"
"$MSIVM" run --kernel "$PROBE" --seccomp on --rng "" --disk "path=$TMP/sc.img" \
	--net backend=peer --console "out=$TMP/sc.con" --api-socket "$TMP/sc.sock" \
	--cmdline "button=off" >"$TMP/sc.out" 2>"$TMP/sc.err" &
vm=$!
for _ in $(seq 600); do grep -q 'waiting for the power button' "$TMP/sc.out" && break; sleep 0.05; done
bad="" roles=""
for t in /proc/$vm/task/*; do
	name=$(cat "$t/comm" 2>/dev/null) || continue
	mode=$(awk '/^Seccomp:/ { print $2 }' "$t/status")
	nf=$(awk '/^Seccomp_filters:/ { print $2 }' "$t/status")
	case "$name" in
	iou-* | kvm-*) continue ;; # io_uring's workers, KVM's NX recovery: kernel workers of the process
	msivm-vcpu* | msivm-io | msivm-ctl | msivm-api) want=2 ;;
	*) want=1 ;;
	esac
	roles="$roles $name"
	[ "$mode" = 2 ] && [ "${nf:-0}" -ge "$want" ] || bad="$bad $name(Seccomp:$mode filters:$nf, want $want)"
done
kill -TERM "$vm" 2>/dev/null
wait "$vm"
status=$? out=$(cat "$TMP/sc.out") err=$(cat "$TMP/sc.err")
if [ -z "$bad" ] && [[ "$roles" == *msivm-vcpu0* && "$roles" == *msivm-io* && "$roles" == *msivm-ctl* &&
	"$roles" == *msivm-api* ]]; then
	pass "every thread of a VM with rng, disk, net, console and the API runs under seccomp:$roles"
else
	fail "threads not under their filters:${bad:- none, but a role is missing from '$roles'}"
fi

if [ "$(id -u)" != 0 ]; then
	echo "skip - --user/--chroot need root"
	finish
	exit $?
fi

jail=$TMP/jail
mkdir -p "$jail"
truncate -s 1M "$TMP/disk.img"
# A probe that runs long enough to look at the process: rng in latency mode.
exec 7</dev/null # an inherited descriptor msivm does not need
"$MSIVM" run --kernel "$PROBE" --disk "path=$TMP/disk.img" --rng "latency=1000" \
	--user nobody --chroot "$jail" --stats-json "$TMP/stats.json" \
	--cmdline "blk=verify blkkb=64 lat=2000" >"$TMP/out" 2>"$TMP/err" &
pid=$!
exec 7<&-
uid=""; nnp=""; fd7=yes; mnt_self=$(readlink /proc/self/ns/mnt); mnt=""
for _ in $(seq 100); do
	uid=$(awk '/^Uid:/ { print $2 "/" $3 "/" $4 }' /proc/$pid/status 2>/dev/null)
	if [ "$uid" = 65534/65534/65534 ]; then
		nnp=$(awk '/^NoNewPrivs:/ { print $2 }' /proc/$pid/status)
		[ -e /proc/$pid/fd/7 ] || fd7=no
		mnt=$(readlink /proc/$pid/ns/mnt)
		break
	fi
	sleep 0.05
done
wait "$pid"
status=$?
out=$(cat "$TMP/out"); err=$(cat "$TMP/err")
if [ "$status" = 0 ] && grep -q 'probe: blk verify' <<<"$out"; then
	pass "--user nobody --chroot DIR: the guest runs and its disk works"
else
	fail "--user nobody --chroot DIR: the guest runs and its disk works"
fi
if [ "$uid" = 65534/65534/65534 ] && [ "$nnp" = 1 ]; then
	pass "after setup msivm runs as nobody (real/effective/saved) with no-new-privileges"
else
	fail "after setup msivm runs as nobody with no-new-privileges (uid=$uid nnp=$nnp)"
fi
if [ "$fd7" = no ] && [ -n "$mnt" ] && [ "$mnt" != "$mnt_self" ]; then
	pass "the inherited fd 7 is closed and msivm has its own mount namespace"
else
	fail "the inherited fd 7 is closed and msivm has its own mount namespace (fd7=$fd7 mnt=$mnt)"
fi
if jq -e '.cpu' "$TMP/stats.json" >/dev/null 2>&1; then
	pass "--stats-json opened before the jail is written at the end"
else
	fail "--stats-json opened before the jail is written at the end"
fi

run run --kernel "$PROBE" --user nobody --cmdline "power=acpi-reset"
expect "a jailed msivm ends on a guest reset (123) and says why" 123 '' 'runs jailed'
run run --kernel "$PROBE" --user no-such-user-xyz
expect "--user with an unknown user is refused" 125 '' "no user 'no-such-user-xyz'"
run run --kernel "$PROBE" --chroot "$TMP/missing"
expect "--chroot with a missing directory is refused" 125 '' "--chroot '.*missing'"
run run --kernel "$PROBE" --user nobody --rt 5
expect "--rt with --user is refused" 125 '' 'cannot be combined with --user'

# msivm's own failure while the guest runs has its own status (122), apart from a guest crash
# (126) and from "could not run" (125). RLIMIT_NPROC applies to nobody (never to root): with 3,
# the main, control and I/O threads fit and vCPU 0's thread cannot start. The limit counts every
# process of the user on the host, so msivm runs as a numeric user no process and no account has
# (as `nobody`, one other process of nobody's beside the suite made both checks fail).
nproc_uid=61000
while getent passwd "$nproc_uid" >/dev/null || pgrep -U "$nproc_uid" >/dev/null; do nproc_uid=$((nproc_uid + 1)); done
if command -v prlimit >/dev/null; then
	run_limited() { status=0; timeout "$E2E_TIMEOUT" prlimit --nproc="$1" "$MSIVM" run --kernel "$PROBE" \
		--user "$nproc_uid:$nproc_uid" >"$TMP/out" 2>"$TMP/err" || status=$?; out=$(cat "$TMP/out"); err=$(cat "$TMP/err"); }
	run_limited 3
	expect "a vCPU thread msivm cannot start: exit 122 (msivm failed), and stderr says so" 122 '' \
		'msivm: cannot start vCPU 0: Resource temporarily unavailable'
	# One more thread: vCPU 0 runs. A kernel that starts KVM's NX-huge-page recovery thread at
	# the first KVM_RUN (6.13 and later) cannot, and KVM_RUN answers EAGAIN for ever; msivm must
	# end with 122, never spin. An older kernel started it with the VM: the guest runs to its end.
	run_limited 4
	if [ "$status" = 0 ]; then
		echo "skip - KVM_RUN repeating EAGAIN: this kernel ($(uname -r)) started its helper thread with the VM"
	else
		expect "KVM_RUN failing with EAGAIN again and again ends msivm with 122, not a hang" 122 '' \
			'msivm failed while the guest ran: KVM_RUN failed'
	fi
fi

finish
