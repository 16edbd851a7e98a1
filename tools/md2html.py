#!/usr/bin/env python3
"""The project's Markdown pages as HTML, for the dialogs' Help buttons
(GIMP 2.10 and GIMP 3 open the installed gimp.html in the browser).

Usage: md2html.py INPUT.md OUTPUT.html

It reads the subset of Markdown the project's pages use: # headings,
paragraphs, - and 1. lists (continued by indented lines), ``` and
4-space code blocks, | tables |, > quotes, images, links (a link to
another page.md becomes page.html), `code`, **bold** and *emphasis*.
Written here rather than taken from a Markdown package, so the build
needs nothing beyond Python 3; the output is plain HTML 5 with a small
style sheet, readable without it.
"""
import html
import os
import re
import sys

STYLE = """body{font-family:sans-serif;max-width:52em;margin:2em auto;padding:0 1em;line-height:1.45}
pre{background:#f4f4f4;padding:.6em;overflow-x:auto}code{background:#f4f4f4;padding:0 .2em}
table{border-collapse:collapse}td,th{border:1px solid #bbb;padding:.2em .5em;vertical-align:top}
img{max-width:100%}blockquote{border-left:3px solid #bbb;margin-left:0;padding-left:1em;color:#444}"""


def inline(text):
    """Inline Markdown of one block's text, HTML-escaped. Code spans are
    set aside first (nothing inside them is Markdown) and put back last,
    so a link's text may hold one."""
    codes = []

    def keep(m):
        codes.append('<code>' + html.escape(m.group(2).strip(' ')) + '</code>')
        return '\x00%d\x00' % (len(codes) - 1)
    t = spans(re.sub(r'(`+)(.+?)\1', keep, text))
    return re.sub(r'\x00(\d+)\x00', lambda m: codes[int(m.group(1))], t)


def link_target(url):
    """A link to another page of the docs points at its HTML page; None
    for one outside the docs folder (a source file, BENCHMARKS.md), which
    is not installed: its text stays, without a link."""
    if url.startswith('../'):
        return None
    m = re.match(r'^([^:#?]+)\.md(#.*)?$', url)
    if m:
        return m.group(1) + '.html' + (m.group(2) or '')
    return url


def spans(text):
    t = html.escape(text, quote=False)
    t = re.sub(r'!\[([^\]]*)\]\(([^)\s]+)\)',
               lambda m: '<img src="%s" alt="%s">' % (html.escape(m.group(2)), m.group(1)), t)
    t = re.sub(r'\[([^\]]+)\]\(([^)\s]+)\)',
               lambda m: m.group(1) if link_target(m.group(2)) is None else
               '<a href="%s">%s</a>' % (html.escape(link_target(m.group(2))), m.group(1)), t)
    # no '*' inside: keeps the matching linear on long paragraphs
    t = re.sub(r'\*\*([^*]+)\*\*', r'<strong>\1</strong>', t)
    t = re.sub(r'(?<![\w*])\*(?=\S)([^*]+)(?<=\S)\*(?![\w*])', r'<em>\1</em>', t)
    return t


def slug(text):
    return re.sub(r'[^\w\- ]', '', text.lower()).strip().replace(' ', '-')


def table(rows):
    cells = [[c.strip() for c in r.strip().strip('|').split('|')] for r in rows]
    head, body = cells[0], [r for r in cells[2:]]
    out = ['<table>', '<tr>' + ''.join('<th>%s</th>' % inline(c) for c in head) + '</tr>']
    out += ['<tr>' + ''.join('<td>%s</td>' % inline(c) for c in r) + '</tr>' for r in body]
    return '\n'.join(out + ['</table>'])


