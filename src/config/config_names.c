/* Config names: enumerated option values in enum order, suggestions, byte counts as text. */
#include "config/config_names.h"

#include <stdio.h>

#include "util/suggest.h"

#define MAX_NAMES 4

/* Indexed by the enumeration's values; the modules' parse functions accept each spelling
 * (test_config checks that they agree). */
static const char *const enum_names[][MAX_NAMES] = {
	[CONFIG_E_IRQ] = { "msix", "msix-shared", "msi", "intx" },
	[CONFIG_E_IRQPATH] = { "irqfd", "signal-msi" },
	[CONFIG_E_ENGINE] = { NULL, "uring", "sync" },
	[CONFIG_E_BACKEND] = { "tap", "peer", "socket", "vhost" },
	[CONFIG_E_PEER] = { "responder", "sink", "source" },
	[CONFIG_E_SECCOMP] = { "on", "log", "off" },
	[CONFIG_E_LOG_LEVEL] = { "error", "warn", "info", "debug" },
	[CONFIG_E_RNG_SOURCE] = { "drbg", "getrandom" },
};

const char *config_enum_name(enum config_enum which, unsigned value)
{
	if ((size_t)which >= sizeof(enum_names) / sizeof(enum_names[0]) || value >= MAX_NAMES)
		return NULL;
	return enum_names[which][value];
}

const char *config_hint(const char *word, const char *const *names, size_t count,
			const char *prefix, char *buf, size_t n)
{
	const char *best = suggest_nearest(word, names, count);
	if (best)
		snprintf(buf, n, "; did you mean %s%s?", prefix, best);
	else if (n)
		buf[0] = 0;
	return buf;
}

const char *config_enum_hint(enum config_enum which, const char *word, char *buf, size_t n)
{
	return config_hint(word, enum_names[which], MAX_NAMES, "", buf, n);
}

const char *config_size_text(uint64_t v, char buf[CONFIG_SIZE_TEXT])
{
	static const char suffix[] = "KMGT";
	int shift = -1;
	for (int i = 3; i >= 0 && v; i--) {
		if (!(v & ((1ULL << (10 * (i + 1))) - 1))) {
			shift = i;
			break;
		}
	}
	if (shift < 0)
		snprintf(buf, CONFIG_SIZE_TEXT, "%llu", (unsigned long long)v);
	else
		snprintf(buf, CONFIG_SIZE_TEXT, "%llu%c", (unsigned long long)(v >> (10 * (shift + 1))),
			 suffix[shift]);
	return buf;
}
