/* Config usage: the text of `msivm --help` and `msivm run --help`. */
#include "config/config_cli.h"

#include <stdio.h>

#include "devices/device_type.h"

static const char usage_head[] =
	"usage: msivm run --kernel FILE [options]\n"
	"       msivm run --config FILE [options]   (options add to and override the file's)\n"
	"       msivm lab [options]   (the interrupt-mode experiments; msivm lab --help)\n"
	"       msivm remote --api-socket PATH COMMAND   (drive a running msivm; --help)\n"
	"       msivm host   (which KVM this host offers: hardware, pvm or none)\n"
	"       msivm firecracker [Firecracker's options]   (msivm in Firecracker's place: its\n"
	"                     command line, --config-file and API; also as 'firecracker'; --help)\n"
	"       msivm --help | --version\n"
	"\n"
	"msivm run: boot a kernel (a PVH ELF, a multiboot v1 ELF32 or a Linux bzImage) in a\n"
	"KVM microVM.\n"
	"  --kernel FILE      kernel image to boot (required): a PVH ELF, a multiboot v1\n"
	"                     ELF32 or a Linux bzImage\n"
	"  --initrd FILE      initial ramdisk\n"
	"  --cpuid-hide LIST  hide CPUID features, e.g. cmpxchg16b,xsave (see the manual)\n"
	"  --cmdline STR      kernel command line\n"
	"  --mem SIZE         guest RAM, e.g. 256M or 1G; a bare number is MiB (--mem 512 is\n"
	"                     512M) (default 256M); also --memory size=SIZE[,file=PATH,shared]\n"
	"  --mem-file PATH    guest RAM is the file PATH, mapped shared (created, or of\n"
	"                     exactly --mem's size): a snapshot then needs no memory copy\n"
	"  --cpus N           number of vCPUs, 1-255 (default 1)\n"
	"  --serial WHERE     COM1: FILE or file=FILE (output to a file), tty (standard\n"
	"                     output, and standard input as the guest's keyboard: raw\n"
	"                     mode on a terminal, Ctrl-a x quits with status 130),\n"
	"                     socket=PATH (a new unix socket: msivm waits for one client\n"
	"                     before the guest boots; it is COM1 both ways), off\n"
	"  --pit              create the in-kernel i8254 PIT\n"
	"  --testdev          kvm-unit-tests' devices: fw_cfg (0x510), pc-testdev (0xe0-0xeb,\n"
	"                     IRQ lines 0x2000-0x2017, MMIO 0xff000000), pci-testdev (PCI\n"
	"                     1b36:0005), the ACPI PM timer (0x608) and QEMU's debug-exit\n"
	"                     status ((V << 1) | 1); not for production VMs\n";

static const char usage_devices[] =
	"  every device also takes: irq=msix|msix-shared|msi|intx,\n"
	"                     vectors=N (MSI-X table size; 0: no MSI-X, so irq=intx or msi;\n"
	"                     vectors=0 without irq= means irq=intx),\n"
	"                     irqpath=irqfd|signal-msi (how MSI/MSI-X reach KVM),\n"
	"                     poll=US (after a queue's work, watch its ring up to US\n"
	"                     microseconds, 0-1000, kicks off meanwhile; adaptive),\n"
	"                     coalesce=on|off|US (hold a queue's interrupt while more\n"
	"                     completions join it, at most US microseconds, 1-10000;\n"
	"                     adaptive, backs off where nothing joins; on = 1000;\n"
	"                     default: on for disks, off for the rest); bps=SIZE, ops=N\n"
	"                     where named: a rate limit in bytes and requests per second,\n"
	"                     token buckets with one second of burst; or Firecracker's\n"
	"                     bucket as SIZE/MS[+BURST]: SIZE every MS ms (and at most\n"
	"                     SIZE held), BURST more once at the start\n";