def convert(lines):
    out, i, n = [], 0, len(lines)

    def is_item(line):
        return re.match(r'^(\s*)([-*]|\d+\.)\s+', line)

    while i < n:
        line = lines[i]
        if not line.strip():
            i += 1
        elif line.startswith('```'):
            j = i + 1
            while j < n and not lines[j].startswith('```'):
                j += 1
            out.append('<pre><code>' + html.escape('\n'.join(lines[i + 1:j])) + '</code></pre>')
            i = j + 1
        elif line.startswith('    '):
            j = i
            while j < n and (lines[j].startswith('    ') or not lines[j].strip()):
                j += 1
            while j > i and not lines[j - 1].strip():
                j -= 1
            out.append('<pre><code>' + html.escape('\n'.join(l[4:] for l in lines[i:j])) + '</code></pre>')
            i = j
        elif re.match(r'^#{1,6} ', line):
            level = len(line) - len(line.lstrip('#'))
            text = line[level:].strip()
            out.append('<h%d id="%s">%s</h%d>' % (level, slug(text), inline(text), level))
            i += 1
        elif line.startswith('|') and i + 1 < n and re.match(r'^\|[\s:|-]+\|?\s*$', lines[i + 1]):
            j = i
            while j < n and lines[j].startswith('|'):
                j += 1
            out.append(table(lines[i:j]))
            i = j
        elif line.startswith('>'):
            j = i
            while j < n and lines[j].startswith('>'):
                j += 1
            out.append('<blockquote>' + convert([l[1:].lstrip() if l[1:2] == ' ' else l[1:]
                                                   for l in lines[i:j]]) + '</blockquote>')
            i = j
        elif is_item(line):
            ordered = line.lstrip()[0].isdigit()
            indent = len(is_item(line).group(1))
            more = ' ' * (indent + 2)

            def same_list(k):
                m = is_item(lines[k])
                return m and len(m.group(1)) == indent
            items, j = [], i
            while j < n and same_list(j):
                body = [lines[j][is_item(lines[j]).end():]]
                j += 1
                # the item goes on while lines are indented (or blank before indented ones)
                while j < n and (lines[j].startswith(more) or
                                 (not lines[j].strip() and j + 1 < n and lines[j + 1].startswith(more))):
                    body.append(lines[j][len(more):] if lines[j].startswith(more) else '')
                    j += 1
                items.append(body)
                if j < n and not lines[j].strip() and j + 1 < n and same_list(j + 1):
                    j += 1
            tag = 'ol' if ordered else 'ul'
            parts = []
            for body in items:
                inner = convert(body)
                # a one-paragraph item needs no <p>
                if inner.startswith('<p>') and inner.count('<p>') == 1 and inner.endswith('</p>'):
                    inner = inner[3:-4]
                parts.append('<li>' + inner + '</li>')
            out.append('<%s>\n%s\n</%s>' % (tag, '\n'.join(parts), tag))
            i = j
        else:
            j = i + 1  # at least this line (a '|' line that is not a table)
            while j < n and lines[j].strip() and not re.match(r'^(#{1,6} |```|\||>)', lines[j]) \
                    and not (j > i and is_item(lines[j])):
                j += 1
            out.append('<p>' + inline(' '.join(l.strip() for l in lines[i:j])) + '</p>')
            i = j
    return '\n'.join(out)


def main(argv):
    if len(argv) != 3:
        print(__doc__.strip().splitlines()[2], file=sys.stderr)
        return 2
    with open(argv[1], encoding='utf-8') as f:
        lines = f.read().splitlines()
    title = next((l.lstrip('#').strip() for l in lines if l.startswith('# ')), os.path.basename(argv[1]))
    body = convert(lines)
    page = ('<!DOCTYPE html>\n<html><head><meta charset="utf-8">\n<title>%s</title>\n<style>%s</style>\n'
            '</head><body>\n%s\n</body></html>\n') % (html.escape(title), STYLE, body)
    tmp = argv[2] + '.tmp'
    with open(tmp, 'w', encoding='utf-8') as f:
        f.write(page)
    os.replace(tmp, argv[2])
    return 0


if __name__ == '__main__':
    sys.exit(main(sys.argv))
