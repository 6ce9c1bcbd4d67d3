/* Shared fixture of the PCI and interrupt tests: buses, GSI routes without KVM, fake guest RAM. */
#ifndef MSIVM_TESTS_FAKE_VM_H
#define MSIVM_TESTS_FAKE_VM_H

#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bus/bus.h"
#include "irq/gsi_routes.h"
#include "pci/pci_func.h"
#include "core/guest_mem.h"

/* The real layout (arch/x86/layout.h), small RAM. */
#define FAKE_RAM_SIZE   (1u << 20)
#define FAKE_HOLE_START 0xC0000000ull
#define FAKE_HOLE_END   0x100000000ull
#define FAKE_WIN_START  0xC0000000ull
#define FAKE_WIN_END    0xE0000000ull
#define FAKE_ECAM_BASE  0xE0000000ull

/* What a VM gives the PCI layer, with vm_fd -1: no ioctls, commits are only counted. */
struct fake_vm {
	struct bus pio, mmio;
	struct gsi_routes routes;
	uint8_t *ram;
	struct guest_mem mem;
};

static inline struct pci_window fake_window(void)
{
	return (struct pci_window){ FAKE_WIN_START, FAKE_WIN_END };
}

static inline void fake_vm_free(struct fake_vm *vm)
{
	if (!vm)
		return;
	gsi_routes_destroy(&vm->routes);
	bus_destroy(&vm->mmio);
	bus_destroy(&vm->pio);
	free(vm->ram);
	free(vm);
}

static inline struct fake_vm *fake_vm_new(void)
{
	struct fake_vm *vm = calloc(1, sizeof(*vm));
	if (!vm)
		return NULL;
	vm->ram = calloc(1, FAKE_RAM_SIZE);
	if (!vm->ram || bus_init(&vm->pio, "pio") || bus_init(&vm->mmio, "mmio") ||
	    gsi_routes_init(&vm->routes, -1) ||
	    guest_mem_init(&vm->mem, vm->ram, FAKE_RAM_SIZE, FAKE_HOLE_START, FAKE_HOLE_END)) {
		free(vm->ram);
		free(vm);
		return NULL;
	}
	return vm;
}

/* Reads and resets a nonblocking eventfd: how many times it was written since the last read. */
static inline uint64_t efd_take(int fd)
{
	uint64_t v = 0;
	if (read(fd, &v, sizeof(v)) != sizeof(v))
		return 0; /* EAGAIN: never written */
	return v;
}

/* The route KVM would get for `gsi` (an MSI GSI, >= 24). */
static inline const struct gsi_msi_route *fake_route(const struct fake_vm *vm, uint32_t gsi)
{
	return &vm->routes.msi[gsi - GSI_MSI_FIRST];
}

/* Fills the stack below the caller with `v`, so that the next call made
 * from the same frame finds `v` in any local it does not initialise. */
static __attribute__((noinline, unused)) void scribble_stack(uint8_t v)
{
	volatile uint8_t buf[8192];
	for (size_t i = 0; i < sizeof(buf); i++)
		buf[i] = v;
}

#endif
