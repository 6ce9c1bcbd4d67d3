/* Fuzz target: the option-value parsers (sizes, bounded integers, irq/engine/backend names, --cpuid-hide, --cpu-pin). */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "arch/x86/cpuid.h"
#include "backends/blk_backend.h"
#include "backends/net_backend.h"
#include "fuzz_common.h"
#include "irq/irq_vec.h"
#include "util/parse.h"
#include "virtio/virtio_pci.h"
#include "vmm/cpu_policy.h"

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	fz_quiet();
	return 0;
}

static bool all_digits(const char *s)
{
	for (; *s; s++)
		if (*s < '0' || *s > '9')
			return false;
	return true;
}

/* Input: u8 parser, u64 min, u64 max (parse_uint only), then the string
 * (up to its first NUL), copied to an exact-size buffer. */
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct fz_in in = { data, size };
	uint8_t which = fz_u8(&in);
	uint64_t min = fz_u64(&in), max = fz_u64(&in);
	size_t n;
	char *s = fz_str(&in, &n);
	uint64_t v = 0;
	struct error err;
	switch (which % 9) {
	case 0:
		if (parse_size(s, &v) == 0)
			FZ_CHECK(s[0] >= '0' && s[0] <= '9');
		break;
	case 1:
		if (parse_uint(s, min, max, &v) == 0)
			FZ_CHECK(v >= min && v <= max && n > 0 && all_digits(s));
		break;
	case 2: {
		enum irq_mode m;
		if (irq_mode_parse(s, &m) == 0)
			FZ_CHECK(strcmp(irq_mode_name(m), s) == 0);
		break;
	}
	case 3: {
		enum irq_path p;
		(void)irq_path_parse(s, &p);
		break;
	}
	case 4: {
		enum blk_engine e;
		(void)blk_engine_parse(s, &e);
		break;
	}
	case 5: {
		enum net_be_kind k;
		(void)net_be_kind_parse(s, &k);
		break;
	}
	case 6: {
		enum net_peer_mode m;
		(void)net_peer_mode_parse(s, &m);
		break;
	}
	case 7: {
		cpuid_hide_t hide;
		(void)cpuid_hide_parse(s, &hide, &err);
		break;
	}
	default: {
		struct cpu_policy *p = malloc(sizeof(*p));
		if (!p)
			abort();
		cpu_policy_init(p);
		if (cpu_policy_parse_pins(p, s, (uint32_t)(min % (CPU_POLICY_MAX_VCPUS + 1u)), &err) == 0)
			(void)cpu_policy_check(p, (uint32_t)(min % (CPU_POLICY_MAX_VCPUS + 1u)), &err);
		free(p);
		break;
	}
	}
	free(s);
	return 0;
}
