/* Unit tests for the lab's child runs: a VMM that a Ctrl-C reached first (it died of SIGINT, or exited 130) stops the lab as the user's interrupt, in the probe runs and in the snapshot experiment. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <errno.h>
#include <stdbool.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <stdlib.h>
#include <sys/signalfd.h>
#include <unistd.h>

#include "lab/lab.h"
#include "lab/lab_spawn.h"

/* A signalfd for SIGUSR1 alone (nothing the tests send): the lab's own Ctrl-C never arrives. */
static int quiet_sigfd(void)
{
	sigset_t s;
	sigemptyset(&s);
	sigaddset(&s, SIGUSR1);
	sigprocmask(SIG_BLOCK, &s, NULL);
	return signalfd(-1, &s, SFD_CLOEXEC | SFD_NONBLOCK);
}

/* Runs `sh -c script` as the lab runs a VMM; returns ch.signo, and the status in *status. */
static int spawn_sh(const char *script, int *status)
{
	char *argv[] = { "sh", "-c", (char *)script, NULL };
	struct lab_child ch = { .timeout_ns = 10000000000ULL };
	struct lab_run run = { 0 };
	struct rusage ru;
	int sigfd = quiet_sigfd();
	assert_true(sigfd >= 0);
	assert_int_equal(lab_spawn(argv, sigfd, &ch, &run, &ru), 0);
	close(sigfd);
	*status = run.status;
	free(run.console);
	free(run.errout);
	return ch.signo;
}

static void test_child_killed_by_sigint_is_an_interrupt(void **state)
{
	(void)state;
	int status;
	assert_int_equal(spawn_sh("kill -INT $$; sleep 5", &status), SIGINT);
	assert_int_equal(status, 130);
}

static void test_child_exit_130_is_an_interrupt(void **state)
{
	(void)state;
	int status;
	assert_int_equal(spawn_sh("exit 130", &status), SIGINT);
	assert_int_equal(status, 130);
}

static void test_other_ends_are_no_interrupt(void **state)
{
	(void)state;
	int status;
	assert_int_equal(spawn_sh("exit 1", &status), 0);
	assert_int_equal(status, 1);
	assert_int_equal(spawn_sh("kill -TERM $$; sleep 5", &status), 0);
	assert_int_equal(status, 128 + SIGTERM);
}

/* Runs the snapshot experiment (msivm side) with a fake msivm, `sh` running script; returns
 * lab_snapshot_run's result, *signo and whether the run was marked failed. */
static int snapshot_sh(const char *script, int *signo, bool *failed)
{
	char path[] = "/tmp/msivm-test-fake-msivm-XXXXXX";
	int fd = mkstemp(path);
	assert_true(fd >= 0);
	assert_true(dprintf(fd, "#!/bin/sh\n%s\n", script) > 0);
	close(fd);
	assert_int_equal(chmod(path, 0700), 0);
	const struct lab_experiment *exp = NULL;
	for (unsigned i = 0; i < lab_nexperiments; i++)
		if (lab_experiments[i].run == lab_snapshot_run)
			exp = &lab_experiments[i];
	assert_non_null(exp);
	struct lab_options o = { .msivm = path, .probe = "/nonexistent/probe.elf", .sigfd = quiet_sigfd() };
	assert_true(o.sigfd >= 0);
	struct lab_run run;
	*signo = 0;
	int ret = lab_snapshot_run(&o, exp, LAB_MSIVM, 0, &run, signo);
	*failed = ret == 0 && run.failed;
	if (ret == 0)
		lab_run_free(&run);
	close(o.sigfd);
	unlink(path);
	return ret;
}

/* The snapshot experiment talks to its VMMs on pipes (lab_tty), not through lab_spawn: a Ctrl-C
 * that reached its msivm first must stop the lab all the same, not count as a failed run. */
static void test_snapshot_child_interrupted_stops_the_lab(void **state)
{
	(void)state;
	int signo;
	bool failed;
	assert_int_equal(snapshot_sh("exit 130", &signo, &failed), -EINTR);
	assert_int_equal(signo, SIGINT);
	assert_int_equal(snapshot_sh("kill -INT $$; sleep 5", &signo, &failed), -EINTR);
	assert_int_equal(signo, SIGINT);
}

/* A VMM that failed otherwise is a failed run; one that failed while a signal came for the lab
 * (QEMU exits 0 on SIGINT) stops the lab with that signal. */
static void test_snapshot_child_failed_is_a_failed_run(void **state)
{
	(void)state;
	int signo;
	bool failed;
	assert_int_equal(snapshot_sh("exit 1", &signo, &failed), 0);
	assert_true(failed);
	assert_int_equal(signo, 0);
	assert_int_equal(snapshot_sh("kill -USR1 $PPID; exit 0", &signo, &failed), -EINTR);
	assert_int_equal(signo, SIGUSR1);
}

int main(void)
{
	/* The children inherit SIGINT's disposition: run in the background (`make check &`, nohup)
	 * it is ignored, and `kill -INT $$` would do nothing; the VMMs the lab runs set their own. */
	signal(SIGINT, SIG_DFL);
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_child_killed_by_sigint_is_an_interrupt),
		cmocka_unit_test(test_child_exit_130_is_an_interrupt),
		cmocka_unit_test(test_other_ends_are_no_interrupt),
		cmocka_unit_test(test_snapshot_child_interrupted_stops_the_lab),
		cmocka_unit_test(test_snapshot_child_failed_is_a_failed_run),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
