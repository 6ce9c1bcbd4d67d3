/* Snapshots: a paused VM's state (vCPUs, irqchip, clock, devices, configuration) to a checksummed file and its RAM to another, and back into a new VM. */
#ifndef MSIVM_VMM_VM_SNAPSHOT_H
#define MSIVM_VMM_VM_SNAPSHOT_H

#include <fcntl.h>
#include <jansson.h>
#include <stdbool.h>
#include <stdint.h>

#include "util/error.h"

struct vm;

/* The state file: this header, then `body_len` bytes of JSON (docs/snapshot.md). */
#define VM_SNAPSHOT_MAGIC "MSIVMSNP"
#define VM_SNAPSHOT_FORMAT 1u
struct vm_snapshot_header {
	char magic[8];            /* VM_SNAPSHOT_MAGIC, no NUL */
	uint32_t format;          /* VM_SNAPSHOT_FORMAT */
	uint32_t header_size;     /* sizeof(struct vm_snapshot_header): 64 */
	uint64_t body_len;        /* bytes of JSON after the header */
	uint8_t sha256[32];       /* SHA-256 of those bytes */
	uint8_t reserved[8];      /* zero */
};
#define VM_SNAPSHOT_BODY_MAX (64u << 20) /* a state file's JSON is far smaller */

/* The memory file: the RAM (regions back to back), then this trailer, alone in its last 4096
 * bytes: it binds the file to its state file (the same random id in both) without a byte of RAM
 * being read at restore, and leaves the RAM a plain file that is mapped as it is. */
#define VM_SNAPSHOT_MEM_MAGIC "MSIVMRAM"
#define VM_SNAPSHOT_MEM_TRAILER 4096u
struct vm_snapshot_mem_trailer {
	char magic[8];            /* VM_SNAPSHOT_MEM_MAGIC, no NUL */
	uint32_t format;          /* VM_SNAPSHOT_FORMAT */
	uint32_t trailer_size;    /* VM_SNAPSHOT_MEM_TRAILER */
	uint64_t ram_size;        /* bytes of RAM before the trailer */
	uint8_t id[16];           /* the state file's memory.id */
	uint8_t reserved[24];     /* zero */
};

/* How the snapshot files are opened (the API thread's seccomp filter allows exactly these):
 * always a new file, never one that exists (a replacement is written under a new name first,
 * then renamed over the old one). */
#define VM_SNAPSHOT_OPEN_FLAGS (O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC)

/* The state of `vm`, whose vCPUs are parked (vm_pause) and whose I/O thread is parked with
 * its devices quiesced (vm_io_park), as the state file's JSON: msivm's version, the guest's
 * CPUID features, `config_json` (what --print-config prints), the RAM layout, the irqchip, PIT
 * and kvmclock, every vCPU, COM1 and every device. Returns it (the caller json_decref's it),
 * or NULL with a message; *refused is then true when a device cannot be saved (vhost
 * backends, vsock, VFIO, --testdev's devices), false when KVM or memory failed. Nothing is written. */
json_t *vm_snapshot_state(struct vm *vm, const char *config_json, bool *refused,
			  struct error *err);

/* Writes a state vm_snapshot_state made to `state_fd` (the header with its SHA-256, then the
 * JSON) and the VM's RAM to `mem_fd` (the regions back to back, sized with ftruncate, pages of
 * zeroes left as holes, then the trailer with the state's memory.id); mem_fd -1: the RAM is the
 * VM's --mem-file, flushed to it instead (msync) and the trailer written after it. The VM stays
 * parked. Returns 0 or -errno with a message. */
int vm_snapshot_write(struct vm *vm, const json_t *state, int state_fd, int mem_fd,
		      struct error *err);

/* Reads and checks a state file: its header (magic, format, size), its checksum, its JSON.
 * Returns the JSON root (the caller json_decref's it), or NULL with a message naming the
 * problem (truncated, corrupted, another format, not a snapshot). */
json_t *vm_snapshot_read(const char *path, struct error *err);

/* The configuration a snapshot was taken with (an object as --print-config prints), or NULL. */
const json_t *vm_snapshot_config(const json_t *root);

/* Puts a snapshot into `vm`, just built (vm_create) from its configuration and not yet run:
 * checks the CPU (vendor, and every saved CPUID feature present on this host), the RAM size,
 * the vCPU and device counts and types; that `mem_fd` is this state's memory file (its size and
 * trailer: the id the state names, 4 KiB read, no RAM); maps `mem_fd` over guest RAM (private: the file is
 * never written; pages load on first touch) or, with `copy`, reads it in; then the kvmclock,
 * irqchip, PIT, vCPUs, COM1 and devices. Returns 0 or -errno with a message (the VM is then
 * to be destroyed; -EOPNOTSUPP before anything for a VM with --testdev's devices). */
int vm_snapshot_restore(struct vm *vm, const json_t *root, int mem_fd, bool copy,
			struct error *err);

#endif
