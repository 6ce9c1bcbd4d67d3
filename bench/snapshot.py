#!/usr/bin/env python3
# Benchmark (not a test): snapshot and restore of the probe guest, msivm beside QEMU (save with
# `migrate exec:`, restore with `-incoming`), median of N runs; restore clones' host memory.
#   bench/snapshot.py [--runs N] [--clones N] [--out DIR]   (default 5 runs, 4 clones, build/bench)
# The guest is the probe in echo mode (256 MiB, an rng): it waits for a console line. Cold start
# is process start to "probe: echo ready"; a restore's time is process start to the guest's first
# echo of an empty line written every 2 ms (what the restored guest does first); save is the
# request's wall time. Needs build/msivm, build/guest/probe.elf and qemu-system-x86_64 (scripts/deps.sh).
import argparse, os, select, shutil, signal, socket, statistics, subprocess, sys, time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
MSIVM = os.path.join(ROOT, 'build/msivm')
PROBE = os.path.join(ROOT, 'build/guest/probe.elf')
QEMU_BASE = ['qemu-system-x86_64', '-M', 'q35', '-enable-kvm', '-cpu', 'host,-arch-capabilities',
             '-m', '256M', '-nodefaults', '-no-user-config', '-display', 'none', '-serial', 'stdio',
             '-kernel', PROBE, '-append', 'echo exit=5', '-device', 'virtio-rng-pci,disable-legacy=on',
             '-device', 'isa-debug-exit,iobase=0xf4,iosize=4']
TIMEOUT = float(os.environ.get('BENCH_TIMEOUT', '60'))


class Guest:
    """A VMM process with the probe's console on its stdin/stdout."""

    def __init__(self, argv, log):
        self.t0 = time.monotonic()
        self.p = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                  stderr=open(log, 'w'), bufsize=0)
        self.buf = b''

    def wait_line(self, text):
        """Seconds from process start until a console line equal to `text` appears."""
        end = time.monotonic() + TIMEOUT
        while True:
            while b'\n' in self.buf:
                line, self.buf = self.buf.split(b'\n', 1)
                if line.decode(errors='replace').strip('\r') == text:
                    return time.monotonic() - self.t0
            left = end - time.monotonic()
            if left <= 0 or not select.select([self.p.stdout], [], [], left)[0]:
                raise SystemExit('bench: no "%s" within %.0f s (%s)' % (text, TIMEOUT, self.p.args[0]))
            chunk = os.read(self.p.stdout.fileno(), 65536)
            if not chunk:
                raise SystemExit('bench: %s ended before "%s"' % (self.p.args[0], text))
            self.buf += chunk

    def send(self, line):
        self.p.stdin.write(line.encode() + b'\n')

    def first_answer(self):
        """Seconds from process start until the guest echoes a line: a line "a" is written
        every 2 ms until one comes back (QEMU drops console input that arrives before an
        incoming migration has finished; msivm would keep it)."""
        end = time.monotonic() + TIMEOUT
        while time.monotonic() < end:
            self.p.stdin.write(b'a\n')
            if select.select([self.p.stdout], [], [], 0.002)[0]:
                chunk = os.read(self.p.stdout.fileno(), 65536)
                if not chunk:
                    break
                self.buf += chunk
                for line in self.buf.split(b'\n')[:-1]:
                    if line.startswith(b'probe: echo') and b'ready' not in line:
                        return time.monotonic() - self.t0
        raise SystemExit('bench: %s never answered its console' % self.p.args[0])

    def quit(self, status=5):
        self.send('quit')
        rc = self.p.wait(TIMEOUT)
        if rc != status:
            raise SystemExit('bench: %s exited %d, expected %d' % (self.p.args[0], rc, status))


def disk_kib(path):
    return os.stat(path).st_blocks // 2


def pss_kib(pid):
    with open('/proc/%d/smaps_rollup' % pid) as f:
        for line in f:
            if line.startswith('Pss:'):
                return int(line.split()[1])
    return 0


def msivm_run(d, i):
    api = os.path.join(d, 'api.sock')
    st, mem = os.path.join(d, 'm.state'), os.path.join(d, 'm.mem')
    for p in (api, st, mem):
        if os.path.exists(p):
            os.unlink(p)
    g = Guest([MSIVM, 'run', '--kernel', PROBE, '--rng', '', '--cmdline', 'echo exit=5', '--serial',
               'tty', '--api-socket', api], os.path.join(d, 'msivm-cold.err'))
    cold = g.wait_line('probe: echo ready')
    t = time.monotonic()
    subprocess.run([MSIVM, 'remote', '--api-socket', api, 'snapshot', '--state', st, '--mem', mem],
                   check=True, stdout=subprocess.DEVNULL)
    save = time.monotonic() - t
    g.quit()
    r = Guest([MSIVM, 'run', '--restore', 'state=%s,mem=%s' % (st, mem), '--serial', 'tty'],
              os.path.join(d, 'msivm-restore.err'))
    restore = r.first_answer()
    r.quit()
    return dict(cold=cold, save=save, restore=restore, state_kib=disk_kib(st),
                mem_kib=disk_kib(mem))


