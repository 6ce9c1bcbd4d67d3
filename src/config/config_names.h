/* Config names: the spellings of enumerated option values, "did you mean", sizes as text. */
#ifndef MSIVM_CONFIG_CONFIG_NAMES_H
#define MSIVM_CONFIG_CONFIG_NAMES_H

#include <stddef.h>
#include <stdint.h>

/* The enumerations an option can name; their spellings are listed in enum order. */
enum config_enum {
	CONFIG_E_IRQ,       /* enum irq_mode: msix, msix-shared, msi, intx */
	CONFIG_E_IRQPATH,   /* enum irq_path: irqfd, signal-msi */
	CONFIG_E_ENGINE,    /* enum blk_engine: (auto), uring, sync */
	CONFIG_E_BACKEND,   /* enum net_be_kind: tap, peer, socket */
	CONFIG_E_PEER,      /* enum net_peer_mode: responder, sink, source */
	CONFIG_E_SECCOMP,   /* enum seccomp_mode: on, log, off */
	CONFIG_E_LOG_LEVEL, /* enum log_level: error, warn, info, debug */
	CONFIG_E_RNG_SOURCE, /* enum virtio_rng_source: drbg, getrandom */
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

#define CONFIG_SIZE_TEXT 24

/* Formats a byte count with the largest binary suffix that divides it ("256M", "1G",
 * "4100K", "1000"); parse_size reads it back. Returns buf. */
const char *config_size_text(uint64_t v, char buf[CONFIG_SIZE_TEXT]);

#endif
