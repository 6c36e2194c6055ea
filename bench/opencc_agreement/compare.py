import difflib
import json
import re
import sys
from collections import Counter

import opencc

data = json.load(open(sys.argv[1]))
cc = {'t2s': opencc.OpenCC('t2s.json'), 's2t': opencc.OpenCC('s2t.json')}
han = re.compile(r'[\u3400-\u9fff]')
tot = {'t2s': [0, 0], 's2t': [0, 0]}
diffs = []
for d in data:
    theirs = cc[d['dir']].convert(d['src'])
    ours = d['ours']
    n = sum(1 for ch in theirs if han.match(ch))
    bad = 0
    if len(ours) == len(theirs):
        for a, b in zip(ours, theirs, strict=True):
            if a != b and (han.match(a) or han.match(b)):
                bad += 1
                diffs.append((d['dir'], b, a))
    else:
        sm = difflib.SequenceMatcher(None, ours, theirs, autojunk=False)
        for op, i1, i2, j1, j2 in sm.get_opcodes():
            if op != 'equal':
                k = sum(1 for ch in theirs[j1:j2] if han.match(ch)) or sum(1 for ch in ours[i1:i2] if han.match(ch))
                bad += k
                diffs.append((d['dir'], theirs[j1:j2], ours[i1:i2]))
    tot[d['dir']][0] += n
    tot[d['dir']][1] += bad
for k, (n, bad) in tot.items():
    print(k, 'han chars', n, 'differ', bad, 'agreement', round(1 - bad / max(n, 1), 5))
print(Counter(diffs).most_common(25))
