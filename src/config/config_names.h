/* Config names: the spellings of the enumerated values of msivm's own and the transport's options, "did you mean". (A device type's own spellings are its module's.) */
#ifndef MSIVM_CONFIG_CONFIG_NAMES_H
#define MSIVM_CONFIG_CONFIG_NAMES_H

#include <stddef.h>
#include <stdint.h>

/* The enumerations an option can name; their spellings are listed in enum order. */
enum config_enum {
	CONFIG_E_IRQ,       /* enum irq_mode: msix, msix-shared, msi, intx */
	CONFIG_E_IRQPATH,   /* enum irq_path: irqfd, signal-msi */
	CONFIG_E_SECCOMP,   /* enum seccomp_mode: on, log, off */
	CONFIG_E_LOG_LEVEL, /* enum log_level: error, warn, info, debug */
};

/* The spelling of `value` of enumeration `which`, or NULL (no spelling: a default such as
 * the automatic disk engine, or out of range). */
const char *config_enum_name(enum config_enum which, unsigned value);

/* Writes "; did you mean NAME?" into buf when one spelling of `which` is close to `word`,
 * else "". Returns buf. */
const char *config_enum_hint(enum config_enum which, const char *word, char *buf, size_t n);

/* Writes "; did you mean PREFIXNAME?" (prefix such as "--") when one of names[0..count) (NULL entries skipped)
 * is close to word, else "". Returns buf. */
const char *config_hint(const char *word, const char *const *names, size_t count,
			const char *prefix, char *buf, size_t n);

#endif
