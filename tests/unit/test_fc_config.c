/* Unit tests for Firecracker's configuration document: strict checks (unknown fields, types, ranges, what msivm refuses) and its translation into msivm's run_config. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "config/config_devices.h"
#include "fc/fc_config.h"
#include "fc/fc_metrics.h"

static char dir[64]; /* the disk images' directory: "/r/" in the documents below */

/* A document with "/r/" meaning dir. */
static json_t *parse(const char *text)
{
	char buf[4096];
	size_t n = 0;
	for (const char *p = text; *p && n < sizeof(buf) - 64; p++) {
		if (!strncmp(p, "/r/", 3)) {
			n += (size_t)snprintf(buf + n, sizeof(buf) - n, "%s/", dir);
			p += 2;
		} else {
			buf[n++] = *p;
		}
	}
	buf[n] = 0;
	json_error_t je;
	json_t *j = json_loads(buf, 0, &je);
	if (!j)
		fail_msg("bad test JSON: %s", je.text);
	return j;
}

/* The document's check fails with a message containing `needle`. */
static void refused(const char *doc, const char *needle)
{
	json_t *j = parse(doc);
	struct error e = { "" };
	int ret = fc_config_check(j, &e);
	json_decref(j);
	if (!ret || !strstr(e.msg, needle))
		fail_msg("%s: want a refusal with '%s', got %d '%s'", doc, needle, ret, e.msg);
}

static void test_checks_refuse_what_firecracker_refuses(void **state)
{
	refused("{\"boot-source\":{\"kernel_image_path\":\"k\",\"x\":1}}", "unknown field `x`");
	refused("{\"boot-source\":{}}", "missing field `kernel_image_path`");
	refused("{\"machine-config\":{\"vcpu_count\":0,\"mem_size_mib\":64}}", "invalid value 0 for `vcpu_count`");
	refused("{\"machine-config\":{\"vcpu_count\":33,\"mem_size_mib\":64}}", "invalid value 33");
	refused("{\"machine-config\":{\"vcpu_count\":\"1\",\"mem_size_mib\":64}}", "invalid type for `vcpu_count`");
	refused("{\"drives\":[{\"drive_id\":\"a\",\"is_root_device\":true,\"path_on_host\":\"p\"},"
		"{\"drive_id\":\"b\",\"is_root_device\":true,\"path_on_host\":\"q\"}]}",
		"A root block device already exists");
	refused("{\"drives\":[{\"drive_id\":\"a\",\"is_root_device\":false,\"path_on_host\":\"p\"},"
		"{\"drive_id\":\"a\",\"is_root_device\":false,\"path_on_host\":\"q\"}]}", "given twice");
	refused("{\"drives\":[{\"drive_id\":\"a\",\"is_root_device\":false,\"socket\":\"s\"}]}",
		"no vhost-user-blk");
	refused("{\"drives\":[{\"drive_id\":\"a\",\"is_root_device\":false,\"io_engine\":\"Fast\"}]}",
		"unknown variant for `io_engine`");
	refused("{\"vsock\":{\"guest_cid\":2,\"uds_path\":\"v\"}}", "invalid value 2 for `guest_cid`");
	refused("{\"balloon\":{}}", "no balloon device");
	refused("{\"mmds-config\":{}}", "no MMDS");
	refused("{\"machine-config\":{\"vcpu_count\":1,\"mem_size_mib\":64,\"cpu_template\":\"T2\"}}",
		"no CPU templates");
	refused("{\"logger\":{\"level\":\"Loud\"}}", "Invalid level");
	refused("{\"drivez\":[]}", "unknown configuration section `drivez`");
	refused("[]", "JSON object of sections");
}

