/* Files: map a user-supplied image read-only with clear errors; find a program on $PATH. */
#include "util/file.h"

#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/mman.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

int file_map(const char *path, const char *what, struct mapped_file *f, struct error *err)
{
	f->data = NULL;
	f->size = 0;
	/* O_NONBLOCK: a FIFO must not block open() (it is refused below). */
	int fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
	if (fd < 0)
		return error_set(err, -errno, "cannot open %s '%s': %s", what, path, strerror(errno));
	struct stat st;
	int ret = 0;
	if (fstat(fd, &st)) {
		ret = error_set(err, -errno, "cannot stat %s '%s': %s", what, path, strerror(errno));
	} else if (!S_ISREG(st.st_mode)) {
		ret = error_set(err, -EINVAL, "%s '%s' is not a regular file", what, path);
	} else if (st.st_size == 0) {
		ret = error_set(err, -ENOEXEC, "%s '%s' is empty", what, path);
	} else {
		void *p = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
		if (p == MAP_FAILED) {
			ret = error_set(err, -errno, "cannot map %s '%s': %s", what, path,
					strerror(errno));
		} else {
			f->data = p;
			f->size = (size_t)st.st_size;
		}
	}
	close(fd);
	return ret;
}

void file_unmap(struct mapped_file *f)
{
	if (f->data)
		munmap((void *)f->data, f->size);
	f->data = NULL;
	f->size = 0;
}

bool file_on_path(const char *prog)
{
	const char *path = getenv("PATH");
	char dir[4096];
	while (path && *path) {
		size_t n = strcspn(path, ":");
		snprintf(dir, sizeof(dir), "%.*s/%s", (int)(n ? n : 1), n ? path : ".", prog);
		if (!access(dir, X_OK))
			return true;
		path += n + (path[n] == ':');
	}
	return false;
}

static bool page_is_zero(const uint8_t *p, size_t n)
{
	for (size_t i = 0; i < n; i += 8) {
		uint64_t v;
		memcpy(&v, p + i, 8);
		if (v)
			return false;
	}
	return true;
}

int file_write_sparse(int fd, const uint8_t *p, uint64_t n, uint64_t off)
{
	const uint64_t page = 4096;
	for (uint64_t i = 0; i < n; i += page) {
		size_t len = n - i < page ? (size_t)(n - i) : (size_t)page;
		if (len == page && page_is_zero(p + i, len))
			continue;
		if (pwrite(fd, p + i, len, (off_t)(off + i)) != (ssize_t)len)
			return errno ? -errno : -EIO;
	}
	return 0;
}
