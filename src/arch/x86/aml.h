/* AML encoder: the few ACPI Machine Language constructs msivm's DSDT uses, written into a byte buffer. */
#ifndef MSIVM_ARCH_X86_AML_H
#define MSIVM_ARCH_X86_AML_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* An output buffer. Writes past `cap` set `overflow` and are dropped, so a
 * caller checks once at the end. */
struct aml {
	uint8_t *buf;
	size_t len;
	size_t cap;
	bool overflow;
};

#define AML_SCOPE_OP    0x10
#define AML_NAME_OP     0x08
#define AML_BUFFER_OP   0x11
#define AML_PACKAGE_OP  0x12
#define AML_EXT_PREFIX  0x5b
#define AML_DEVICE_OP   0x82   /* after AML_EXT_PREFIX */
#define AML_METHOD_OP   0x14
#define AML_NOTIFY_OP   0x86

void aml_init(struct aml *a, uint8_t *buf, size_t cap);
void aml_bytes(struct aml *a, const void *p, size_t n);
void aml_byte(struct aml *a, uint8_t b);

/* An integer in its shortest encoding (ZeroOp, OneOp, Byte/Word/DWord/QWord). */
void aml_int(struct aml *a, uint64_t v);

/* A NameString: "\\XXXX" (from the root) or "XXXX" (relative); each segment
 * exactly four characters. */
void aml_name(struct aml *a, const char *name);

/* Opens a construct with a PkgLength after `op` (prefixed by ExtOpPrefix
 * when `ext`); returns the mark for aml_close, which encodes the length of
 * everything written in between. Nests. */
size_t aml_open(struct aml *a, bool ext, uint8_t op);
void aml_close(struct aml *a, size_t mark);

/* Name(NAME, integer) */
void aml_name_int(struct aml *a, const char *name, uint64_t v);

/* Name(NAME, "text"): a String object (e.g. a _HID that is no EISA ID). */
void aml_name_string(struct aml *a, const char *name, const char *text);

/* Name(NAME, Buffer() { bytes }): a ResourceTemplate is such a buffer. */
void aml_name_buffer(struct aml *a, const char *name, const uint8_t *bytes, size_t n);

/* The 32-bit EISA ID integer for a 7-character ID such as "PNP0A08". */
uint32_t aml_eisa_id(const char *id);

#endif
