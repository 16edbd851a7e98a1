#!/usr/bin/env python3
"""Fills translations into a gettext catalog: po-fill.py CATALOG.po
TRANSLATIONS.tsv, where each line of the TSV is msgid<TAB>msgstr. The
entry with that msgid gets the msgstr and loses its fuzzy mark; other
entries are left as they are. For maintainers adding strings (the po-de
and po-ja tests want complete catalogs); needs only Python 3.
"""
import re
import sys


def po_string(s):
    return '"' + s.replace('\\', '\\\\').replace('"', '\\"').replace('\n', '\\n') + '"'


def unquote(lines):
    return ''.join(bytes(l.strip()[1:-1], 'utf-8').decode('unicode_escape').encode('latin-1').decode('utf-8')
                   for l in lines)


def main(po, tsv):
    want = {}
    for line in open(tsv, encoding='utf-8'):
        if line.strip():
            k, v = line.rstrip('\n').split('\t')
            want[k] = v
    entries = open(po, encoding='utf-8').read().split('\n\n')
    done = set()
    for i, e in enumerate(entries):
        lines = e.split('\n')
        ids = [n for n, l in enumerate(lines) if l.startswith('msgid ')]
        strs = [n for n, l in enumerate(lines) if l.startswith('msgstr ')]
        if not ids or not strs:
            continue
        msgid = unquote([lines[ids[0]][6:]] + lines[ids[0] + 1:strs[0]])
        if msgid not in want:
            continue
        head = [l for l in lines[:strs[0]]]
        head = [re.sub(r'^#, fuzzy, ', '#, ', l) for l in head if l.strip() != '#, fuzzy']
        head = [l for l in head if not l.startswith('#| ')]
        entries[i] = '\n'.join(head + ['msgstr ' + po_string(want[msgid])])
        done.add(msgid)
    open(po, 'w', encoding='utf-8').write('\n\n'.join(entries))
    missing = set(want) - done
    for m in missing:
        print('po-fill: no entry %r in %s' % (m, po), file=sys.stderr)
    return 1 if missing else 0


if __name__ == '__main__':
    sys.exit(main(sys.argv[1], sys.argv[2]))
