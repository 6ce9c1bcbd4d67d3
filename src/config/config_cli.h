/* Config command line: `msivm run`'s arguments (and the --config file they name) into a run_config. */
#ifndef MSIVM_CONFIG_CONFIG_CLI_H
#define MSIVM_CONFIG_CONFIG_CLI_H

#include <getopt.h>
#include <stdbool.h>
#include <stdio.h>

#include "config/run_config.h"

/* What the command line asks for. */
enum config_action {
	CONFIG_RUN,    /* build and run the VM */
	CONFIG_HELP,   /* --help: print config_usage_print() */
	CONFIG_PRINT,  /* --print-config: print the configuration, run nothing */
};

/* Reads `msivm run`'s arguments (argv[0] is "run") into c, which run_config_init prepared:
 * the file of --config first, then every other option in the order given, each replacing
 * the setting of the file (devices are added to the file's). Unless --help is asked for,
 * ends with run_config_finish. Returns 0 and *action, or -errno with a message (an
 * unknown option names the nearest known one when one is close). */
int config_cli_parse(int argc, char **argv, struct run_config *c, enum config_action *action,
		     struct error *e);

/* The long options of `msivm run` (ends with a zeroed entry). */
const struct option *config_cli_options(void);

/* True for the options that are no key of a config file: config, print-config, help,
 * verbose, quiet (log-level in a file) and memory (mem in a file, where "memory" is also
 * taken, as --memory's value). */
bool config_cli_only(const char *name);

/* --memory's value ([size=]SIZE[,file=PATH,shared]; also a config file's "memory") into `c`.
 * Returns 0 or -EINVAL with a message. */
int config_memory_set(struct run_config *c, const char *arg, struct error *e);

/* The text of `msivm --help`. */
void config_usage_print(FILE *out);

#endif
