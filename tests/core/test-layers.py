#!/usr/bin/env python3
"""The layers that an include can cross (docs/architecture.md), checked
by reading every quoted #include:

  cuda/        the module includes, of core/, only the headers the CPU
               and the GPU share (core/shared/) and, in cuda/module.h
               alone, the public header core/halftone.h, in whose types
               the module ABI is written;
  core/shared/ those headers include only each other and core/halftone.h,
               so the GPU sees nothing else of core/ through them either;
  core/        the module ABI (cuda/module.h) is included by the loader,
               the implementation table and the families' host sides
               (<family>/gpu.c) only.

An include is resolved as the compilers resolve it: from the including
file's folder, then from the folders the build passes with -I (none for
nvcc, cuda/meson.build; core/ for the C code). In cuda/ and core/shared/
one that resolves nowhere fails too, so that a new -I cannot hide a path
from this test.

Usage: test-layers.py SOURCE_ROOT"""
import os
import re
import sys

INCLUDE = re.compile(r'^\s*#\s*include\s*"([^"]+)"', re.M)
SOURCES = (".c", ".h", ".cu", ".cuh")


def files_under(root, folder):
    for dirpath, dirnames, filenames in os.walk(os.path.join(root, folder)):
        dirnames.sort()
        for name in sorted(filenames):
            if name.endswith(SOURCES):
                yield os.path.join(dirpath, name)


def includes(path, search):
    """(line, spelled, resolved or None) of each quoted #include."""
    text = open(path, encoding="utf-8").read()
    for m in INCLUDE.finditer(text):
        line = text.count("\n", 0, m.start()) + 1
        found = None
        for base in [os.path.dirname(path)] + search:
            cand = os.path.normpath(os.path.join(base, m.group(1)))
            if os.path.isfile(cand):
                found = cand
                break
        yield line, m.group(1), found


def main():
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    root = os.path.realpath(sys.argv[1])
    core, cuda = os.path.join(root, "core"), os.path.join(root, "cuda")
    shared = os.path.join(core, "shared")
    public = os.path.join(core, "halftone.h")
    module_h = os.path.join(cuda, "module.h")
    rel = lambda p: os.path.relpath(p, root)
    inside = lambda p, d: p.startswith(d + os.sep)
    bad = []
    checked = 0

    for path in files_under(root, "cuda"):
        for line, spelled, found in includes(path, []):
            checked += 1
            where = "%s:%d: #include \"%s\"" % (rel(path), line, spelled)
            if found is None:
                bad.append(where + " resolves to no file")
            elif inside(found, cuda):
                pass
            elif inside(found, shared):
                pass
            elif found == public and path == module_h:
                pass
            elif found == public:
                bad.append(where + ": core/halftone.h reaches cuda/ through cuda/module.h only")
            else:
                bad.append(where + " (%s): cuda/ includes of core/ only core/shared/ (and, in module.h, "
                           "core/halftone.h)" % rel(found))

    for path in files_under(root, os.path.join("core", "shared")):
        for line, spelled, found in includes(path, []):
            checked += 1
            where = "%s:%d: #include \"%s\"" % (rel(path), line, spelled)
            if found is None:
                bad.append(where + " resolves to no file")
            elif not (inside(found, shared) or found == public):
                bad.append(where + " (%s): the shared headers include only each other and core/halftone.h"
                           % rel(found))

    hosts = {os.path.join(core, p) for p in ("cuda_loader.c", "impl_cuda.c")}
    for path in files_under(root, "core"):
        for line, spelled, found in includes(path, [core]):
            if found != module_h:
                continue
            checked += 1
            family_host = os.path.basename(path) == "gpu.c" and os.path.dirname(os.path.dirname(path)) == core
            if path not in hosts and not family_host:
                bad.append("%s:%d: #include \"%s\": cuda/module.h is included by cuda_loader.c, impl_cuda.c and "
                           "the families' gpu.c only" % (rel(path), line, spelled))

    for b in bad:
        print("FAIL " + b)
    if checked == 0:
        print("FAIL no #include found under %s: wrong source root?" % root)
        return 1
    print("%d includes checked, %d outside the layers" % (checked, len(bad)))
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