def qemu_cmd(mon, *extra):
    return QEMU_BASE + ['-monitor', 'unix:%s,server=on,wait=off' % mon] + list(extra)


def monitor(path, cmd):
    s = socket.socket(socket.AF_UNIX)
    s.connect(path)
    s.settimeout(TIMEOUT)
    out = b''
    while not out.endswith(b'(qemu) '):
        out += s.recv(4096)
    s.sendall(cmd.encode() + b'\n')
    out = b''
    while not out.endswith(b'(qemu) '):
        out += s.recv(4096)
    s.close()
    return out.decode(errors='replace')


def qemu_run(d, i):
    mon, mig = os.path.join(d, 'q.mon'), os.path.join(d, 'q.mig')
    for p in (mon, mig):
        if os.path.exists(p):
            os.unlink(p)
    g = Guest(qemu_cmd(mon), os.path.join(d, 'qemu-cold.err'))
    cold = g.wait_line('probe: echo ready')
    t = time.monotonic()
    monitor(mon, 'migrate "exec:cat > %s"' % mig)
    while 'Migration status: completed' not in monitor(mon, 'info migrate'):
        if time.monotonic() - t > TIMEOUT:
            raise SystemExit('bench: QEMU migration did not complete')
        time.sleep(0.005)
    save = time.monotonic() - t
    g.p.kill()  # after a migration the source is stopped: no quit on its console
    g.p.wait()
    os.unlink(mon)
    r = Guest(qemu_cmd(mon, '-incoming', 'exec:cat %s' % mig), os.path.join(d, 'qemu-restore.err'))
    restore = r.first_answer()
    r.quit(11)  # isa-debug-exit: (5 << 1) | 1
    return dict(cold=cold, save=save, restore=restore, state_kib=disk_kib(mig), mem_kib=0)


def clones(d, n):
    """n restores of one msivm snapshot at once: each one's PSS once it answered."""
    st, mem = os.path.join(d, 'm.state'), os.path.join(d, 'm.mem')
    gs = [Guest([MSIVM, 'run', '--restore', 'state=%s,mem=%s' % (st, mem), '--serial', 'tty'],
                os.path.join(d, 'clone%d.err' % k)) for k in range(n)]
    for k, g in enumerate(gs):
        g.send('clone%d' % k)
        g.wait_line('probe: echo clone%d' % k)
    pss = [pss_kib(g.p.pid) for g in gs]
    for g in gs:
        g.quit()
    cold = Guest([MSIVM, 'run', '--kernel', PROBE, '--rng', '', '--cmdline', 'echo exit=5',
                  '--serial', 'tty'], os.path.join(d, 'cold.err'))
    cold.wait_line('probe: echo ready')
    cold_pss = pss_kib(cold.p.pid)
    cold.quit()
    return pss, cold_pss


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument('--runs', type=int, default=5)
    ap.add_argument('--clones', type=int, default=4)
    ap.add_argument('--out', default=os.path.join(ROOT, 'build/bench'))
    a = ap.parse_args()
    os.makedirs(a.out, exist_ok=True)
    qemu = shutil.which('qemu-system-x86_64') is not None
    res = {'msivm': [], 'qemu': []}
    for i in range(a.runs):
        print('\r  run %d/%d' % (i + 1, a.runs), end='', file=sys.stderr, flush=True)
        res['msivm'].append(msivm_run(a.out, i))  # interleaved: A B A B
        if qemu:
            res['qemu'].append(qemu_run(a.out, i))
    print('\r', end='', file=sys.stderr)
    med = lambda v, k: statistics.median(r[k] for r in v)
    rng = lambda v, k: '%.1f-%.1f' % (min(r[k] for r in v) * 1e3, max(r[k] for r in v) * 1e3)
    print('snapshot and restore of the probe guest (256 MiB, echo mode), %d runs each, median [min-max]'
          % a.runs)
    print('  %-6s %-24s %-24s %-24s %10s %10s' % ('vmm', 'cold start to ready ms', 'save ms',
                                                  'restore to answer ms', 'state KiB', 'mem KiB'))
    for v in ('msivm', 'qemu'):
        if not res[v]:
            continue
        r = res[v]
        print('  %-6s %-24s %-24s %-24s %10d %10d' % (
            v, '%.1f [%s]' % (med(r, 'cold') * 1e3, rng(r, 'cold')),
            '%.1f [%s]' % (med(r, 'save') * 1e3, rng(r, 'save')),
            '%.1f [%s]' % (med(r, 'restore') * 1e3, rng(r, 'restore')),
            med(r, 'state_kib'), med(r, 'mem_kib')))
    m = res['msivm']
    print('  msivm restore / msivm cold start: x%.2f' % (med(m, 'restore') / med(m, 'cold')))
    if res['qemu']:
        print('  msivm restore / QEMU -incoming restore: x%.2f' %
              (med(m, 'restore') / med(res['qemu'], 'restore')))
    if a.clones:
        pss, cold_pss = clones(a.out, a.clones)
        print('  %d msivm restores at once: PSS %s KiB each (%d in all); one cold-booted msivm: %d KiB'
              % (a.clones, ','.join(str(p) for p in pss), sum(pss), cold_pss))


if __name__ == '__main__':
    main()
