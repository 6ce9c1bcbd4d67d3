# libFuzzer targets (docs/fuzzing.md), included from the Makefile.
#   make fuzz-build                 build-fuzz/fuzz_*: clang, ASan+UBSan, libFuzzer
#   make fuzz [FUZZ_SECONDS=60]     every target for FUZZ_SECONDS each; fails if any crashes
#   make fuzz-replay                every target once over its checked-in corpus (seconds)
#   make fuzz-clean                 removes build-fuzz/
# The library is compiled again with clang into build-fuzz/ (build/ and build-san/ are untouched).
FUZZ_BUILD   := build-fuzz
FUZZ_CC      ?= clang
FUZZ_SECONDS ?= 60
FUZZ_SAN     := -fsanitize=address,undefined -fno-sanitize-recover=all -fno-omit-frame-pointer
# src/ uses a GNU flexible-array idiom (arch/x86/tsc.c) that clang warns about.
FUZZ_CFLAGS  := $(filter-out $(SAN_FLAGS),$(CFLAGS_BASE)) $(FUZZ_SAN) -fsanitize=fuzzer-no-link \
                -Wno-gnu-variable-sized-type-not-at-end
# gcc's -Werror build is the judge of src/; here clang-only diagnostics in src/ stay warnings so that
# they cannot stop the fuzzers (the targets themselves are -Werror clean under clang).
FUZZ_SRC_WERROR ?= -Wno-error
FUZZ_OBJS    := $(LIB_SRCS:%.c=$(FUZZ_BUILD)/%.o) $(FUZZ_BUILD)/gen/seccomp_progs.o
FUZZ_LIB     := $(FUZZ_BUILD)/libmsivm.a
FUZZ_SRCS    := $(sort $(wildcard tests/fuzz/fuzz_*.c))
FUZZ_NAMES   := $(FUZZ_SRCS:tests/fuzz/%.c=%)
FUZZ_BINS    := $(FUZZ_NAMES:%=$(FUZZ_BUILD)/%)
FUZZ_RUN     := -timeout=10 -rss_limit_mb=2048 -print_final_stats=1

.PHONY: fuzz-build fuzz fuzz-replay fuzz-clean
fuzz-build: $(FUZZ_BINS)

$(FUZZ_BUILD)/src/%.o: src/%.c
	@mkdir -p $(dir $@)
	$(FUZZ_CC) $(FUZZ_CFLAGS) $(FUZZ_SRC_WERROR) -c $< -o $@

$(FUZZ_BUILD)/gen/seccomp_progs.o: $(BUILD)/gen/seccomp_progs.c
	@mkdir -p $(dir $@)
	$(FUZZ_CC) $(FUZZ_CFLAGS) -c $< -o $@

$(FUZZ_LIB): $(FUZZ_OBJS)
	@rm -f $@
	ar rcs $@ $^

$(FUZZ_BUILD)/fuzz_%: tests/fuzz/fuzz_%.c $(FUZZ_LIB)
	$(FUZZ_CC) $(FUZZ_CFLAGS) -Itests/fuzz -fsanitize=fuzzer -o $@ $< $(FUZZ_LIB) $(LDLIBS) -lmicrohttpd

# New inputs go to build-fuzz/corpus/<target> (the checked-in seeds are only read),
# crashes to build-fuzz/crashes/<target>/.
fuzz: fuzz-build
	@fail=; for t in $(FUZZ_NAMES); do \
		mkdir -p $(FUZZ_BUILD)/corpus/$$t $(FUZZ_BUILD)/crashes/$$t; \
		echo "== $$t ($(FUZZ_SECONDS) s)"; \
		if ! $(FUZZ_BUILD)/$$t $(FUZZ_RUN) -max_total_time=$(FUZZ_SECONDS) \
			-artifact_prefix=$(FUZZ_BUILD)/crashes/$$t/ \
			$(FUZZ_BUILD)/corpus/$$t tests/fuzz/corpus/$$t \
			> $(FUZZ_BUILD)/$$t.log 2>&1; then \
			echo "FAIL $$t: see $(FUZZ_BUILD)/$$t.log and $(FUZZ_BUILD)/crashes/$$t/"; \
			tail -n 40 $(FUZZ_BUILD)/$$t.log; fail="$$fail $$t"; \
		else grep -E '^stat::number_of_executed_units|^#[0-9]+.*DONE' $(FUZZ_BUILD)/$$t.log | tr '\n' ' '; echo; fi; \
	done; \
	if [ -n "$$fail" ]; then echo "fuzz: crashed:$$fail"; exit 1; fi; echo "fuzz: no crashes"

fuzz-replay: fuzz-build
	@set -e; for t in $(FUZZ_NAMES); do \
		ins=$$(find tests/fuzz/corpus/$$t tests/fuzz/crashes/$$t -type f 2>/dev/null || true); \
		echo "== $$t: $$(echo "$$ins" | grep -c . ) inputs"; \
		[ -z "$$ins" ] || $(FUZZ_BUILD)/$$t $$ins > $(FUZZ_BUILD)/$$t.replay.log 2>&1 || \
			{ tail -n 40 $(FUZZ_BUILD)/$$t.replay.log; exit 1; }; \
	done

fuzz-clean:
	rm -rf $(FUZZ_BUILD)

-include $(shell find $(FUZZ_BUILD) -name '*.d' 2>/dev/null)
