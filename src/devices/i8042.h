/* i8042 keyboard controller, reduced to what guests use to reset a PC: the output-port reset pulse. */
#ifndef MSIVM_DEVICES_I8042_H
#define MSIVM_DEVICES_I8042_H

#include <stdatomic.h>
#include <stdint.h>

#include "bus/bus.h"
#include "devices/power.h"

#define I8042_DATA_PORT    0x60
#define I8042_COMMAND_PORT 0x64
#define I8042_CMD_PULSE    0xf0u  /* 0xF0-0xFF: pulse the output-port bits that are 0 in the low nibble */
#define I8042_OUT_RESET    0x01u  /* output-port bit 0: CPU reset */

/* No keyboard and no mouse: the FADT says there is no 8042, so Linux does
 * not probe one, but its `reboot=k` path (and its fallback after the ACPI
 * reset register) still waits for the input buffer and writes 0xFE. */
struct i8042 {
	struct power_sink sink;
	_Atomic uint64_t ignored;   /* commands other than a reset pulse */
};

/* Handlers for the data port (one byte at I8042_DATA_PORT): reads 0,
 * writes are dropped. */
extern const struct bus_ops i8042_data_ops;

/* Handlers for the command/status port (one byte at I8042_COMMAND_PORT):
 * status reads 0 (both buffers empty), a pulse command that pulses the
 * reset line (0xF0-0xFE, even) sends POWER_RESET, other commands are
 * counted in `ignored`. */
extern const struct bus_ops i8042_command_ops;

#endif
