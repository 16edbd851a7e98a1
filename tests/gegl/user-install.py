#!/usr/bin/env python3
"""The user install and its removal (meson setup -Duser_install=true,
meson install, tools/quickstart.sh --uninstall), without root, into a
made-up home: a fresh build folder is configured for that home, its
installed targets are stood in for by small files (building them again
would take minutes; the test-op and gimp suites test the real ones), and
meson install runs. Checks:

- every installed file is under the home, and there are the CLI, the
  GEGL operation, the translations, the documentation and the GIMP 2.10
  plug-in (in the profile's plug-ins folder, where a GIMP 2.10 build is
  configured);
- the compiled-in translation folder is the installed one;
- run as root for a home that belongs to someone else (sudo meson
  install), nothing under the home belongs to root afterwards;
- --uninstall removes every file and the project's own folders.

Usage: user-install.py SOURCE_DIR WORK_DIR
"""
import json
import os
import shutil
import subprocess
import sys

src, work = sys.argv[1:3]
failures = 0


def check(cond, what):
    global failures
    if not cond:
        failures += 1
        print("FAIL:", what)


def run(cmd, env, **kw):
    r = subprocess.run(cmd, env=env, capture_output=True, text=True, **kw)
    if r.returncode != 0:
        print(r.stdout[-3000:], r.stderr[-3000:])
        sys.exit("FAIL: %s exited %d" % (" ".join(cmd), r.returncode))
    return r


def files_under(root):
    out = []
    for d, dirs, files in os.walk(root):
        out += [os.path.join(d, f) for f in files]
    return out


def one_install(home_owner):
    shutil.rmtree(work, ignore_errors=True)
    home = os.path.join(work, "home")
    profile = os.path.join(home, ".config", "GIMP", "2.10")
    os.makedirs(profile)  # as if GIMP 2.10 had run: no GIMP start here
    if home_owner is not None:
        for d, dirs, files in os.walk(work):
            os.chown(d, home_owner, home_owner)
    env = {k: v for k, v in os.environ.items()
           if k not in ("XDG_DATA_HOME", "XDG_CONFIG_HOME", "GIMP2_DIRECTORY", "DESTDIR")}
    env["HOME"] = home
    build = os.path.join(work, "build")
    run(["meson", "setup", build, src, "-Duser_install=true", "-Dcuda=disabled", "-Dmpi=disabled"], env)
    with open(os.path.join(build, "meson-info", "intro-targets.json")) as f:
        targets = json.load(f)
    for t in targets:
        if t["installed"]:
            for fn in t["filename"]:
                os.makedirs(os.path.dirname(fn), exist_ok=True)
                with open(fn, "w") as f:
                    f.write("stand-in for %s\n" % t["name"])
    run(["meson", "install", "-C", build, "--no-rebuild"], env)
    manifest = os.path.join(home, ".local", "share", "gegl-halftone", "installed-files")
    check(os.path.exists(manifest), "no manifest %s" % manifest)
    listed = open(manifest).read().split("\n")[:-1] if os.path.exists(manifest) else []
    for p in listed:
        check(p.startswith(home + "/"), "installed outside the home: %s" % p)
        check(os.path.exists(p), "listed but not there: %s" % p)
    for want in ("/.local/bin/halftone", "/.local/share/gegl-0.4/plug-ins/halftone-dither.so",
                 "/.local/share/locale/de/LC_MESSAGES/gegl-halftone.mo",
                 "/.local/share/locale/ja/LC_MESSAGES/gegl-halftone.mo"):
        check(home + want in listed, "not installed: ~%s" % want)
    gimp = any(t["name"] == "halftone-gimp" for t in targets)
    if gimp:
        check(os.path.join(profile, "plug-ins", "halftone-gimp", "halftone-gimp") in listed,
              "the GIMP 2.10 plug-in is not in the profile's plug-ins folder")
        check(home + "/.local/share/doc/gegl-halftone/html/gimp.html" in listed, "no documentation for Help")
    conf = open(os.path.join(build, "ht-config.h")).read()
    check('HT_LOCALEDIR "%s/.local/share/locale"' % home in conf, "HT_LOCALEDIR is not the installed folder")
    if home_owner is not None:
        for p in files_under(home) + [d for d, _, _ in os.walk(home)]:
            check(os.lstat(p).st_uid == home_owner, "owned by root after a root install: %s" % p)
    before = set(files_under(home))
    run([sys.executable, os.path.join(src, "tools", "user-install.py"), "--uninstall", manifest], env)
    left = set(files_under(home))
    check(not (left & set(listed)), "left after --uninstall: %s" % sorted(left & set(listed)))
    for d, dirs, files in os.walk(home):
        check(os.path.basename(d) not in ("gegl-halftone", "halftone-gimp"), "own folder left: %s" % d)
    print("%s install: %d files installed, %d left after --uninstall (GIMP 2.10 plug-in: %s)"
          % ("root" if home_owner is not None else "user", len(listed), len(left), "yes" if gimp else "not built"))
    check(before - left == set(listed), "--uninstall removed other files too")


one_install(None)
if os.geteuid() == 0:
    one_install(65534)  # sudo meson install for a user's home
else:
    print("not root: the sudo case is left out")
shutil.rmtree(work, ignore_errors=True)
print("user install:", "FAIL" if failures else "OK")
sys.exit(1 if failures else 0)
