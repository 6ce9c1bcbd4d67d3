/* run_config: everything `msivm run` takes, however it was given (command line, --config FILE). */
#ifndef MSIVM_CONFIG_RUN_CONFIG_H
#define MSIVM_CONFIG_RUN_CONFIG_H

#include <stdbool.h>
#include <stddef.h>

#include "util/error.h"
#include "util/log.h"
#include "vmm/jail.h"
#include "vmm/vm.h"

/* The strings are owned (malloc'd) by the config; NULL means the default. */
struct run_config {
	char *kernel;          /* --kernel (required) */
	char *initrd;          /* --initrd; NULL: none */
	char *cmdline;         /* --cmdline; NULL: empty */
	char *serial;          /* "file=FILE", "socket=PATH", "tty" or "off" (run_config_serial);
				* NULL: COM1 to standard output */
	char *kvm_device;      /* --kvm-device; NULL: /dev/kvm */
	char *cpu_pin;         /* --cpu-pin as given; applied to vm.cpu by run_config_finish */
	char *chroot;          /* --chroot DIR; NULL: none */
	char *stats_json;      /* --stats-json FILE ("-": standard output); NULL: none */
	char *log_file;        /* --log-file; NULL: standard error */
	char *api_socket;      /* --api-socket PATH; NULL: no API */
	char *dump_dir;        /* --dump-on-crash DIR; NULL: no crash dumps */
	char *restore_state;   /* --restore state=FILE; NULL: boot the kernel */
	char *restore_mem;     /* --restore mem=FILE; NULL: the snapshot's --mem-file */
	bool restore_copy;     /* --restore copy: RAM read in, not mapped from the file */
	char *restore_taps[VM_MAX_DEVICES]; /* --restore tap=NAME: the Nth tap NIC's tap */
	unsigned restore_ntaps;
	char *mem_file;        /* --mem-file PATH: guest RAM is this file, shared; NULL: anonymous */
	bool restore_paused;   /* --restore paused: the restored VM waits for the API's resume */
	struct json_t *restore_root; /* the state file read by --restore (config_restore_load) */
	bool stats;            /* --stats */
	bool no_reboot;        /* --no-reboot */
	enum log_level log_level; /* --log-level, -v, -q */
	struct jail_config jail;  /* --user (uid, gid); root is set from chroot by run_config_finish */
	struct vm_config vm;      /* what vm_create takes (serial fds are main's business) */
};

/* What a key's value is, in a config file: CONFIG_STRING takes a JSON string, CONFIG_UINT
 * an integer, CONFIG_SIZE a string ("256M") or an integer, CONFIG_FLAG true or false,
 * CONFIG_DEVICES an array of objects or of option strings. null always means the default. */
enum config_kind { CONFIG_STRING, CONFIG_UINT, CONFIG_SIZE, CONFIG_FLAG, CONFIG_DEVICES,
		   CONFIG_UINT_WORD /* an integer or a word: coalesce=on|off|US */ };

#define CONFIG_KVM_DEVICE "/dev/kvm"

/* The forms of --serial (the grammar is config_keys.c's set_serial). */
enum serial_kind {
	SERIAL_STDOUT, /* not given: COM1 output to standard output */
	SERIAL_FILE,   /* FILE or file=FILE: output to a file */
	SERIAL_SOCKET, /* socket=PATH: one client of a unix socket, both ways */
	SERIAL_TTY,    /* tty: standard output, standard input raw when it is a terminal */
	SERIAL_OFF,    /* off: COM1 goes nowhere */
};

/* Which form c->serial holds; *path gets the file or socket path (else NULL). */
enum serial_kind run_config_serial(const struct run_config *c, const char **path);

struct json_t;

/* A key of the configuration: a long option of `msivm run` and a key of a config file. */
struct config_key {
	const char *name;
	enum config_kind kind;
	enum vm_device_type dev;  /* CONFIG_DEVICES: which device */
	/* Sets the value from its text (NULL: a flag given on its own). Returns 0 or -EINVAL
	 * with a message. NULL for plain strings, flags, integers and devices (see config_set). */
	int (*set)(struct run_config *c, const char *val, struct error *e);
	/* The value for --print-config (NULL if out of memory). NULL for plain strings, flags
	 * and devices (see config_print.c). */
	struct json_t *(*get)(const struct run_config *c);
	size_t off;               /* plain strings (char *) and flags (bool): the field's offset */
	const char *def;          /* plain strings: what NULL means, printed as such (or NULL) */
};

/* Every key, in --print-config order; *n is set to the count. */
const struct config_key *config_keys(size_t *n);

/* The key named `name`, or NULL. */
const struct config_key *config_key_find(const char *name);

/* Gives key k the value `val` as the command line spells it (a flag: NULL or "on" sets it,
 * "off" clears it; a device key: one option string, which adds a device). Returns 0 or
 * -errno with a message naming the option and the problem. */
int config_set(struct run_config *c, const struct config_key *k, const char *val,
	       struct error *e);

/* The defaults: 256 MiB, 1 vCPU, /dev/kvm, seccomp's default mode, log level warn,
 * shutdown timeout 10 s, no devices. */
void run_config_init(struct run_config *c);

/* Frees the strings; c can be initialised again. */
void run_config_free(struct run_config *c);

/* Checks what needs the whole configuration and derives what the VM takes: --kernel given,
 * --cpu-pin against --cpus, --dedicated, --rt with --user, --chroot enterable, disk images
 * openable; devices ordered rng, disk, console, net (each kind in the order given: the PCI
 * slots follow it). Call once, after every option. Returns 0 or -errno with a message. */
int run_config_finish(struct run_config *c, struct error *e);

/* Replaces the string *dst with a copy of src (NULL: clears it). Returns 0 or -ENOMEM. */
int config_strset(char **dst, const char *src, struct error *e);

#endif
