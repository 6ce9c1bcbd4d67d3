/* Device options: refusals and the value checks every device type's keys share. */
#include "devices/device_opts.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "util/parse.h"
#include "util/suggest.h"

int device_opt_refuse(struct device_opts *o, enum device_msg how, struct error *e,
		      const char *fmt, ...)
{
	char msg[ERROR_MSG_MAX];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	o->msg = how;
	return error_set(e, -EINVAL, "%s", msg);
}

int device_opt_uint(struct device_opts *o, const struct device_key *k, const char *val,
		    uint64_t min, uint64_t max, const char *range, uint64_t *out, struct error *e)
{
	if (parse_uint(val, min, max, out))
		return device_opt_refuse(o, DEVICE_MSG_KEY, e, "bad %s '%.100s': use %s", k->name, val,
					 range);
	return 0;
}

int device_opt_word(struct device_opts *o, const char *what, const char *val,
		    const char *const *names, size_t n, const char *use, unsigned *out,
		    struct error *e)
{
	if (!parse_word(val, names, n, out))
		return 0;
	char hint[64];
	return device_opt_refuse(o, DEVICE_MSG_KEY, e, "bad %s '%.100s': use %s%s", what, val, use,
				 suggest_hint(val, names, n, "", hint, sizeof(hint)));
}

int device_opt_flag(struct device_opts *o, const struct device_key *k, const char *val,
		    bool *out, struct error *e)
{
	if (!val || !strcmp(val, "on"))
		*out = true;
	else if (!strcmp(val, "off"))
		*out = false;
	else
		return device_opt_refuse(o, DEVICE_MSG_KEY, e, "bad %s '%.100s': use %s, %s=on or "
					 "%s=off", k->name, val, k->name, k->name, k->name);
	return 0;
}