/* Kata's fcConfig.json, as its Go driver writes it. */
static const char kata_doc[] =
	"{\"machine-config\":{\"smt\":false,\"mem_size_mib\":2048,\"vcpu_count\":1},"
	"\"boot-source\":{\"kernel_image_path\":\"/r/vmlinux\",\"boot_args\":\"console=hvc0 "
	"root=/dev/vda1 pci=off reboot=k panic=1 iommu=off net.ifnames=0 random.trust_cpu=on "
	"acpi=off\"},"
	"\"drives\":[{\"drive_id\":\"rootfs\",\"is_read_only\":true,\"is_root_device\":false,"
	"\"path_on_host\":\"/r/rootfs\"},"
	"{\"drive_id\":\"drive_0\",\"is_read_only\":false,\"is_root_device\":false,"
	"\"path_on_host\":\"/r/drive_0\"},"
	"{\"drive_id\":\"drive_1\",\"is_read_only\":false,\"is_root_device\":false,"
	"\"path_on_host\":\"/r/drive_1\",\"rate_limiter\":{\"bandwidth\":{\"size\":1000,"
	"\"refill_time\":500,\"one_time_burst\":4096},\"ops\":{\"size\":0,\"refill_time\":1000}}}],"
	"\"vsock\":{\"guest_cid\":3,\"uds_path\":\"/r/kata.hvsock\",\"vsock_id\":\"root\"},"
	"\"network-interfaces\":[{\"iface_id\":\"eth0\",\"host_dev_name\":\"tap0_kata\","
	"\"guest_mac\":\"02:00:ca:fe:00:01\",\"rx_rate_limiter\":{},\"tx_rate_limiter\":{}}],"
	"\"logger\":{\"level\":\"Error\",\"log_path\":\"/r/logs.fifo\"},"
	"\"metrics\":{\"metrics_path\":\"/r/metrics.fifo\"}}";

/* A NIC's two limiters stay apart; a bucket is Firecracker's exactly and prints so. */
static void test_nic_limiters_apart(void **state)
{
	json_t *j = json_loads("{\"boot-source\":{\"kernel_image_path\":\"/k\"},"
		"\"network-interfaces\":[{\"iface_id\":\"eth0\",\"host_dev_name\":\"t0\","
		"\"tx_rate_limiter\":{\"ops\":{\"size\":3,\"refill_time\":7,\"one_time_burst\":9}},"
		"\"rx_rate_limiter\":{\"bandwidth\":{\"size\":1048576,\"refill_time\":100}}}]}", 0, NULL);
	struct error e = { "" };
	struct run_config *c = calloc(1, sizeof(*c));
	assert_non_null(j);
	assert_int_equal(fc_config_check(j, &e), 0);
	run_config_init(c);
	fc_config_defaults(c);
	assert_int_equal(fc_config_build(j, c, &e), 0);
	const struct vm_device_spec *d = &c->vm.devices[0];
	assert_int_equal(d->limit.ops.size, 3);
	assert_int_equal(d->limit.ops.refill_ms, 7);
	assert_int_equal(d->limit.ops.one_time_burst, 9);
	assert_int_equal(d->limit.bytes.size, 0);
	assert_true(d->rx_limit_own);
	assert_int_equal(d->rx_limit.bytes.size, 1048576);
	assert_int_equal(d->rx_limit.bytes.refill_ms, 100);
	assert_int_equal(d->rx_limit.ops.size, 0);
	char buf[RATE_BUCKET_TEXT_MAX];
	assert_string_equal(rate_bucket_text(&d->limit.ops, false, buf), "3/7+9");
	assert_string_equal(rate_bucket_text(&d->rx_limit.bytes, true, buf), "1M/100");
	struct rate_bucket_opts b;
	assert_int_equal(rate_bucket_parse("1M/100", true, false, &b), 0);
	assert_true(b.size == 1048576 && b.refill_ms == 100 && b.one_time_burst == 0);
	assert_int_equal(rate_bucket_parse("50M", true, false, &b), 0);
	assert_true(b.size == 50ull << 20 && b.refill_ms == 1000);
	assert_int_equal(rate_bucket_parse("off", true, true, &b), 0);
	assert_int_equal(b.size, 0);
	assert_int_not_equal(rate_bucket_parse("off", true, false, &b), 0);
	assert_int_not_equal(rate_bucket_parse("0", false, false, &b), 0);
	assert_int_not_equal(rate_bucket_parse("10/0", false, false, &b), 0);
	assert_int_not_equal(rate_bucket_parse("10/5x", false, false, &b), 0);
	assert_int_not_equal(rate_bucket_parse("10+", false, false, &b), 0);
	assert_int_not_equal(rate_bucket_parse("/5", false, false, &b), 0);
	run_config_free(c);
	free(c);
	json_decref(j);
}

