#!/usr/bin/env python3
"""ktrace-report.py: reads an L1 KVM trace kept by the Linux lab (LINUX_LAB_KTRACE=1: tests/linux/l1-init's
ktrace-N.txt.gz beside l1-kallsyms.txt.gz) or by check-linux (LINUX_CHECK_KTRACE=1: results/CFG/ktrace.txt.gz
of a configuration that failed, beside that L1's l1-kallsyms.txt.gz) and says, per L2 vCPU thread, where its last VM entries went
and which interrupts L1's KVM injected there: an interrupt delivered on the first instruction of a system
call (entry_SYSCALL_64, where IF is 0 and RSP is still the user's) is the double fault of issue 29.

  tests/linux/ktrace-report.py DIR_OR_TRACE [--last N]
"""
import gzip, os, re, sys
from collections import defaultdict

def opener(p):
    return gzip.open(p, 'rt', errors='replace') if p.endswith('.gz') else open(p, errors='replace')

def symbols(path):
    """name -> address of text symbols from a kallsyms dump (L1's: the same kernel image as L2)."""
    syms = {}
    with opener(path) as f:
        for line in f:
            parts = line.split()
            if len(parts) >= 3 and parts[1] in 'tT' and len(parts) == 3:
                syms.setdefault(parts[2], int(parts[0], 16))
    return syms

class Symbolizer:
    """L2 RIP -> symbol+offset: L2's _text is found as the 2 MiB step (KASLR's) at which the RIPs
    of HLT exits land in a *halt* function."""
    def __init__(self, syms, hlt_rips):
        import bisect
        self.bisect = bisect
        self.text = syms.get('_text')
        self.rel = sorted((a - self.text, n) for n, a in syms.items()
                          if self.text and 0 <= a - self.text < 0x4000000)
        self.keys = [r[0] for r in self.rel]
        self.base = None
        for rip in hlt_rips[:1]:
            for k in range(-1024, 1024):
                base = (rip & ~((1 << 21) - 1)) + k * (1 << 21)
                name = self.name(rip, base)
                if name and 'halt' in name.split('+')[0]:
                    self.base = base
                    break
    def name(self, rip, base=None):
        base = self.base if base is None else base
        if base is None or not self.rel:
            return ''
        off = rip - base
        i = self.bisect.bisect_right(self.keys, off) - 1
        if i < 0 or off - self.rel[i][0] > 0x10000:
            return ''
        return f'{self.rel[i][1]}+{off - self.rel[i][0]:#x}'

LINE = re.compile(r'^\s*(?P<task>.+?)-(?P<pid>\d+)\s+\[(?P<cpu>\d+)\]\s+\S+\s+(?P<ts>[\d.]+):\s+(?P<ev>\w+):\s+(?P<rest>.*)$')
RIP = re.compile(r'rip 0x([0-9a-f]+)')

def main():
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    arg = sys.argv[1]
    last = int(sys.argv[sys.argv.index('--last') + 1]) if '--last' in sys.argv else 12
    traces = [arg] if os.path.isfile(arg) else sorted(
        os.path.join(arg, f) for f in os.listdir(arg) if f.startswith('ktrace'))
    ksyms = os.path.join(arg if os.path.isdir(arg) else os.path.dirname(arg), 'l1-kallsyms.txt.gz')
    syms = symbols(ksyms) if os.path.exists(ksyms) else {}
    mask = (1 << 21) - 1  # KASLR moves the kernel in 2 MiB steps
    by_off = {}
    for name in ('entry_SYSCALL_64', 'entry_SYSCALL_64_safe_stack', 'entry_SYSCALL_64_after_hwframe',
                 'asm_exc_double_fault', 'asm_exc_page_fault', 'native_irq_return_iret'):
        if name in syms:
            by_off[syms[name] & mask] = name
    sysent = syms.get('entry_SYSCALL_64')
    for t in traces:
        print(f'== {t}')
        events = defaultdict(list)  # thread -> [(ts, ev, rest)]
        with opener(t) as f:
            for line in f:
                m = LINE.match(line)
                if m:
                    events[f"{m['task']}-{m['pid']}"].append((float(m['ts']), m['ev'], m['rest']))
        hlt = [int(RIP.search(e[2]).group(1), 16) for evs in events.values() for e in evs
               if e[1] == 'kvm_exit' and ' reason hlt ' in e[2]]
        sym = Symbolizer(syms, hlt)
        if sym.base is not None:
            print(f'  L2 kernel text at {sym.base:#x} (from its HLT exits)')
        for th, evs in sorted(events.items()):
            if not any(e[1] == 'kvm_entry' for e in evs):
                continue
            entries = [e for e in evs if e[1] == 'kvm_entry']
            at_sys = inj_at_sys = 0
            pending = None
            for ts, ev, rest in evs:
                if ev == 'kvm_inj_virq' or ev == 'kvm_inj_exception':
                    pending = rest
                elif ev == 'kvm_entry':
                    r = RIP.search(rest)
                    if r and sysent is not None and (int(r.group(1), 16) & mask) == (sysent & mask):
                        at_sys += 1
                        if pending:
                            inj_at_sys += 1
                            print(f'  {th} {ts:.6f}: entry at entry_SYSCALL_64 right after an injection ({pending})')
                    pending = None
            print(f'  {th}: {len(entries)} entries, {at_sys} at entry_SYSCALL_64, {inj_at_sys} of them with an injection')
            print(f'  {th}: its last {last} events:')
            for ts, ev, rest in evs[-last:]:
                r = RIP.search(rest)
                where = (sym.name(int(r.group(1), 16)) or by_off.get(int(r.group(1), 16) & mask, '')) if r else ''
                rest = re.sub(r' info1 \S+ info2 (\S+)', lambda m: f' gpa {m.group(1)}' if 'npf' in rest else '', rest)
                print(f'    {ts:.6f} {ev}: {rest[:120]}{"  <" + where + ">" if where else ""}')
                if ev == 'kvm_exit' and ' reason shutdown ' in rest:
                    ii = re.search(r'intr_info 0x([0-9a-f]+)', rest)
                    if ii and int(ii.group(1), 16) >> 31:
                        v = int(ii.group(1), 16)
                        kind = {0: 'external interrupt', 2: 'NMI', 3: 'exception', 4: 'software interrupt'}.get((v >> 8) & 7, 'event')
                        print(f'      ^ the guest shut down (triple fault) while the CPU delivered {kind} vector {v & 0xff:#x}')

if __name__ == '__main__':
    main()
