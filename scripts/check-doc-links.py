#!/usr/bin/env python3
"""Checks the relative links of README.md, docs/ and benchmarks/: every target file exists and
every #anchor is a heading of the target page as GitHub slugs it (lower case; letters, marks,
decimal digits, '_', '-' and spaces kept, spaces to '-'; a repeated heading gets -1, -2, ...) or
an explicit <a name/id>. Links inside code are skipped. Prints each broken link as FILE:LINE and
exits 1 if there is one. Usage: python3 scripts/check-doc-links.py [REPO_ROOT]"""
import glob
import os
import re
import sys
import unicodedata
from urllib.parse import unquote

root = sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(__file__), "..")
os.chdir(root)
files = sorted(set(glob.glob('docs/**/*.md', recursive=True) + ['README.md'] + glob.glob('benchmarks/*.md')))

def strip_code(text):
    out, fence = [], None
    for line in text.split('\n'):
        m = re.match(r'^\s*(```+|~~~+)', line)
        if m:
            if fence is None: fence = m.group(1)[:3]
            elif line.strip().startswith(fence): fence = None
            out.append(''); continue
        out.append('' if fence else line)
    return out

def slug(h):
    h = re.sub(r'!\[([^\]]*)\]\([^)]*\)', r'\1', h)
    h = re.sub(r'\[([^\]]*)\]\([^)]*\)', r'\1', h)
    h = re.sub(r'<[^>]+>', '', h)
    h = h.replace('`', '').strip().lower()
    h = ''.join(c for c in h if c in ' -_' or (unicodedata.category(c)[0] in 'LM' or unicodedata.category(c) in ('Nd', 'Pc')))
    return h.replace(' ', '-')

anchors = {}
def page_anchors(p):
    if p in anchors: return anchors[p]
    seen, s = {}, set()
    for line in strip_code(open(p, encoding='utf-8').read()):
        m = re.match(r'^(#{1,6})\s+(.*?)\s*#*\s*$', line)
        if m:
            b = slug(m.group(2)); n = seen.get(b, 0); seen[b] = n + 1
            s.add(b if n == 0 else f'{b}-{n}')
        for m in re.finditer(r'<a\s+(?:name|id)="([^"]+)"', line): s.add(m.group(1))
    anchors[p] = s; return s

bad = 0; count = 0
for f in files:
    lines = strip_code(open(f, encoding='utf-8').read())
    text = '\n'.join(re.sub(r'`[^`\n]*`', lambda m: ' ' * len(m.group(0)), l) for l in lines)
    targets = [(m.group(1), m.start()) for m in re.finditer(r'\]\(\s*<?([^)\s>]+)>?(?:\s+"[^"]*")?\s*\)', text)]
    targets += [(m.group(1), m.start()) for m in re.finditer(r'^\s*\[[^\]]+\]:\s*(\S+)', text, re.M)]
    for t, pos in targets:
        if re.match(r'^[a-z]+:', t) or t.startswith('//'): continue
        count += 1
        lineno = text.count('\n', 0, pos) + 1
        path, _, frag = t.partition('#')
        tp = os.path.normpath(os.path.join(os.path.dirname(f), unquote(path))) if path else f
        if not os.path.exists(tp):
            print(f'{f}:{lineno}: missing file {t}'); bad += 1; continue
        if frag and tp.endswith('.md') and frag not in page_anchors(tp):
            print(f'{f}:{lineno}: missing anchor {t}'); bad += 1
print(f'{count} relative links checked in {len(files)} files, {bad} broken')
sys.exit(1 if bad else 0)
