import json
import pathlib
import sys

from pipeline.normalize import detect_script, to_target

roots = sys.argv[2:] or ['tests/fixtures/real/test']  # folders of real articles
files = [p for r in roots for p in sorted(pathlib.Path(r).rglob('*')) if p.suffix in ('.md', '.txt', '.html', '.csv', '.jsonl') and p.name != 'SOURCES.md']
out = []
for p in files:
    t = p.read_text(encoding='utf-8', errors='replace')
    s = detect_script(t)
    if s == 'zh-Hant':
        out.append({'path': str(p), 'dir': 't2s', 'src': t, 'ours': to_target(t, 'zh-Hans')})
    elif s == 'zh-Hans':
        out.append({'path': str(p), 'dir': 's2t', 'src': t, 'ours': to_target(t, 'zh-Hant')})
json.dump(out, open(sys.argv[1], 'w'), ensure_ascii=False)
print(len(out), {d: sum(o['dir'] == d for o in out) for d in ('t2s', 's2t')})
