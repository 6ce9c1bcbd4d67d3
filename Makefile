# msivm: one build for the VMM, the probe guest and the tests.
#   make            build/msivm, build/msivm-lab (the lab, started by `msivm lab`) and build/guest/probe.elf
#   make check      unit + end-to-end tests, and the same under ASan+UBSan (without a usable
#                   /dev/kvm the guests run in nested hosts: tests/e2e/run.sh)
#   make sanitize   build-san/msivm and the unit tests with ASan+UBSan
#   make install    msivm, the probe guest and the manual under $(DESTDIR)$(PREFIX)
#   make static     build-static/msivm, statically linked, for Firecracker's jailer (docs/kata.md)
BUILD   ?= build
CC      ?= gcc
VERSION := 0.1.0

CFLAGS_BASE := -std=gnu11 -O2 -g -Wall -Wextra -Werror -Wshadow -Wvla \
               -Wno-unused-parameter -D_GNU_SOURCE -DMSIVM_VERSION=\"$(VERSION)\" \
               -Isrc -MMD -MP
# Hardening: stack protector, fortified libc calls, full RELRO with immediate binding.
CFLAGS_BASE += -fstack-protector-strong -D_FORTIFY_SOURCE=2
LDFLAGS     += -Wl,-z,relro,-z,now
SAN_FLAGS   := -fsanitize=address,undefined -fno-sanitize-recover=all -fno-omit-frame-pointer
ifeq ($(SANITIZE),1)
CFLAGS_BASE += $(SAN_FLAGS)
LDFLAGS     += $(SAN_FLAGS)
endif
CFLAGS  += $(CFLAGS_BASE)
LDLIBS  += -lpthread -ljansson -luring -lseccomp -lnettle
# make static: libmicrohttpd linked in from build-static/deps (see the static target below).
ifeq ($(STATIC),1)
STATIC_DEPS := build-static/deps
CFLAGS_BASE += -DMSIVM_STATIC -I$(STATIC_DEPS)/include
LDFLAGS     += -static-pie
LDLIBS      := $(STATIC_DEPS)/lib/libmicrohttpd.a $(LDLIBS)
endif
# libmicrohttpd is opened at run time, only for an API socket (src/api/mhd_lib.c); fuzz_api,
# which drives it itself, links it (tests/fuzz/fuzz.mk).

