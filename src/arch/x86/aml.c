/* AML encoder: names, integers, packages and PkgLength fields -> DSDT bytes. */
#include "arch/x86/aml.h"

#include <string.h>

#define AML_ZERO        0x00
#define AML_ONE         0x01
#define AML_BYTE_PREFIX 0x0a
#define AML_WORD_PREFIX 0x0b
#define AML_DWORD_PREFIX 0x0c
#define AML_QWORD_PREFIX 0x0e
#define AML_ROOT_CHAR   0x5c
#define AML_STRING_PREFIX 0x0d
#define PKGLEN_RESERVE  4

void aml_init(struct aml *a, uint8_t *buf, size_t cap)
{
	*a = (struct aml){ .buf = buf, .cap = cap };
}

void aml_bytes(struct aml *a, const void *p, size_t n)
{
	if (a->overflow || n > a->cap - a->len) {
		a->overflow = true;
		return;
	}
	memcpy(a->buf + a->len, p, n);
	a->len += n;
}

void aml_byte(struct aml *a, uint8_t b)
{
	aml_bytes(a, &b, 1);
}

static void aml_le(struct aml *a, uint8_t prefix, uint64_t v, unsigned n)
{
	aml_byte(a, prefix);
	for (unsigned i = 0; i < n; i++)
		aml_byte(a, (uint8_t)(v >> (8 * i)));
}

void aml_int(struct aml *a, uint64_t v)
{
	if (v == 0)
		aml_byte(a, AML_ZERO);
	else if (v == 1)
		aml_byte(a, AML_ONE);
	else if (v <= 0xff)
		aml_le(a, AML_BYTE_PREFIX, v, 1);
	else if (v <= 0xffff)
		aml_le(a, AML_WORD_PREFIX, v, 2);
	else if (v <= 0xffffffffULL)
		aml_le(a, AML_DWORD_PREFIX, v, 4);
	else
		aml_le(a, AML_QWORD_PREFIX, v, 8);
}

void aml_name(struct aml *a, const char *name)
{
	if (name[0] == '\\') {
		aml_byte(a, AML_ROOT_CHAR);
		name++;
	}
	aml_bytes(a, name, 4);
}

size_t aml_open(struct aml *a, bool ext, uint8_t op)
{
	if (ext)
		aml_byte(a, AML_EXT_PREFIX);
	aml_byte(a, op);
	size_t mark = a->len;
	static const uint8_t room[PKGLEN_RESERVE];
	aml_bytes(a, room, sizeof(room));
	return mark;
}

/* PkgLength counts itself: one byte holds up to 63; otherwise the low
 * nibble goes in byte 0 (with the count of following bytes in bits 6-7)
 * and the rest in 1-3 following bytes. */
void aml_close(struct aml *a, size_t mark)
{
	if (a->overflow)
		return;
	size_t body = a->len - mark - PKGLEN_RESERVE;
	unsigned n;
	size_t total;
	if (body + 1 <= 0x3f)
		n = 1;
	else if (body + 2 < (1u << 12))
		n = 2;
	else if (body + 3 < (1u << 20))
		n = 3;
	else
		n = 4;
	total = body + n;
	uint8_t *p = a->buf + mark;
	memmove(p + n, p + PKGLEN_RESERVE, body);
	if (n == 1) {
		p[0] = (uint8_t)total;
	} else {
		p[0] = (uint8_t)(((n - 1) << 6) | (total & 0xf));
		for (unsigned i = 1; i < n; i++)
			p[i] = (uint8_t)(total >> (4 + 8 * (i - 1)));
	}
	a->len -= PKGLEN_RESERVE - n;
}

void aml_name_int(struct aml *a, const char *name, uint64_t v)
{
	aml_byte(a, AML_NAME_OP);
	aml_name(a, name);
	aml_int(a, v);
}

void aml_name_string(struct aml *a, const char *name, const char *text)
{
	aml_byte(a, AML_NAME_OP);
	aml_name(a, name);
	aml_byte(a, AML_STRING_PREFIX);
	aml_bytes(a, text, strlen(text) + 1);
}

void aml_name_buffer(struct aml *a, const char *name, const uint8_t *bytes, size_t n)
{
	aml_byte(a, AML_NAME_OP);
	aml_name(a, name);
	size_t m = aml_open(a, false, AML_BUFFER_OP);
	aml_int(a, n);
	aml_bytes(a, bytes, n);
	aml_close(a, m);
}

/* Three letters in 5 bits each ('A' = 1) and four hex digits, stored big-endian. */
uint32_t aml_eisa_id(const char *id)
{
	uint32_t v = ((uint32_t)(id[0] - 0x40) << 26) | ((uint32_t)(id[1] - 0x40) << 21) |
		     ((uint32_t)(id[2] - 0x40) << 16);
	for (int i = 3; i < 7; i++) {
		char c = id[i];
		uint32_t d = c >= '0' && c <= '9' ? (uint32_t)(c - '0') : (uint32_t)((c | 0x20) - 'a' + 10);
		v |= d << (4 * (6 - i));
	}
	return __builtin_bswap32(v);
}
