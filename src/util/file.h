/* Files: read-only mappings of user-supplied images (kernels, later disks' metadata). */
#ifndef MSIVM_UTIL_FILE_H
#define MSIVM_UTIL_FILE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "util/error.h"

struct mapped_file {
	const uint8_t *data;
	size_t size;
};

/* Maps `path` read-only. `what` names the file in messages ("kernel").
 * Returns 0, or -errno with a message naming the file and the problem
 * (missing, unreadable, a directory, empty). */
int file_map(const char *path, const char *what, struct mapped_file *f, struct error *err);

/* Unmaps a file mapped by file_map. */
void file_unmap(struct mapped_file *f);

/* Writes n bytes of p at offset off of fd, leaving out every whole 4 KiB page of zeroes (a
 * hole there reads as zeroes: the caller sizes the file with ftruncate). Returns 0 or -errno. */
int file_write_sparse(int fd, const uint8_t *p, uint64_t n, uint64_t off);

/* Whether an executable `prog` is in a directory of $PATH (an empty entry is "."). */
bool file_on_path(const char *prog);

#endif
