/* Unit tests for the lab's child runs: a VMM that a Ctrl-C reached first (it died of SIGINT, or exited 130) stops the lab as the user's interrupt. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <signal.h>
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

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_child_killed_by_sigint_is_an_interrupt),
		cmocka_unit_test(test_child_exit_130_is_an_interrupt),
		cmocka_unit_test(test_other_ends_are_no_interrupt),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