static void test_kata_document_translates(void **state)
{
	json_t *j = parse(kata_doc);
	struct error e = { "" };
	if (fc_config_check(j, &e))
		fail_msg("Kata's document refused: %s", e.msg);
	struct run_config *c = calloc(1, sizeof(*c));
	run_config_init(c);
	fc_config_defaults(c);
	if (fc_config_build(j, c, &e))
		fail_msg("Kata's document does not translate: %s", e.msg);
	char want[128];
	snprintf(want, sizeof(want), "%s/vmlinux", dir);
	assert_string_equal(c->kernel, want);
	/* pci=off and acpi=off dropped, the rest kept in order */
	assert_string_equal(c->cmdline, "console=hvc0 root=/dev/vda1 reboot=k panic=1 iommu=off "
					 "net.ifnames=0 random.trust_cpu=on");
	assert_int_equal(c->vm.mem_size, 2048ull << 20);
	assert_int_equal(c->vm.ncpus, 1);
	assert_true(c->vm.fc_thread_names);
	assert_int_equal(c->vm.shutdown_timeout_ms, 0);
	assert_int_equal(c->vm.ndevices, 5); /* 3 drives, a NIC, the vsock */
	/* drives in the document's order: drive_N is the guest's disk N + 1 */
	assert_int_equal(c->vm.devices[0].type, VM_DEV_BLK);
	snprintf(want, sizeof(want), "%s/rootfs", dir);
	assert_string_equal(c->vm.devices[0].blk.path, want);
	assert_true(c->vm.devices[0].blk.ro);
	snprintf(want, sizeof(want), "%s/drive_0", dir);
	assert_string_equal(c->vm.devices[1].blk.path, want);
	assert_false(c->vm.devices[1].blk.ro);
	/* Firecracker's bucket as it is: 1000 bytes per 500 ms with its one-time burst; an ops
	 * bucket of size 0 is no limit */
	assert_int_equal(c->vm.devices[2].limit.bytes.size, 1000);
	assert_int_equal(c->vm.devices[2].limit.bytes.refill_ms, 500);
	assert_int_equal(c->vm.devices[2].limit.bytes.one_time_burst, 4096);
	assert_int_equal(c->vm.devices[2].limit.ops.size, 0);
	assert_int_equal(c->vm.devices[3].type, VM_DEV_NET);
	/* Kata's empty limiters: none either way, the receive side its own (not the transmit's) */
	assert_false(rate_limit_set(&c->vm.devices[3].limit));
	assert_true(c->vm.devices[3].rx_limit_own);
	assert_false(rate_limit_set(&c->vm.devices[3].rx_limit));
	assert_int_equal(c->vm.devices[4].type, VM_DEV_VSOCK);
	assert_int_equal(c->vm.devices[4].vsock.cid, 3);
	snprintf(want, sizeof(want), "%s/kata.hvsock", dir);
	assert_string_equal(c->vm.devices[4].vsock.path, want);
	assert_int_equal(fc_config_drive_index(j, "drive_0"), 1);
	assert_int_equal(fc_config_drive_index(j, "nope"), -1);
	run_config_free(c);
	free(c);
	json_decref(j);
}

