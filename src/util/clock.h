/* Clock: the monotonic time in nanoseconds, for windows, deadlines and rate limits. */
#ifndef MSIVM_UTIL_CLOCK_H
#define MSIVM_UTIL_CLOCK_H

#include <stdint.h>
#include <time.h>

/* CLOCK_MONOTONIC in nanoseconds (a vDSO read: no syscall). */
static inline uint64_t clock_now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

#endif
