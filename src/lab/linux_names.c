/* Linux lab names: the workloads' block names and the KVM exit reasons' debugfs names. */
#include "lab/linux_lab.h"

const char *ll_work_name(enum ll_work w)
{
	static const char *const names[LL_NWORK] = { "fio-rw", "fio-qd1", "fio-qd4", "fio-qd32",
						     "fio-qd128", "iperf-tx", "iperf-rx", "vsock-rr",
						     "vsock-bulk" };
	return (unsigned)w < LL_NWORK ? names[w] : "?";
}

const char *ll_exit_name(enum ll_exit e)
{
	static const char *const names[LL_NEXIT] = { "exits", "io_exits", "mmio_exits", "halt_exits",
						     "irq_exits", "irq_window_exits" };
	return (unsigned)e < LL_NEXIT ? names[e] : "?";
}