# Everything but main.c and the lab goes into a static library the tests link against; the lab
# (src/lab, but its main in lab_prog.c) into its own, which only msivm-lab and its tests link:
# build/msivm carries no lab code (`msivm lab` execs build/msivm-lab, see docs/lab.md).
LIB_SRCS := $(filter-out src/main.c src/lab/%,$(shell find src -name '*.c' | sort))
LIB_OBJS := $(LIB_SRCS:%.c=$(BUILD)/%.o) $(BUILD)/gen/seccomp_progs.o
LIB      := $(BUILD)/libmsivm.a
LAB_SRCS := $(filter-out src/lab/lab_prog.c,$(sort $(wildcard src/lab/*.c)))
LAB_LIB  := $(BUILD)/libmsivm-lab.a

UNIT_SRCS  := $(sort $(wildcard tests/unit/test_*.c))
UNIT_BINS  := $(UNIT_SRCS:tests/unit/%.c=$(BUILD)/tests/%)

.PHONY: all check unit e2e sanitize check-sanitize clean bench kernel
all: $(BUILD)/msivm $(BUILD)/msivm-lab $(BUILD)/guest/probe.elf

$(BUILD)/%.o: %.c
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) -c $< -o $@

# The seccomp filters are compiled to BPF here, once, as Firecracker does: msivm loads them at start
# instead of having libseccomp compile five filters then (1-2 ms each natively, tens nested).
$(BUILD)/gen/seccomp_gen: tools/seccomp_gen.c $(BUILD)/src/vmm/seccomp_rules.o
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) -o $@ $(filter %.c %.o,$^) $(LDFLAGS) -lseccomp

$(BUILD)/gen/seccomp_progs.c: $(BUILD)/gen/seccomp_gen
	$< $@.tmp && mv $@.tmp $@

$(BUILD)/gen/seccomp_progs.o: $(BUILD)/gen/seccomp_progs.c
	$(CC) $(CFLAGS) -c $< -o $@

$(LIB): $(LIB_OBJS)
	@rm -f $@
	ar rcs $@ $^

$(LAB_LIB): $(LAB_SRCS:%.c=$(BUILD)/%.o)
	@rm -f $@
	ar rcs $@ $^

$(BUILD)/msivm: $(BUILD)/src/main.o $(LIB)
	$(CC) $(LDFLAGS) -o $@ $^ $(LDLIBS)

$(BUILD)/msivm-lab: $(BUILD)/src/lab/lab_prog.o $(LAB_LIB) $(LIB)
	$(CC) $(LDFLAGS) -o $@ $^ $(LDLIBS)

$(BUILD)/tests/%: tests/unit/%.c $(LAB_LIB) $(LIB)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) -Itests/unit -o $@ $< $(LAB_LIB) $(LIB) $(LDFLAGS) $(LDLIBS) -lcmocka

# The bzImage tests read a real Debian cloud kernel; fetch it once (cached in build/kernel).
# Without network they print a skip notice for the real-kernel cases.
kernel:
	@scripts/fetch-kernel.sh build/kernel >/dev/null || echo "unit: no Debian kernel; real-bzImage cases skip"

unit: $(UNIT_BINS) kernel
	@set -e; for t in $(UNIT_BINS); do echo "== $$t"; $$t; done

e2e: $(BUILD)/msivm $(BUILD)/msivm-lab $(BUILD)/guest/probe.elf
	MSIVM=$(BUILD)/msivm PROBE=$(BUILD)/guest/probe.elf tests/e2e/run.sh

# The sanitizer build lives in its own tree; the guest is not instrumented.
# (compiled on every CPU: the instrumented build is the slowest step of make check before the e2e)
sanitize:
	$(MAKE) -j$(shell nproc) BUILD=build-san SANITIZE=1 build-san/msivm build-san/msivm-lab $(patsubst $(BUILD)/%,build-san/%,$(UNIT_BINS))

# The sanitized pass kills msivm 5 times per engine in test_crash.sh (the normal pass does the 20
# that the crash-consistency bar asks for).
check-sanitize: sanitize $(BUILD)/guest/probe.elf
	$(MAKE) BUILD=build-san SANITIZE=1 unit
	CRASH_ITERS=5 MSIVM=build-san/msivm PROBE=$(BUILD)/guest/probe.elf tests/e2e/run.sh

# check: unit tests (both builds), then the e2e suites of both builds (tests/e2e/passes.sh: on this
# host, or in nested hosts when it has no usable /dev/kvm).
# Then the lab's report.html of each pass (kept by test_lab.sh) in a headless chromium, on this host.
check: all unit sanitize $(BUILD)/guest/probe.elf
	$(MAKE) BUILD=build-san SANITIZE=1 unit
	rm -rf $(BUILD)/lab-html
	MSIVM=$(BUILD)/msivm SAN_MSIVM=build-san/msivm PROBE=$(BUILD)/guest/probe.elf tests/e2e/passes.sh
	tests/e2e/check_report_html.sh $(BUILD)/lab-html/*/report.html

bench: all
	bench/boot.sh

clean:
	rm -rf build build-san build-static

# msivm lab finds the probe at ../lib/msivm/probe.elf from msivm's directory.
PREFIX ?= /usr/local
.PHONY: install
install: $(BUILD)/msivm $(BUILD)/msivm-lab $(BUILD)/guest/probe.elf
	install -D -m 0755 $(BUILD)/msivm $(DESTDIR)$(PREFIX)/bin/msivm
	install -D -m 0755 $(BUILD)/msivm-lab $(DESTDIR)$(PREFIX)/bin/msivm-lab
	install -D -m 0644 $(BUILD)/guest/probe.elf $(DESTDIR)$(PREFIX)/lib/msivm/probe.elf
	install -D -m 0644 man/msivm.1 $(DESTDIR)$(PREFIX)/share/man/man1/msivm.1

# A static msivm, build-static/msivm, for Firecracker's jailer (which copies only the binary into its
# chroot). Debian's libmicrohttpd.a needs gnutls's archive, which needs p11-kit's, absent from
# Debian; scripts/static-deps.sh builds Debian's libmicrohttpd source package without HTTPS into
# build-static/deps (apt-get source: Debian's archive is its only network), and the rest links
# from the -dev packages' archives. docs/kata.md; scripts/jail-libs.sh remains the dynamic way.
.PHONY: static
static:
	scripts/static-deps.sh build-static/deps
	$(MAKE) BUILD=build-static STATIC=1 build-static/msivm

include guest/guest.mk
include tests/fuzz/fuzz.mk
-include $(shell find $(BUILD) -name '*.d' 2>/dev/null)

# Slow, not part of check: boot Debian's cloud kernel (scripts/fetch-kernel.sh) under msivm
# and check its console (command line, e820, ACPI MADT/MCFG). Minutes under an emulated KVM.
.PHONY: slow-linux
slow-linux: $(BUILD)/msivm
	MSIVM=$(BUILD)/msivm LINUX_BOOT_LOG=$(BUILD)/slow/linux_boot.log tests/slow/linux_boot.sh

# Slow, not part of check: Debian's stock cloud kernel under msivm (and QEMU) with the checks of
# tests/linux (interrupts, blk, net, console, rng, power) in every interrupt mode. On a host whose
# /dev/kvm cannot run a stock kernel (PVM) it runs inside a nested QEMU TCG L1. See docs/linux-guests.md.
.PHONY: check-linux
check-linux: all
	tests/linux/check-linux.sh

# Slow, not part of check: kvm-unit-tests x86 (../shared/kvm-unit-tests, built into build/kut/) under
# QEMU and under msivm (--testdev), one table and "N passed, N failed" for msivm (docs/kut.md).
# KUT_ARGS: --nested (the nested rig: hardware-style KVM), --vmm msivm|qemu, entry names.
.PHONY: check-kut
check-kut: all
	tests/kut/run.sh $(KUT_ARGS)

# The seeds' experiments on a stock Linux guest (msivm lab --guest linux; nested on PVM hosts;
# root). LAB_ARGS: more lab options, e.g. LAB_ARGS="--vs qemu --runs 3".
.PHONY: lab-linux
lab-linux: all
	scripts/lab-linux.sh $(LAB_ARGS)
