#!/usr/bin/env python3
# check_verdicts: runs hmpi-opify on one corpus program and compares its verdict for
# every send/receive buffer with the `/* expect: ... */` comment on the call's line.
"""usage: check_verdicts.py PYTHON TOOL FILE.c [compile flags...]"""

import re
import subprocess
import sys

EXPECT = re.compile(r'/\* expect: (sender|receiver) (fits|fails)(?:: ([^*]*?))? \*/')
REPORT = re.compile(r"^(.*?):(\d+):(\d+): (?:note|warning): buffer '.*' in (\w+) "
                    r"(fits|does not fit) the (sender|receiver) pattern(?:: (.*))?$")


def main(argv):
    python, tool, path = argv[1:4]
    flags = argv[4:]
    expect = {}
    with open(path) as f:
        for no, line in enumerate(f, 1):
            m = EXPECT.search(line)
            if m:
                expect[no] = (m.group(1), m.group(2) == 'fits', (m.group(3) or '').strip())
    if not expect:
        print('no expectations in %s' % path)
        return 1
    p = subprocess.run([python, tool, path, '--'] + flags, capture_output=True, text=True)
    sys.stdout.write(p.stdout)
    sys.stderr.write(p.stderr)
    if p.returncode != 0:
        print('hmpi-opify exited with %d' % p.returncode)
        return 1
    got = {}
    for line in p.stdout.splitlines():
        m = REPORT.match(line)
        if m:
            got[int(m.group(2))] = (m.group(6), m.group(5) == 'fits', m.group(7) or '')
    bad = 0
    for no, (role, fits, why) in sorted(expect.items()):
        g = got.pop(no, None)
        if g is None:
            print('line %d: no verdict reported' % no)
            bad += 1
        elif g[0] != role or g[1] != fits or (why and why not in g[2]):
            print('line %d: expected %s %s%s, got %s %s: %s' %
                  (no, role, 'fits' if fits else 'fails', (': ' + why) if why else '',
                   g[0], 'fits' if g[1] else 'fails', g[2]))
            bad += 1
    for no in sorted(got):
        print('line %d: verdict reported without an expectation' % no)
        bad += 1
    print('%d buffers checked, %d mismatches' % (len(expect), bad))
    return 1 if bad else 0


if __name__ == '__main__':
    sys.exit(main(sys.argv))
