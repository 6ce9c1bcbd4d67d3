/* CTR_DRBG (NIST SP 800-90A, AES-256, no derivation function) on nettle's AES: the generator behind virtio-rng's source=drbg. */
#ifndef MSIVM_UTIL_CTR_DRBG_H
#define MSIVM_UTIL_CTR_DRBG_H

#include <stddef.h>
#include <stdint.h>

#include <nettle/aes.h>

#define CTR_DRBG_SEED_BYTES  48            /* seedlen: the key (32) and V (16) */
#define CTR_DRBG_MAX_REQUEST (64u * 1024)  /* 2^19 bits per generate call (SP 800-90A, table 3) */

/* The working state (Key, V). Nettle's 3.9 drbg_ctr_aes256 is the same mechanism; Debian 12's
 * 3.8 lacks it. */
struct ctr_drbg {
	struct aes256_ctx key;
	uint8_t v[16];
};

/* Instantiate: Key and V zero, then Update(seed), `seed` being CTR_DRBG_SEED_BYTES of full
 * entropy (getrandom). */
void ctr_drbg_instantiate(struct ctr_drbg *d, const uint8_t seed[CTR_DRBG_SEED_BYTES]);

/* Reseed: Update(entropy), CTR_DRBG_SEED_BYTES of fresh entropy, no additional input. */
void ctr_drbg_reseed(struct ctr_drbg *d, const uint8_t entropy[CTR_DRBG_SEED_BYTES]);

/* Generate: `n` bytes (at most CTR_DRBG_MAX_REQUEST; more is cut to that) into out, then the
 * Update that gives backtracking resistance. Returns how many were written. */
size_t ctr_drbg_generate(struct ctr_drbg *d, uint8_t *out, size_t n);

/* Wipes the state. */
void ctr_drbg_wipe(struct ctr_drbg *d);

#endif
