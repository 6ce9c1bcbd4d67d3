/* guest/src/echo.h - `echo`: read lines typed on COM1 and print them back (a serial-input test). */
#ifndef PROBE_ECHO_H
#define PROBE_ECHO_H

/*
 * With the `echo` token: print "probe: echo ready", then read COM1 by
 * polling LSR.DR; each line (ended by CR or LF, at most 120 bytes) is
 * printed as "probe: echo <line>"; the line "quit" ends it. Returns 0, or
 * without the token at once.
 */
int probe_echo(const char *cmdline);

#endif
