/* bench/bare_kvm: the floor for VM start-to-exit: a KVM VM running 3 real-mode instructions. */
#include <fcntl.h>
#include <linux/kvm.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <unistd.h>

int main(void)
{
	/* mov al, 0; out 0xf4, al; hlt */
	static const uint8_t code[] = { 0xb0, 0x00, 0xe6, 0xf4, 0xf4 };
	int kvm = open("/dev/kvm", O_RDWR | O_CLOEXEC);
	if (kvm < 0) {
		perror("/dev/kvm");
		return 1;
	}
	int vm = ioctl(kvm, KVM_CREATE_VM, 0);
	size_t size = 0x10000;
	uint8_t *mem = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (vm < 0 || mem == MAP_FAILED) {
		perror("vm");
		return 1;
	}
	memcpy(mem + 0x1000, code, sizeof(code));
	struct kvm_userspace_memory_region r = {
		.slot = 0, .guest_phys_addr = 0, .memory_size = size, .userspace_addr = (uintptr_t)mem,
	};
	int cpu = ioctl(vm, KVM_CREATE_VCPU, 0);
	int run_size = ioctl(kvm, KVM_GET_VCPU_MMAP_SIZE, 0);
	if (ioctl(vm, KVM_SET_USER_MEMORY_REGION, &r) || cpu < 0 || run_size <= 0) {
		perror("setup");
		return 1;
	}
	struct kvm_run *run = mmap(NULL, (size_t)run_size, PROT_READ | PROT_WRITE, MAP_SHARED, cpu, 0);
	struct kvm_sregs s;
	ioctl(cpu, KVM_GET_SREGS, &s);
	s.cs.base = 0;
	s.cs.selector = 0;
	ioctl(cpu, KVM_SET_SREGS, &s);
	struct kvm_regs regs = { .rip = 0x1000, .rflags = 2 };
	ioctl(cpu, KVM_SET_REGS, &regs);
	for (;;) {
		if (ioctl(cpu, KVM_RUN, 0) < 0) {
			perror("KVM_RUN");
			return 1;
		}
		if (run->exit_reason == KVM_EXIT_IO && run->io.port == 0xf4)
			return ((uint8_t *)run)[run->io.data_offset];
		if (run->exit_reason != KVM_EXIT_IO) {
			fprintf(stderr, "exit %u\n", run->exit_reason);
			return 1;
		}
	}
}
