/* CTR_DRBG (NIST SP 800-90A section 10.2.1, AES-256, no derivation function), built on nettle's AES-256. */
#include "util/ctr_drbg.h"

#include <endian.h>
#include <string.h>

/* V = (V + 1) mod 2^128, V big-endian. */
static void increment(uint8_t v[16])
{
	for (int i = 15; i >= 0 && ++v[i] == 0; i--)
		;
}

/* CTR_DRBG_Update: three blocks of E(Key, V+i) XOR provided data become the new Key and V. */
static void update(struct ctr_drbg *d, const uint8_t provided[CTR_DRBG_SEED_BYTES])
{
	uint8_t temp[CTR_DRBG_SEED_BYTES];
	for (int i = 0; i < 3; i++) {
		increment(d->v);
		memcpy(temp + 16 * i, d->v, 16);
	}
	aes256_encrypt(&d->key, sizeof(temp), temp, temp);
	for (int i = 0; i < CTR_DRBG_SEED_BYTES; i++)
		temp[i] ^= provided ? provided[i] : 0;
	aes256_set_encrypt_key(&d->key, temp);
	memcpy(d->v, temp + AES256_KEY_SIZE, 16);
	explicit_bzero(temp, sizeof(temp));
}

void ctr_drbg_instantiate(struct ctr_drbg *d, const uint8_t seed[CTR_DRBG_SEED_BYTES])
{
	static const uint8_t zero_key[AES256_KEY_SIZE];
	aes256_set_encrypt_key(&d->key, zero_key);
	memset(d->v, 0, sizeof(d->v));
	update(d, seed);
}

void ctr_drbg_reseed(struct ctr_drbg *d, const uint8_t entropy[CTR_DRBG_SEED_BYTES])
{
	update(d, entropy);
}

size_t ctr_drbg_generate(struct ctr_drbg *d, uint8_t *out, size_t n)
{
	if (n > CTR_DRBG_MAX_REQUEST)
		n = CTR_DRBG_MAX_REQUEST;
	/* The counter blocks V+1, V+2, ... are written in place and encrypted in one call, so
	 * nettle can pipeline the blocks (AES-NI). */
	size_t full = n / 16;
	uint64_t be[2];
	memcpy(be, d->v, 16);
	uint64_t hi = be64toh(be[0]), lo = be64toh(be[1]);
	for (size_t i = 0; i < full; i++) {
		hi += ++lo == 0;
		be[0] = htobe64(hi);
		be[1] = htobe64(lo);
		memcpy(out + 16 * i, be, 16);
	}
	be[0] = htobe64(hi);
	be[1] = htobe64(lo);
	memcpy(d->v, be, 16);
	if (full)
		aes256_encrypt(&d->key, 16 * full, out, out);
	if (n % 16) {
		uint8_t last[16];
		increment(d->v);
		aes256_encrypt(&d->key, 16, last, d->v);
		memcpy(out + 16 * full, last, n % 16);
		explicit_bzero(last, sizeof(last));
	}
	update(d, NULL);
	return n;
}

void ctr_drbg_wipe(struct ctr_drbg *d)
{
	explicit_bzero(d, sizeof(*d));
}
