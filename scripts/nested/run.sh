#!/usr/bin/env bash
# nested/run.sh: runs one command inside a nested host (QEMU TCG with an AMD CPU whose Linux loads
# kvm_amd: a hardware-style /dev/kvm one level down) that sees this host's whole filesystem over
# virtiofs, in the same directory and with the same environment. For hosts with no usable
# /dev/kvm: make check's e2e suites and msivm lab run their guests in there.
#
#   scripts/nested/run.sh [--smp N] [--mem SIZE] [--timeout SECS] [--name NAME] [--retries N]
#                         [--keep DIR]... -- COMMAND [ARGS...]
#
# The command's output is shown as it comes (it also stays in build/nested/NAME/out). Exit status:
# the command's; 75 when the nested host itself died (a kernel panic or BUG in L1), hung (its
# console, which carries a heartbeat every 15 s, silent for NESTED_SILENCE seconds, default 60) or
# stopped without a result: then the command did not fail, L1 did, and a caller may
# run it again (the reason is in build/nested/NAME/l1-died); --retries N does so itself, at most N
# more times, with a "RETRY:" line (a failure of the command is never retried). 125: the rig could
# not start; 124: the command ran past --timeout (default 3600 s) in a live nested host.
# The nested host has its own /tmp and /run; the source tree, the working directory and each
# --keep DIR are the host's even when they lie below those. Needs root (virtiofsd). The nested
# host's kernel and init: tests/linux/build.sh l1run (built here when missing or older than
# scripts/nested/init or tests/linux/build.sh).
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/../.." && pwd)
smp=${NESTED_SMP:-1} mem=${NESTED_MEM:-4G} tmo=${NESTED_TIMEOUT:-3600} name=run retries=0
keep=()
SILENCE=${NESTED_SILENCE:-60}
while [ $# -gt 0 ]; do
	case "$1" in
	--smp) smp=$2; shift ;;
	--mem) mem=$2; shift ;;
	--timeout) tmo=$2; shift ;;
	--name) name=$2; shift ;;
	--retries) retries=$2; shift ;;
	--keep) keep+=("$(cd "$2" 2>/dev/null && pwd)") || { echo "nested: --keep $2: no such directory" >&2; exit 125; }; shift ;;
	--) shift; break ;;
	-h | --help) sed -n '2,/^set /p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
	*) echo "nested: unknown option $1 (see --help)" >&2; exit 125 ;;
	esac
	shift
