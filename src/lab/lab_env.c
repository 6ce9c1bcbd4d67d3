/* The lab's surroundings, shared by the probe and Linux drivers: the output directory, scratch files, signals, time formatting. */
#include "lab/lab.h"

#include <dirent.h>
#include <libgen.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/signalfd.h>
#include <sys/stat.h>
#include <unistd.h>

static bool is_report_file(const char *name)
{
	size_t n = strlen(name);
	return !strcmp(name, "report.txt") || !strcmp(name, "report.json") || !strcmp(name, "report.html") ||
	       (n > 4 && !strcmp(name + n - 4, ".svg"));
}

int lab_prepare_out_dir(const char *out_dir, bool force)
{
	if (mkdir(out_dir, 0755) && errno != EEXIST) {
		fprintf(stderr, "msivm lab: cannot create '%s': %s\n", out_dir, strerror(errno));
		return -1;
	}
	DIR *d = opendir(out_dir);
	if (!d) {
		fprintf(stderr, "msivm lab: cannot open '%s': %s\n", out_dir, strerror(errno));
		return -1;
	}
	unsigned found = 0, removed = 0;
	char first[256] = "";
	struct dirent *de;
	while ((de = readdir(d))) {
		struct stat st;
		if (!is_report_file(de->d_name) ||
		    fstatat(dirfd(d), de->d_name, &st, AT_SYMLINK_NOFOLLOW) ||
		    !(S_ISREG(st.st_mode) || S_ISLNK(st.st_mode)))
			continue;
		if (!found++)
			snprintf(first, sizeof(first), "%s", de->d_name);
		if (!force)
			continue;
		if (unlinkat(dirfd(d), de->d_name, 0)) {
			fprintf(stderr, "msivm lab: cannot remove '%s/%s': %s\n", out_dir, de->d_name,
				strerror(errno));
			closedir(d);
			return -1;
		}
		removed++;
	}
	closedir(d);
	if (found && !force) {
		fprintf(stderr,
			"msivm lab: '%s' holds an earlier report (%s%s); choose another --out, or --force "
			"to remove its report files (report.txt, report.json, report.html, *.svg)\n",
			out_dir, first, found > 1 ? " and more" : "");
		return -1;
	}
	if (removed)
		fprintf(stderr, "msivm lab: removed %u files of an earlier report from '%s'\n", removed,
			out_dir);
	if (access(out_dir, W_OK | X_OK)) {
		fprintf(stderr, "msivm lab: cannot write to '%s': %s\n", out_dir, strerror(errno));
		return -1;
	}
	return 0;
}

int lab_make_scratch(char *path, size_t len, const char *what, const char *suffix)
{
	const char *tmp = getenv("TMPDIR");
	snprintf(path, len, "%s/msivm-lab-%s-XXXXXX%s", tmp && *tmp ? tmp : "/tmp", what, suffix);
	int fd = mkostemps(path, (int)strlen(suffix), O_CLOEXEC);
	if (fd < 0) {
		fprintf(stderr, "msivm lab: cannot create a scratch file '%s': %s\n", path, strerror(errno));
		path[0] = 0;
		return -1;
	}
	close(fd);
	return 0;
}

int lab_signals_setup(void)
{
	static const int sigs[] = { SIGINT, SIGTERM, SIGHUP };
	sigset_t set;
	sigemptyset(&set);
	for (unsigned i = 0; i < sizeof(sigs) / sizeof(sigs[0]); i++) {
		struct sigaction sa;
		if (!sigaction(sigs[i], NULL, &sa) && sa.sa_handler != SIG_IGN)
			sigaddset(&set, sigs[i]);
	}
	sigprocmask(SIG_BLOCK, &set, NULL);
	return signalfd(-1, &set, SFD_CLOEXEC | SFD_NONBLOCK);
}

int lab_pending_signal(int sigfd)
{
	struct signalfd_siginfo si;
	if (sigfd >= 0 && read(sigfd, &si, sizeof(si)) == (ssize_t)sizeof(si))
		return (int)si.ssi_signo;
	return 0;
}

void lab_fmt_secs(char *buf, size_t len, double secs)
{
	unsigned s = secs > 0 ? (unsigned)(secs + 0.5) : 0;
	if (s >= 3600)
		snprintf(buf, len, "%u:%02u:%02u", s / 3600, s / 60 % 60, s % 60);
	else
		snprintf(buf, len, "%u:%02u", s / 60, s % 60);
}

int lab_vmm_path(char *buf, size_t len)
{
	char self[4096];
	ssize_t n = readlink("/proc/self/exe", self, sizeof(self) - 1);
	if (n <= 0) {
		fprintf(stderr, "msivm lab: cannot find its own binary\n");
		return -1;
	}
	self[n] = 0;
	if ((size_t)snprintf(buf, len, "%s/msivm", dirname(self)) >= len) {
		fprintf(stderr, "msivm lab: the path of its own binary is too long\n");
		return -1;
	}
	return 0;
}
