#!/usr/bin/env bash
# End-to-end: the README and docs/ stay true. Every block marked `<!-- doc-run: NAME -->` (a
# probe-guest example) runs as written, with build/msivm, the probe and /tmp/ pointed at this
# pass's binaries and scratch directory; every relative link of README.md and docs/ resolves; the
# run options of `msivm --help`, the man page and docs/usage.md are the same list; the README's
# test command is what .ci/run runs.
set -u
here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/../.." && pwd)
. "$here/lib.sh"
MSIVM_ABS=$(cd "$(dirname "$MSIVM")" && pwd)/$(basename "$MSIVM")
PROBE_ABS=$(cd "$(dirname "$PROBE")" && pwd)/$(basename "$PROBE")
docs=("$top/README.md" "$top"/docs/*.md "$top/docs/results/README.md")

# --- 1. runnable examples: each line as the reader types it (a trailing `&` runs it in the
# background, and the next line waits for the API socket it names, then 2 s, a reader's pace);
# every line must succeed, and a background VM must end with status 0 by the end of its block.
# blocks FILE: prints "NAME<TAB>command" for each line of each marked block (continuations joined).
blocks() {
	awk '/^<!-- doc-run: [a-z0-9-]+ -->$/ { name = $3; want = 1; next }
	     want && /^```/ { inb = 1; want = 0; next }
	     inb && /^```/ { inb = 0; next }
	     inb { if (sub(/\\$/, "")) { cont = cont $0; next } print name "\t" cont $0; cont = "" }' "$1"
}
nblocks=0
for f in "${docs[@]}"; do
	rel=${f#$top/}
	names=$(blocks "$f" | cut -f1 | uniq)
	for name in $names; do
		nblocks=$((nblocks + 1))
		dir="$TMP/run-$name"
		mkdir -p "$dir"
		bg=() ok=1 why=""
		while IFS=$'\t' read -r n cmd; do
			[ "$n" = "$name" ] || continue
			cmd=${cmd//build\/guest\/probe.elf/$PROBE_ABS}
			cmd=${cmd//build\/msivm/$MSIVM_ABS}
			cmd=${cmd//\/tmp\//$dir\/}
			if [[ "$cmd" =~ ^(.*)\&[[:space:]]*$ ]]; then
				(cd "$dir" && timeout 60 bash -c "${BASH_REMATCH[1]}" >"$dir/bg.out" 2>"$dir/bg.err") &
				bg+=($!)
				sock=$(grep -oE -- '--api-socket [^ ]+' <<<"$cmd" | cut -d' ' -f2)
				for _ in $(seq 100); do [ -z "$sock" ] || [ -S "$sock" ] && break; sleep 0.1; done
				sleep 2 # a reader's pace: the guest is up (e.g. its power button enabled) by the next line
				continue
			fi
			(cd "$dir" && timeout 60 bash -c "$cmd") >"$dir/out" 2>"$dir/err"
			st=$?
			if [ "$st" != 0 ]; then
				ok=0 why="'$cmd' exited $st: $(tail -2 "$dir/err" "$dir/out" | tr '\n' ' ')"
				break
			fi
		done < <(blocks "$f")
		for p in "${bg[@]}"; do
			if ! wait "$p"; then
				[ "$ok" = 1 ] && why="its background VM did not end with 0: $(tail -2 "$dir/bg.err" | tr '\n' ' ')"
				ok=0
			fi
		done
		status=0 out="" err="$why"
		if [ "$ok" = 1 ]; then pass "$rel: the example '$name' runs as written"; else fail "$rel: the example '$name': $why"; fi
	done
done
status=0 out="" err=""
if [ "$nblocks" -ge 4 ]; then pass "$nblocks runnable examples found in README.md and docs/"
else fail "only $nblocks runnable examples found (the README's and docs' markers were lost?)"; fi

# --- 2. links: every relative link target of README.md and docs/*.md exists.
bad=""
nlinks=0
for f in "${docs[@]}"; do
	d=$(dirname "$f")
	while read -r t; do
		t=${t%%#*}
		[ -n "$t" ] || continue
		nlinks=$((nlinks + 1))
		[ -e "$d/$t" ] || bad="$bad ${f#$top/}->$t"
	done < <(grep -oE '\]\([^)]+\)' "$f" | sed -E 's/^\]\(//; s/\)$//' | grep -vE '^(https?:|mailto:|#)')
done
if [ -z "$bad" ] && [ "$nlinks" -gt 20 ]; then pass "all $nlinks relative links of README.md and docs/ resolve"
else err="broken:$bad (links: $nlinks)"; fail "links of README.md and docs/ resolve"; fi

# --- 3. the run options: --help, the man page's RUN OPTIONS and docs/usage.md list the same.
help_start=$("$MSIVM" --help | grep -oE '^  (-[a-z], )?--[a-z][a-z0-9-]*' | grep -oE -- '--[a-z0-9-]+' | sort -u)
help_all=$("$MSIVM" --help | grep -oE -- '--[a-z][a-z0-9-]*' | sort -u)
man_opts=$(awk '/^\.SH "RUN OPTIONS"/ { f = 1; next } /^\.SH / { f = 0 } f && prev ~ /^\.TP/ { print } { prev = $0 }' \
	"$top/man/msivm.1" | grep -oE '\\-\\-[a-z][a-z0-9\\-]*' | sed 's/\\//g' | sort -u)
missing=""
for o in $help_start; do grep -qx -- "$o" <<<"$man_opts" || missing="$missing $o(not in the man page)"; done
for o in $man_opts; do
	grep -qx -- "$o" <<<"$help_all" || missing="$missing $o(not in --help)"
	grep -qE -- "$o([^a-z0-9-]|$)" "$top/docs/usage.md" || missing="$missing $o(not in docs/usage.md)"
done
status=0 out="" err="$missing"
if [ -z "$missing" ] && [ "$(wc -w <<<"$man_opts")" -gt 30 ]; then
	pass "the $(wc -w <<<"$man_opts") run options agree: --help, man page, docs/usage.md"
else
	fail "run options differ:$missing"
fi

# --- 4. the README's two commands are the ones CI and the lab tests keep true.
readme="$top/README.md"
if grep -qF '    scripts/deps.sh && make check && make check-linux' "$readme" &&
	grep -qx 'scripts/deps.sh' "$top/.ci/run" && grep -qx 'make check' "$top/.ci/run" &&
	grep -qE '^LINUX_CHECK_RETRY_UNTIL=.* make check-linux$' "$top/.ci/run" &&
	grep -qF '    scripts/deps.sh && make && build/msivm lab --runs 1 --force' "$readme"; then
	pass "README's test command is .ci/run's, and its main job is there"
else
	err="README.md or .ci/run changed its commands"; fail "README's two commands and .ci/run agree"
fi
finish
