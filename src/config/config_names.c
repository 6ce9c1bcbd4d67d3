/* Config names: enumerated option values in enum order, suggestions. */
#include "config/config_names.h"

#include <stdio.h>

#include "util/suggest.h"

#define MAX_NAMES 4

/* Indexed by the enumeration's values; the modules' parse functions accept each spelling
 * (test_config checks that they agree). */
static const char *const enum_names[][MAX_NAMES] = {
	[CONFIG_E_IRQ] = { "msix", "msix-shared", "msi", "intx" },
	[CONFIG_E_IRQPATH] = { "irqfd", "signal-msi" },
	[CONFIG_E_SECCOMP] = { "on", "log", "off" },
	[CONFIG_E_LOG_LEVEL] = { "error", "warn", "info", "debug" },
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
	return suggest_hint(word, names, count, prefix, buf, n);
}

const char *config_enum_hint(enum config_enum which, const char *word, char *buf, size_t n)
{
	return config_hint(word, enum_names[which], MAX_NAMES, "", buf, n);
}
