/* Fuzz target: a malicious driver drives virtio-vsock (packets, credit, connections to a host service at PATH_1 and from host clients on PATH) through BAR0 and its rings. */
#include <fcntl.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include "devices/virtio_vsock.h"
#include "fuzz_common.h"

static uint8_t *ram;          /* the fixture: guest RAM, zeroed per run */
static char dir[64];          /* PATH and PATH_1 live here */
static int service = -1;      /* the host service at PATH_1 (listening for the guest's connects) */
#define PEERS 8
static int peers[PEERS], npeers; /* this run's host ends: accepted from PATH_1, or clients of PATH */

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	fz_quiet();
	ram = malloc(FZ_RAM_SIZE);
	snprintf(dir, sizeof(dir), "/tmp/fzvsockXXXXXX");
	if (!ram || !mkdtemp(dir))
		return -1;
	struct sockaddr_un a = { .sun_family = AF_UNIX };
	snprintf(a.sun_path, sizeof(a.sun_path), "%s/v_1", dir);
	service = socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (service < 0 || bind(service, (struct sockaddr *)&a, sizeof(a)) || listen(service, 64))
		return -1;
	return 0;
}

static void add_peer(int fd)
{
	if (fd < 0)
		return;
	if (npeers == PEERS) {
		close(fd);
		return;
	}
	peers[npeers++] = fd;
}

/* The host's side between guest accesses, by arg: accept the guest's connects at PATH_1, write
 * to or close a host end, connect a client to PATH with a CONNECT line, then let the device see
 * every socket as ready (the event loop's work, done here). */
static void step(void *opaque, uint8_t arg)
{
	struct virtio_vsock *v = opaque;
	add_peer(accept4(service, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC));
	switch (arg & 3) {
	case 1:
		if (npeers) {
			char buf[300];
			memset(buf, 'h', sizeof(buf));
			(void)send(peers[arg % npeers], buf, (size_t)(arg + 1), MSG_DONTWAIT | MSG_NOSIGNAL);
		}
		break;
	case 2:
		if (npeers)
			close(peers[--npeers]);
		break;
	case 3: {
		struct sockaddr_un a = { .sun_family = AF_UNIX };
		snprintf(a.sun_path, sizeof(a.sun_path), "%s/v", dir);
		int c = socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
		if (c >= 0 && connect(c, (struct sockaddr *)&a, sizeof(a)) == 0) {
			char line[32];
			int n = snprintf(line, sizeof(line), "CONNECT %u\n", arg >> 2);
			(void)send(c, line, (size_t)n, MSG_NOSIGNAL);
		}
		add_peer(c);
		break;
	}
	default:
		break;
	}
	pthread_mutex_lock(&v->pci.lock);
	vsock_accept(v);
	pthread_mutex_unlock(&v->pci.lock);
	for (uint32_t i = 0; i < VSOCK_MAX_CONNS; i++)
		if (v->conns[i].state != VC_FREE && v->conns[i].fd >= 0)
			vsock_conn_event(&v->conns[i], arg & 0x80 ? EPOLLHUP : EPOLLIN | EPOLLOUT);
}

/* Input: see fuzz_ops.h (device targets); the device byte picks the guest CID (3 + byte). */
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct fz_in in = { data, size };
	struct fz_vm vm;
	if (fz_vm_init(&vm, ram, FZ_RAM_SIZE))
		abort();
	struct virtio_pci_config cfg = { .mode = (enum irq_mode)(fz_u8(&in) % 4), .vectors = -1 };
	uint8_t setup = fz_u8(&in);
	uint64_t drop = fz_u64(&in);
	struct virtio_vsock_opts o = { .cid = 3u + fz_u8(&in) };
	snprintf(o.path, sizeof(o.path), "%s/v", dir);
	struct virtio_vsock *v = calloc(1, sizeof(*v));
	struct error err;
	if (!v || virtio_vsock_init(v, 0, &o, &cfg, &vm.gm, -1, &vm.routes, NULL, &vm.mmio,
				    fz_window(), &err))
		abort();
	struct fz_drv d = { .step = step, .opaque = v };
	if (fz_drv_attach(&d, &vm, &v->pci))
		abort();
	fz_drv_main(&d, &in, setup, drop, NULL, 0);
	virtio_vsock_destroy(v);
	free(v);
	while (npeers)
		close(peers[--npeers]);
	int fd;
	while ((fd = accept4(service, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC)) >= 0)
		close(fd);
	fz_vm_destroy(&vm);
	return 0;
}
