#!/usr/bin/env python3
"""The dialogs' Help pages: every page that docs/meson.build installs as
HTML is made by tools/md2html.py into well-formed HTML (every tag closed
in order), with its headings, lists, tables and code blocks, and every
local link and image it holds points at a page or picture installed
beside it (a link to another page's .md becomes its .html).

Usage: help-html.py SOURCE_ROOT WORKDIR
"""
import html.parser
import os
import re
import subprocess
import sys

VOID = {'img', 'meta', 'br', 'hr'}


class Checker(html.parser.HTMLParser):
    def __init__(self):
        super().__init__()
        self.stack, self.errors, self.targets, self.tags = [], [], [], set()

    def handle_starttag(self, tag, attrs):
        self.tags.add(tag)
        a = dict(attrs)
        if tag == 'a' and 'href' in a:
            self.targets.append(a['href'])
        if tag == 'img':
            self.targets.append(a.get('src', ''))
        if tag not in VOID:
            self.stack.append(tag)

    def handle_endtag(self, tag):
        if not self.stack or self.stack[-1] != tag:
            self.errors.append('</%s> closes %s' % (tag, self.stack[-1] if self.stack else 'nothing'))
        else:
            self.stack.pop()


def main(root, work):
    os.makedirs(work, exist_ok=True)
    meson = open(os.path.join(root, 'docs', 'meson.build')).read()
    pages = re.findall(r"'(\w+)'", re.search(r'doc_pages = \[([^\]]*)\]', meson).group(1))
    pictures = re.findall(r"'([\w-]+\.png)'", meson)
    installed = set(p + '.html' for p in pages) | set(pictures)
    failures = 0
    for page in pages:
        out = os.path.join(work, page + '.html')
        subprocess.run([sys.executable, os.path.join(root, 'tools', 'md2html.py'),
                        os.path.join(root, 'docs', page + '.md'), out], check=True, timeout=60)
        c = Checker()
        c.feed(open(out, encoding='utf-8').read())
        problems = c.errors + (['unclosed: ' + ' '.join(c.stack)] if c.stack else [])
        for t in c.targets:
            if re.match(r'^[a-z]+:', t) or t.startswith('#'):
                continue
            name = t.split('#')[0]
            if name not in installed:
                problems.append('%s is not installed beside it' % t)
        md = open(os.path.join(root, 'docs', page + '.md'), encoding='utf-8').read()
        for tag, what in (('h2', '\n## '), ('table', '\n|'), ('pre', '\n    '), ('li', '\n- ')):
            if what in md and tag not in c.tags:
                problems.append('no <%s> though the page has %r' % (tag, what.strip()))
        for p in problems:
            print('FAIL %s.html: %s' % (page, p))
        failures += len(problems)
        print('%s.html: %s' % (page, 'OK' if not problems else '%d problem(s)' % len(problems)))
    return 1 if failures else 0


if __name__ == '__main__':
    sys.exit(main(sys.argv[1], sys.argv[2]))
