# guest/guest.mk - build fragment for the msivm probe guest (freestanding PVH ELF).
#
# Included by the top-level Makefile, or used standalone from the project root:
#   make -f guest/guest.mk build/guest/probe.elf
# Only GUEST_* variables and BUILD are used/defined here.  Every guest/src/*.c
# and guest/src/*.S file is compiled and linked, so new drivers only need a
# new source file.

BUILD ?= build

GUEST_DIR        := $(patsubst %/,%,$(dir $(lastword $(MAKEFILE_LIST))))
# When included, do not steal the includer's default goal (restored below).
GUEST_STANDALONE := $(filter 1,$(words $(MAKEFILE_LIST)))
GUEST_PREV_GOAL  := $(.DEFAULT_GOAL)

GUEST_SRCDIR  := $(GUEST_DIR)/src
GUEST_OUT     := $(BUILD)/guest
GUEST_ELF     := $(GUEST_OUT)/probe.elf
GUEST_LDS     := $(GUEST_DIR)/probe.ld

GUEST_CC      ?= gcc
GUEST_CFLAGS  := -std=gnu11 -O2 -Wall -Wextra -Werror -ffreestanding \
                 -fno-stack-protector -fno-pic -fno-pie -mno-red-zone \
                 -mgeneral-regs-only -fcf-protection=none \
                 -fno-asynchronous-unwind-tables -MMD -MP
GUEST_ASFLAGS := $(GUEST_CFLAGS)
GUEST_LDFLAGS := -nostdlib -static -no-pie -Wl,--build-id=none -T $(GUEST_LDS)

GUEST_CSRCS   := $(sort $(wildcard $(GUEST_SRCDIR)/*.c))
GUEST_SSRCS   := $(sort $(wildcard $(GUEST_SRCDIR)/*.S))
# entry.S first so the 32-bit entry sits at the start of .text.
GUEST_OBJS    := $(patsubst $(GUEST_SRCDIR)/%.S,$(GUEST_OUT)/%.o,$(GUEST_SSRCS)) \
                 $(patsubst $(GUEST_SRCDIR)/%.c,$(GUEST_OUT)/%.o,$(GUEST_CSRCS))
GUEST_DEPS    := $(GUEST_OBJS:.o=.d)

$(GUEST_ELF): $(GUEST_OBJS) $(GUEST_LDS)
	$(GUEST_CC) $(GUEST_LDFLAGS) -o $@ $(GUEST_OBJS)

$(GUEST_OUT)/%.o: $(GUEST_SRCDIR)/%.c | $(GUEST_OUT)
	$(GUEST_CC) $(GUEST_CFLAGS) -c -o $@ $<

$(GUEST_OUT)/%.o: $(GUEST_SRCDIR)/%.S | $(GUEST_OUT)
	$(GUEST_CC) $(GUEST_ASFLAGS) -c -o $@ $<

$(GUEST_OUT):
	mkdir -p $@

.PHONY: guest-clean
guest-clean:
	rm -rf $(GUEST_OUT)

-include $(GUEST_DEPS)

ifeq ($(GUEST_STANDALONE),)
.DEFAULT_GOAL := $(GUEST_PREV_GOAL)
endif
