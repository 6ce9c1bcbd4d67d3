/* Lab on a host with no usable KVM: the same lab command again, inside a nested host (scripts/nested/run.sh). */
#include "lab/lab.h"

#include <errno.h>
#include <libgen.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* Set inside a nested host (by scripts/nested/run.sh and tests/linux/l1-init): the outer host's KVM. */
#define NESTED_ENV "MSIVM_NESTED"

/* `rel` next to the source tree msivm was built in (msivm in build/), or "" if it is not there. */
static void tree_path(const char *self, const char *rel, char *buf, size_t len)
{
	char tmp[4096];
	snprintf(tmp, sizeof(tmp), "%s", self);
	snprintf(buf, len, "%s/../%s", dirname(tmp), rel);
	if (access(buf, X_OK))
		buf[0] = 0;
}

int lab_nested_exec(const char *self, int argc, char **argv, const struct kvm_host *h, bool linux_guest,
		    const char *out_dir)
{
	char runner[4096];
	if (getenv(NESTED_ENV)) {
		fprintf(stderr, "msivm lab: no usable KVM inside the nested host either (%s)\n", h->why);
		return EXIT_USAGE;
	}
	tree_path(self, linux_guest ? "scripts/lab-linux.sh" : "scripts/nested/run.sh", runner,
		  sizeof(runner));
	if (!*runner) {
		fprintf(stderr, "msivm lab: no usable KVM here (%s), and the nested host that would run the "
				"lab needs msivm's source tree (%s not found next to %s)\n",
			h->why, linux_guest ? "scripts/lab-linux.sh" : "scripts/nested/run.sh", self);
		return EXIT_USAGE;
	}
	printf("msivm lab: %s; the lab runs inside a nested host (QEMU TCG emulating an AMD CPU, Linux "
	       "with kvm_amd): figures there are ~100x those of hardware, compare ratios only\n", h->why);
	fflush(stdout);
	char **args = calloc((size_t)argc + 10, sizeof(*args));
	if (!args)
		return EXIT_USAGE;
	int n = 0;
	args[n++] = runner;
	if (linux_guest) { /* scripts/lab-linux.sh takes the lab's options but --guest linux */
		for (int i = 1; i < argc; i++) {
			if (!strcmp(argv[i], "--guest") && i + 1 < argc)
				i++;
			else if (strcmp(argv[i], "--guest=linux"))
				args[n++] = argv[i];
		}
	} else { /* two vCPUs: the pinned and dedicated experiments need two CPUs */
		static char *pre[] = { "--smp", "2", "--name", "lab", "--retries", "2" };
		for (unsigned i = 0; i < sizeof(pre) / sizeof(pre[0]); i++)
			args[n++] = pre[i];
		/* the report directory, made here: the nested host's own /tmp would hide one below it */
		if (out_dir && (!mkdir(out_dir, 0755) || errno == EEXIST)) {
			args[n++] = "--keep";
			args[n++] = (char *)out_dir;
		}
		args[n++] = "--";
		args[n++] = (char *)self;
		for (int i = 0; i < argc; i++)
			args[n++] = argv[i];
	}
	args[n] = NULL;
	execv(runner, args);
	fprintf(stderr, "msivm lab: cannot run %s: %m\n", runner);
	free(args);
	return EXIT_USAGE;
}

void lab_kvm_mode(const struct kvm_host *h, char *word, size_t wlen, char *detail, size_t dlen)
{
	const char *outer = getenv(NESTED_ENV);
	if (outer) {
		snprintf(word, wlen, "nested");
		snprintf(detail, dlen, "nested: inside a QEMU TCG host with %s, on a host whose KVM is "
			 "\"%s\"; figures are ~100x those of hardware, compare ratios only",
			 *h->module ? h->module : "KVM", outer);
		return;
	}
	snprintf(word, wlen, "%s", kvm_host_kind_name(h->kind));
	snprintf(detail, dlen, "%s", h->why);
}
