/* vCPU state for snapshots: KVM_GET_* of every part -> JSON (hex blobs, MSR pairs) and back with KVM_SET_* in KVM's order. */
#include "vmm/vcpu_state.h"

#include <errno.h>
#include <linux/kvm.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>

#include "util/hex.h"

#define MSR_IA32_TSC_DEADLINE 0x6e0u
#define MAX_MSRS 1024u

/* One fixed-size KVM structure of the state: its JSON key and its get/set requests. */
struct blob {
	const char *key;
	unsigned long get, set;
	size_t size;
};

/* In the order they are put back (vcpu_state_load): XSAVE before the special registers (CR4's
 * OSXSAVE), MSRs and the LAPIC after them (APIC base), events last. */
static const struct blob blobs_early[] = {
	{ "regs", KVM_GET_REGS, KVM_SET_REGS, sizeof(struct kvm_regs) },
	{ "xsave", KVM_GET_XSAVE, KVM_SET_XSAVE, sizeof(struct kvm_xsave) }, /* see xsave_blob */
	{ "xcrs", KVM_GET_XCRS, KVM_SET_XCRS, sizeof(struct kvm_xcrs) },
	{ "sregs", KVM_GET_SREGS, KVM_SET_SREGS, sizeof(struct kvm_sregs) },
};
static const struct blob blobs_late[] = {
	{ "lapic", KVM_GET_LAPIC, KVM_SET_LAPIC, sizeof(struct kvm_lapic_state) },
	{ "events", KVM_GET_VCPU_EVENTS, KVM_SET_VCPU_EVENTS, sizeof(struct kvm_vcpu_events) },
	{ "debugregs", KVM_GET_DEBUGREGS, KVM_SET_DEBUGREGS, sizeof(struct kvm_debugregs) },
};

#define N(a) (sizeof(a) / sizeof((a)[0]))
#define XSAVE_MAX (1u << 20) /* an XSAVE area larger than any CPU's (AMX's is about 11 KiB) */

/* The XSAVE area as this host's KVM sizes it: the 4 KiB kvm_xsave, or where KVM_CAP_XSAVE2 asks
 * for more (the process was given extended state such as AMX's tiles), that size read with
 * KVM_GET_XSAVE2 (KVM_SET_XSAVE takes it as it is). */
static struct blob xsave_blob(int kvm_fd)
{
	struct blob b = blobs_early[1];
	int size = ioctl(kvm_fd, KVM_CHECK_EXTENSION, KVM_CAP_XSAVE2);
	if (size > (int)sizeof(struct kvm_xsave) && size <= (int)XSAVE_MAX) {
		b.get = KVM_GET_XSAVE2;
		b.size = (size_t)size;
	}
	return b;
}

static int save_blob(int fd, const struct blob *b, json_t *o, struct error *err)
{
	uint8_t *buf = calloc(1, b->size);
	char *text = malloc(2 * b->size + 1);
	int ret = 0;
	if (!buf || !text)
		ret = error_set(err, -ENOMEM, "out of memory for the vCPU's %s", b->key);
	else if (ioctl(fd, b->get, buf))
		ret = error_set(err, -errno, "cannot read the vCPU's %s: %s", b->key, strerror(errno));
	else {
		hex_encode(buf, b->size, text);
		json_object_set_new(o, b->key, json_string(text));
	}
	free(buf);
	free(text);
	return ret;
}

static int load_blob(int fd, const struct blob *b, const json_t *o, struct error *err)
{
	const json_t *v = json_object_get(o, b->key);
	if (!json_is_string(v))
		return error_set(err, -EINVAL, "the vCPU state has no %s", b->key);
	uint8_t *buf = malloc(b->size);
	if (!buf)
		return error_set(err, -ENOMEM, "out of memory for the vCPU's %s", b->key);
	int ret = 0;
	if (hex_decode(json_string_value(v), json_string_length(v), buf, b->size))
		ret = error_set(err, -EINVAL, "the vCPU's %s is not %zu bytes of hex", b->key, b->size);
	else if (ioctl(fd, b->set, buf))
		ret = error_set(err, -errno, "KVM refused the vCPU's %s: %s", b->key, strerror(errno));
	free(buf);
	return ret;
}

/* KVM's list of MSRs to save (KVM_GET_MSR_INDEX_LIST). Returns the count, or -errno. */
static int msr_index_list(int kvm_fd, uint32_t *idx)
{
	struct kvm_msr_list *l = calloc(1, sizeof(*l) + MAX_MSRS * sizeof(uint32_t));
	if (!l)
		return -ENOMEM;
	l->nmsrs = MAX_MSRS;
	int n = ioctl(kvm_fd, KVM_GET_MSR_INDEX_LIST, l) ? -errno : (int)l->nmsrs;
	if (n > 0)
		memcpy(idx, l->indices, (size_t)n * sizeof(uint32_t));
	free(l);
	return n;
}

/* Reads every listed MSR the vCPU lets be read: KVM_GET_MSRS stops at the first it refuses,
 * which is skipped. */
