/* Fuzz target: the run configuration from a JSON file or a device option string, and its round trip through --print-config. */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "config/config_json.h"
#include "config/config_print.h"
#include "fuzz_common.h"

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	fz_quiet();
	return 0;
}

/* Reads what --print-config wrote back and checks it prints the same bytes. */
static void check_round_trip(const char *printed)
{
	struct run_config *c = malloc(sizeof(*c));
	struct error err;
	if (!c)
		abort();
	run_config_init(c);
	FZ_CHECK(config_json_read(c, printed, strlen(printed), "printed", &err) == 0);
	FZ_CHECK(run_config_finish(c, &err) == 0);
	char *again = config_print(c, &err);
	FZ_CHECK(again && strcmp(again, printed) == 0);
	free(again);
	run_config_free(c);
	free(c);
}

/* Input: u8 what (0: the rest is a config file; 1-4: the rest, up to its first NUL, is the
 * option string of --rng, --disk, --console or --net on top of --kernel k). Oracle: whatever
 * is accepted prints as JSON that reads back to the same text. */
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const char *const devices[] = { "rng", "disk", "console", "net" };
	struct fz_in in = { data, size };
	uint8_t what = fz_u8(&in) % 5;
	struct run_config *c = malloc(sizeof(*c));
	struct error err;
	if (!c)
		abort();
	run_config_init(c);
	int ret;
	if (what == 0) {
		ret = config_json_read(c, (const char *)in.p, in.left, "fuzz.json", &err);
	} else {
		size_t n;
		char *s = fz_str(&in, &n);
		ret = config_set(c, config_key_find("kernel"), "k", &err);
		if (!ret)
			ret = config_set(c, config_key_find(devices[what - 1]), s, &err);
		free(s);
	}
	if (!ret)
		ret = run_config_finish(c, &err);
	char *printed = ret ? NULL : config_print(c, &err);
	run_config_free(c);
	free(c);
	if (printed)
		check_round_trip(printed);
	free(printed);
	return 0;
}
