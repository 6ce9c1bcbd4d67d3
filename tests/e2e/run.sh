#!/usr/bin/env bash
# End-to-end test runner: runs every tests/e2e/test_*.sh (but those named in E2E_SKIP) and fails if any of them fails.
set -u
here=$(dirname "$0")
failed=()
start=$SECONDS
for t in "$here"/test_*.sh; do
	case " ${E2E_SKIP:-} " in *" $(basename "$t") "*) echo "== $(basename "$t"): skipped (E2E_SKIP)"; continue ;; esac
	echo "== $(basename "$t")"
	t0=$SECONDS
	bash "$t" || failed+=("$(basename "$t")")
	echo "== $(basename "$t"): $((SECONDS - t0)) s"
done
echo "e2e: $((SECONDS - start)) s in all"
if [ ${#failed[@]} -gt 0 ]; then
	echo "e2e: failed: ${failed[*]}"
	exit 1
fi
echo "e2e: all suites passed"