static int save_msrs(int kvm_fd, int fd, json_t *o, struct error *err)
{
	uint32_t *idx = calloc(MAX_MSRS, sizeof(*idx));
	struct kvm_msrs *m = calloc(1, sizeof(*m) + MAX_MSRS * sizeof(struct kvm_msr_entry));
	int n = idx && m ? msr_index_list(kvm_fd, idx) : -ENOMEM;
	if (n < 0) {
		free(idx);
		free(m);
		return error_set(err, n, "cannot list the MSRs to save: %s", strerror(-n));
	}
	json_t *arr = json_array();
	for (int i = 0; i < n;) {
		m->nmsrs = (uint32_t)(n - i);
		for (int k = i; k < n; k++)
			m->entries[k - i] = (struct kvm_msr_entry){ .index = idx[k] };
		int got = ioctl(fd, KVM_GET_MSRS, m);
		if (got < 0)
			got = 0;
		for (int k = 0; k < got; k++)
			json_array_append_new(arr, json_pack("[I,I]", (json_int_t)m->entries[k].index,
							     (json_int_t)m->entries[k].data));
		i += got + 1; /* the refused one is skipped */
	}
	json_object_set_new(o, "msrs", arr);
	free(idx);
	free(m);
	return 0;
}

/* Puts the saved MSRs back; only_index: just that one (0: all). */
static int load_msrs(int fd, const json_t *o, uint32_t only_index, struct error *err)
{
	const json_t *arr = json_object_get(o, "msrs");
	if (!json_is_array(arr) || json_array_size(arr) > MAX_MSRS)
		return error_set(err, -EINVAL, "the vCPU state has no list of at most %u MSRs", MAX_MSRS);
	struct kvm_msrs *m = calloc(1, sizeof(*m) + MAX_MSRS * sizeof(struct kvm_msr_entry));
	if (!m)
		return error_set(err, -ENOMEM, "out of memory for MSRs");
	size_t i;
	const json_t *e;
	json_array_foreach(arr, i, e) {
		json_int_t index, data;
		if (json_unpack((json_t *)e, "[II]", &index, &data) || index < 0 || index > UINT32_MAX) {
			free(m);
			return error_set(err, -EINVAL, "MSR entry %zu is not [index, value]", i);
		}
		if (only_index && (uint32_t)index != only_index)
			continue;
		m->entries[m->nmsrs++] = (struct kvm_msr_entry){ .index = (uint32_t)index,
								 .data = (uint64_t)data };
	}
	uint32_t want = m->nmsrs;
	int set = want ? ioctl(fd, KVM_SET_MSRS, m) : 0;
	int ret = 0;
	if (set < 0 || (uint32_t)set != want)
		ret = error_set(err, set < 0 ? -errno : -EINVAL, "KVM refused MSR 0x%x (%d of %u set)",
				set >= 0 && (uint32_t)set < want ? m->entries[set].index : 0,
				set < 0 ? 0 : set, want);
	free(m);
	return ret;
}

json_t *vcpu_state_save(int kvm_fd, int vcpu_fd, struct error *err)
{
	json_t *o = json_object();
	struct kvm_mp_state mp;
	int ret = 0;
	struct blob xsave = xsave_blob(kvm_fd);
	for (size_t i = 0; i < N(blobs_early) && !ret; i++)
		ret = save_blob(vcpu_fd, i == 1 ? &xsave : &blobs_early[i], o, err);
	for (size_t i = 0; i < N(blobs_late) && !ret; i++)
		ret = save_blob(vcpu_fd, &blobs_late[i], o, err);
	if (!ret)
		ret = save_msrs(kvm_fd, vcpu_fd, o, err);
	if (!ret && ioctl(vcpu_fd, KVM_GET_MP_STATE, &mp))
		ret = error_set(err, -errno, "cannot read the vCPU's MP state: %s", strerror(errno));
	if (ret) {
		json_decref(o);
		return NULL;
	}
	json_object_set_new(o, "mp_state", json_integer(mp.mp_state));
	return o;
}

int vcpu_state_load(int kvm_fd, int vcpu_fd, const json_t *state, struct error *err)
{
	struct blob xsave = xsave_blob(kvm_fd);
	const json_t *xv = json_object_get(state, xsave.key);
	if (json_is_string(xv) && json_string_length(xv) != 2 * xsave.size)
		return error_set(err, -EINVAL, "the vCPU's XSAVE area is %zu bytes, this host's KVM "
				 "takes %zu", json_string_length(xv) / 2, xsave.size);
	const json_t *mpv = json_object_get(state, "mp_state");
	if (!json_is_integer(mpv) || json_integer_value(mpv) < 0 ||
	    json_integer_value(mpv) > UINT32_MAX)
		return error_set(err, -EINVAL, "the vCPU state has no MP state");
	struct kvm_mp_state mp = { .mp_state = (uint32_t)json_integer_value(mpv) };
	int ret = 0;
	for (size_t i = 0; i < N(blobs_early) && !ret; i++)
		ret = load_blob(vcpu_fd, i == 1 ? &xsave : &blobs_early[i], state, err);
	if (!ret)
		ret = load_msrs(vcpu_fd, state, 0, err);
	if (!ret && ioctl(vcpu_fd, KVM_SET_MP_STATE, &mp))
		ret = error_set(err, -errno, "KVM refused the vCPU's MP state %u: %s", mp.mp_state,
				strerror(errno));
	if (!ret)
		ret = load_blob(vcpu_fd, &blobs_late[0], state, err); /* the LAPIC */
	/* The TSC deadline is ignored while the LAPIC timer is not in that mode: again now. */
	if (!ret)
		ret = load_msrs(vcpu_fd, state, MSR_IA32_TSC_DEADLINE, err);
	for (size_t i = 1; i < N(blobs_late) && !ret; i++)
		ret = load_blob(vcpu_fd, &blobs_late[i], state, err);
	return ret;
}