static const char usage_tail[] =
	"  --kvm-device PATH  KVM device node (default /dev/kvm)\n"
	"  --cpu-pin SPEC     pin threads to host CPUs, e.g. vcpu0=1,io=0; without io= the\n"
	"                     I/O thread runs on the pinned vCPUs' CPUs (with --dedicated or\n"
	"                     --rt: on the other CPUs)\n"
	"  --rt PRIO          run vCPU and I/O threads SCHED_FIFO at PRIO (1-99)\n"
	"  --dedicated        disable HLT and PAUSE exits (needs every vCPU pinned to its own CPU)\n"
	"  --halt-poll NS     KVM halt polling time for this VM, in nanoseconds\n"
	"  --seccomp MODE     system call filters per thread: on (default; a forbidden\n"
	"                     call stops msivm with status 159 and names the call), log\n"
	"                     (allow and let the kernel log it), off\n"
	"  --user USER[:GROUP] once the VM is built, run as USER (name or id) with no\n"
	"                     supplementary groups and no way back to root\n"
	"  --chroot DIR       once the VM is built, enter a new mount namespace whose root\n"
	"                     is DIR (as Firecracker's jailer); with --user or --chroot a\n"
	"                     guest reset ends msivm (123): it could not reopen its files\n"
	"  --no-reboot        end msivm (status 123) when the guest resets, instead of\n"
	"                     rebooting it in place\n"
	"  --shutdown-timeout S  on SIGINT/SIGTERM, press the guest's ACPI power button\n"
	"                     and stop it after S seconds if it has not powered off\n"
	"                     (default 10; 0: at once); a second signal, or a guest that\n"
	"                     never enabled its button, stops it at once\n"
	"  --api-socket PATH  serve the API (HTTP/1.1 + JSON) on a new unix socket PATH\n"
	"                     (mode 0600): GET /vm, GET /metrics, PUT /vm/pause, resume,\n"
	"                     power-button, shutdown (exit 0), reboot, resize-disks;\n"
	"                     its client: msivm remote --api-socket PATH COMMAND\n"
	"  --stats            print interrupts per device/vector and VM exits at the end\n"
	"                     (of the last boot, after guest reboots)\n"
	"  --stats-json FILE  write the same figures as JSON (\"-\": standard output)\n"
	"  --log-file FILE    append log lines to FILE instead of standard error\n"
	"  --dump-on-crash DIR  when the guest panics (pvpanic), triple-faults or crashes,\n"
	"                     write DIR/msivm-PID-bootN.core (ELF: RAM, registers) and .json\n"
	"  --log-level LEVEL  error, warn (default), info or debug; each line carries the\n"
	"                     seconds since start and the thread's name\n"
	"  -v, --verbose      more log lines (repeat for debug)\n"
	"  -q, --quiet        errors only\n"
	"  --config FILE      read the options from FILE, a JSON object whose keys are the\n"
	"                     long option names (\"disk\": a list of objects such as\n"
	"                     {\"path\": \"a.img\", \"ro\": true} or of option strings); the\n"
	"                     other options given replace its settings and add devices\n"
	"  --restore state=FILE[,mem=FILE][,copy][,paused][,tap=NAME]...\n"
	"                     start from a snapshot (msivm remote snapshot) instead of a\n"
	"                     kernel: its configuration, vCPUs, devices and RAM (mapped from\n"
	"                     FILE privately, never written; default: the --mem-file the\n"
	"                     snapshot left its RAM in); copy: RAM read in instead;\n"
	"                     paused: wait for the API's resume; tap=NAME: the Nth NIC on a\n"
	"                     tap uses tap NAME (clones); host options (--serial,\n"
	"                     --api-socket ...) are this run's; also \"restore\" in --config\n"
	"  --print-config     print the configuration as such a file (every setting, with\n"
	"                     its default) and exit without running the VM\n"
	"Devices take PCI slots 00:01.0 on: every --rng, then --disk, --console, --net,\n"
	"--vsock (the order above), each kind in the order given.\n"
	"\n"
	"Exit status: 0 when the guest powers off (ACPI S5), the byte the guest wrote\n"
	"to port 0xf4 (debug-exit; QEMU's isa-debug-exit would give (byte << 1) | 1),\n"
	"122 if msivm itself failed while the guest ran, 123 if the guest reset under\n"
	"--no-reboot, 125 if msivm could not run the guest, 126 if the guest crashed,\n"
	"128+N after signal N (159: a seccomp filter stopped msivm). A guest reset (ACPI\n"
	"reset register, i8042 reset pulse, triple fault) reboots the VM in place:\n"
	"fresh vCPUs and devices, kernel and initrd loaded again, disks kept.\n";
void config_usage_print(FILE *out)
{
	fputs(usage_head, out);
	for (int t = 0; t < VM_DEV_NTYPES; t++) {
		const struct device_type *type = device_type_get((enum vm_device_type)t);
		char opt[32];
		snprintf(opt, sizeof(opt), "--%s OPTS", device_type_option((enum vm_device_type)t));
		fprintf(out, "  %-18s %s", opt, type->usage ? type->usage : "\n");
	}
	fputs(usage_devices, out);
	fputs(usage_tail, out);
}
