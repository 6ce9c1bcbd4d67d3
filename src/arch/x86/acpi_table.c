/* ACPI table headers: the common header every table starts with, and its checksum. */
#include "arch/x86/acpi.h"

#include <string.h>

uint8_t acpi_sum(const void *p, size_t len)
{
	const uint8_t *b = p;
	uint8_t s = 0;
	for (size_t i = 0; i < len; i++)
		s = (uint8_t)(s + b[i]);
	return s;
}

void acpi_header_init(struct acpi_header *h, const char sig[4], uint32_t length, uint8_t revision)
{
	memset(h, 0, sizeof(*h));
	memcpy(h->signature, sig, 4);
	h->length = length;
	h->revision = revision;
	memcpy(h->oem_id, ACPI_OEM_ID, 6);
	memcpy(h->oem_table_id, ACPI_OEM_TABLE_ID, 8);
	h->oem_revision = 1;
	memcpy(h->creator_id, ACPI_CREATOR_ID, 4);
	h->creator_revision = 1;
}

void acpi_finish(struct acpi_header *h)
{
	h->checksum = 0;
	h->checksum = (uint8_t)(0x100 - acpi_sum(h, h->length));
}