done
[ $# -gt 0 ] || { echo "nested: no command given (see --help)" >&2; exit 125; }
[ "$(id -u)" = 0 ] || { echo "nested: needs root (virtiofsd shares the host's files with the nested host)" >&2; exit 125; }
say() { echo "nested: $*" >&2; }
vfsd=/usr/lib/qemu/virtiofsd
command -v qemu-system-x86_64 >/dev/null && [ -x "$vfsd" ] ||
	{ say "needs qemu-system-x86_64 and $vfsd (Debian's qemu-system-x86; scripts/deps.sh installs it)"; exit 125; }

L1=$top/build/linux/l1run
mkdir -p "$top/build/linux"
exec 9>"$top/build/linux/l1run.lock"
flock 9 # two runs at once (make check's two passes) build it once
if [ ! -s "$L1/initramfs.cpio" ] || [ "$here/init" -nt "$L1/initramfs.cpio" ] ||
	[ "$top/tests/linux/build.sh" -nt "$L1/initramfs.cpio" ]; then
	say "building the nested host (Debian cloud kernel, kvm_amd, virtiofs): tests/linux/build.sh l1run"
	OUT=$top/build/linux "$top/tests/linux/build.sh" l1run >&2 || { say "building the nested host failed"; exit 125; }
fi
flock -u 9
exec 9>&-

dir=$top/build/nested/$name
cmd=$(printf '%q ' "$@")
cwd=$PWD
# pyenv's shims are bash scripts that cost seconds per python3 call under TCG: the nested host
# runs the system's interpreters directly.
PATH=$(echo "$PATH" | tr ':' '\n' | grep -v -E '/\.pyenv/(shims|plugins/[^/]*/shims)$' | paste -sd:)
export PATH
# Inside, msivm lab reports its mode as nested, naming this host's KVM.
MSIVM_NESTED=${MSIVM_NESTED:-$("$top/build/msivm" host 2>/dev/null || echo "unknown (build/msivm host did not answer)")}
export MSIVM_NESTED
sock=$dir/vfs.sock console=$dir/l1-console.log

pids=
cleanup() {
	local p
	for p in $pids; do kill -TERM "$p" 2>/dev/null; done
	for p in $pids; do wait "$p" 2>/dev/null; done
	pids=
}
trap 'cleanup; exit 130' INT
trap 'cleanup; exit 143' TERM

# One boot of the nested host running the command; returns as the script exits.
boot() {
	rm -rf "$dir" && mkdir -p "$dir" || return 125
	echo "$cmd" >"$dir/cmd"
	echo "$cwd" >"$dir/cwd"
	printf '%s\n' "$top" "$cwd" "${keep[@]}" >"$dir/keep"
	# MSIVM_KVM_HOST=none (treat this host as one without KVM) is not for the nested host's own.
	export -p | grep -v -E '^declare -x (PWD|OLDPWD|SHLVL|_|MSIVM_KVM_HOST)=' >"$dir/env"
	"$vfsd" --socket-path="$sock" -o source=/ -o sandbox=chroot -o cache=always -o log_level=err >"$dir/virtiofsd.log" 2>&1 &
	vp=$!
	pids=$vp
	for _ in $(seq 50); do [ -S "$sock" ] && break; sleep 0.1; done
	[ -S "$sock" ] || { say "virtiofsd did not start: $(tail -n 3 "$dir/virtiofsd.log")"; cleanup; return 125; }

	t0=$(date +%s)
	: >"$console"
	timeout -k 10 "$tmo" qemu-system-x86_64 -accel tcg,thread=multi -cpu max -smp "$smp" -m "$mem" \
		-M q35,memory-backend=mem -object memory-backend-memfd,id=mem,size="$mem",share=on \
		-nodefaults -no-user-config -display none -no-reboot -serial "file:$console" \
		-chardev socket,id=vfs,path="$sock" -device vhost-user-fs-pci,chardev=vfs,tag=hostroot \
		-kernel "$L1/vmlinuz" -initrd "$L1/initramfs.cpio" \
		-append "console=ttyS0 panic=-1 quiet nr.dir=$dir" </dev/null >"$dir/qemu.log" 2>&1 &
	qp=$!
	pids="$qp $vp"
	# The command's output as it comes.
	: >"$dir/out"
	tail -n +1 -F "$dir/out" 2>/dev/null &
	tp=$!
	pids="$qp $vp $tp"
	hung=
	while kill -0 "$qp" 2>/dev/null; do
		sleep 2
		[ -e "$dir/status" ] && continue
		if [ $(($(date +%s) - $(stat -c %Y "$console"))) -gt "$SILENCE" ] && [ $(($(date +%s) - t0)) -gt "$SILENCE" ]; then
			hung="its console (heartbeat every 15 s) was silent for ${SILENCE}s"
			kill -TERM "$qp" 2>/dev/null
			break
		fi
	done
	wait "$qp"
	qrc=$?
	sleep 0.5 # the last output lines
	kill "$tp" 2>/dev/null
	wait "$tp" 2>/dev/null
	kill "$vp" 2>/dev/null
	wait "$vp" 2>/dev/null
	pids=
	if [ -s "$dir/status" ]; then
		return "$(cat "$dir/status")"
	fi
	why=$(grep -a -E '(Kernel panic|BUG:|Oops|@@ nested fault)' "$console" | head -n 2 | tr -d '\r' | tr '\n' ' ')
	if [ -z "$why$hung" ] && [ "$qrc" != 124 ]; then
		# The nested host stopped without a command result and without a sign of its own failure.
		grep -q '@@ nested: running the command' "$console" || {
			say "the nested host never started the command (QEMU status $qrc): $(tail -n 3 "$dir/qemu.log" "$console" | tr '\n' ' ')"
			return 125
		}
		why="stopped with QEMU status $qrc before the command finished, no panic line"
	fi
	if [ "$qrc" = 124 ] && [ -z "$why$hung" ]; then
		say "the command did not finish within ${tmo}s (the nested host was alive): stopped"
		return 124
	fi
	[ -n "$hung" ] && why="hung: $hung${why:+; $why}"
	echo "$why" >"$dir/l1-died"
	say "the nested host (L1) died: $why; console: $console"
	return 75
}

attempt=1
while :; do
	boot
	st=$?
	[ "$st" = 75 ] && [ "$attempt" -le "$retries" ] || exit "$st"
	attempt=$((attempt + 1))
	say "RETRY: the nested host died (not the command, not msivm, not its guest): $(cat "$dir/l1-died"); booting it again (boot $attempt of at most $((retries + 1)))"
	cp "$console" "$top/build/nested/$name-l1-console-boot$((attempt - 1)).log" 2>/dev/null
done
