/* The ACPI power button: whether the guest listens for it (the GED's IOAPIC pin) and a press (an edge on that pin). */
#ifndef MSIVM_DEVICES_POWER_BUTTON_H
#define MSIVM_DEVICES_POWER_BUTTON_H

/* The Generic Event Device's interrupt (edge, active high): its _EVT method
 * notifies the power button device (\_SB.PWRB) with 0x80, "pressed". The DSDT
 * (arch/x86/acpi_dsdt.c) describes it with this GSI. */
#define ACPI_GED_GSI       5

/* The DSDT's Generic Event Device owns GSI ACPI_GED_GSI (edge, active high);
 * its _EVT notifies \_SB.PWRB, a PNP0C0C power button. Linux's GED driver
 * unmasks the pin when it binds, and its button driver turns the notify into
 * KEY_POWER, on which the guest's userspace powers off. */

/* 1 when the guest has unmasked the GED's pin in the in-kernel IOAPIC (a
 * driver listens for the button), 0 when the pin is masked (the guest never
 * set it up: a press would be lost), -errno when KVM cannot tell. */
int power_button_listening(int vm_fd);

/* Presses the button: raises and lowers GSI ACPI_GED_GSI (one edge, one
 * _EVT). Returns 0 or -errno. Safe from any thread. */
int power_button_press(int vm_fd);

#endif
