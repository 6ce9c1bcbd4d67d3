#!/usr/bin/env bash
# End-to-end test runner: runs every tests/e2e/test_*.sh and fails if any of them fails.
set -u
here=$(dirname "$0")
failed=()
for t in "$here"/test_*.sh; do
	echo "== $(basename "$t")"
	bash "$t" || failed+=("$(basename "$t")")
done
if [ ${#failed[@]} -gt 0 ]; then
	echo "e2e: failed: ${failed[*]}"
	exit 1
fi
echo "e2e: all suites passed"