static void test_root_drive_goes_first_and_names_root(void **state)
{
	json_t *j = parse("{\"boot-source\":{\"kernel_image_path\":\"k\",\"boot_args\":\"quiet\"},"
			  "\"drives\":[{\"drive_id\":\"data\",\"is_root_device\":false,\"path_on_host\":\"/r/d\"},"
			  "{\"drive_id\":\"root\",\"is_root_device\":true,\"is_read_only\":true,"
			  "\"path_on_host\":\"/r/r\"}]}");
	struct error e = { "" };
	struct run_config *c = calloc(1, sizeof(*c));
	run_config_init(c);
	fc_config_defaults(c);
	if (fc_config_check(j, &e) || fc_config_build(j, c, &e))
		fail_msg("%s", e.msg);
	assert_non_null(strstr(c->vm.devices[0].blk.path, "/r"));
	assert_non_null(strstr(c->vm.devices[1].blk.path, "/d"));
	assert_string_equal(c->cmdline, "quiet root=/dev/vda ro");
	assert_int_equal(fc_config_drive_index(j, "root"), 0);
	assert_int_equal(fc_config_drive_index(j, "data"), 1);
	run_config_free(c);
	free(c);
	json_decref(j);
}

static void test_no_boot_source_refused(void **state)
{
	json_t *j = parse("{}");
	struct error e = { "" };
	struct run_config *c = calloc(1, sizeof(*c));
	run_config_init(c);
	assert_int_not_equal(fc_config_build(j, c, &e), 0);
	assert_non_null(strstr(e.msg, "without kernel configuration"));
	run_config_free(c);
	free(c);
	json_decref(j);
}

static void test_metrics_shape(void **state)
{
	json_t *doc = parse("{\"drives\":[{\"drive_id\":\"a\",\"is_root_device\":false,\"path_on_host\":\"p\"}],"
			    "\"network-interfaces\":[{\"iface_id\":\"eth0\",\"host_dev_name\":\"t\"}]}");
	json_t *stats = parse("{\"devices\":[{\"type\":\"blk\",\"requests_by_type\":{\"in\":3,\"out\":2,"
			      "\"flush\":1},\"bytes_read\":1536,\"bytes_written\":1024,\"ioerr\":0},"
			      "{\"type\":\"net\",\"rx_bytes\":10,\"tx_bytes\":20,\"rx_frames\":1,"
			      "\"tx_frames\":2}],\"exits\":{\"msivm_io\":7,\"msivm_mmio\":9}}");
	json_t *m = fc_metrics_object(stats, doc, 1234);
	assert_int_equal(json_integer_value(json_object_get(m, "utc_timestamp_ms")), 1234);
	json_t *b = json_object_get(m, "block_a");
	assert_int_equal(json_integer_value(json_object_get(b, "read_count")), 3);
	assert_int_equal(json_integer_value(json_object_get(b, "write_bytes")), 1024);
	assert_int_equal(json_integer_value(json_object_get(json_object_get(m, "block"), "flush_count")), 1);
	assert_int_equal(json_integer_value(json_object_get(json_object_get(m, "net_eth0"),
							    "tx_packets_count")), 2);
	assert_int_equal(json_integer_value(json_object_get(json_object_get(m, "vcpu"), "exits_mmio")), 9);
	json_decref(m);
	json_decref(stats);
	json_decref(doc);
}

/* Empty disk images (0 sectors, as Kata's placeholders) in a directory of their own. */
static int make_images(void **state)
{
	snprintf(dir, sizeof(dir), "/tmp/msivm-fc-unit-XXXXXX");
	if (!mkdtemp(dir))
		return -1;
	static const char *const names[] = { "rootfs", "drive_0", "drive_1", "d", "r" };
	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		char p[128];
		snprintf(p, sizeof(p), "%s/%s", dir, names[i]);
		FILE *f = fopen(p, "w");
		if (!f)
			return -1;
		fclose(f);
	}
	return 0;
}

static int remove_images(void **state)
{
	char cmd[128];
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	return system(cmd) == 0 ? 0 : -1;
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_checks_refuse_what_firecracker_refuses),
		cmocka_unit_test(test_kata_document_translates),
		cmocka_unit_test(test_nic_limiters_apart),
		cmocka_unit_test(test_root_drive_goes_first_and_names_root),
		cmocka_unit_test(test_no_boot_source_refused),
		cmocka_unit_test(test_metrics_shape),
	};
	return cmocka_run_group_tests(tests, make_images, remove_images);
}
