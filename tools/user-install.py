#!/usr/bin/env python3
"""Finishes and undoes a user install (meson setup -Duser_install=true).

`meson install` runs this after copying the files (meson.build passes
HOME, MANIFEST, GIMP2_PROFILE, STAGED_GIMP_PLUGIN_DIR):

- the GIMP 2.10 plug-in goes from where Meson put it (under
  ~/.local/lib/.../gegl-halftone/gimp-2.10) into the GIMP 2.10 profile's
  plug-ins folder; where the profile does not exist yet GIMP 2.10 is
  started once to set it up (GIMP sets a profile up only where its folder
  is missing, so the folder must not be made before);
- every installed file is listed in MANIFEST
  (~/.local/share/gegl-halftone/installed-files);
- run as root (sudo meson install) for a home that is someone else's,
  every installed file and every folder made for one under that home is
  given back to the home's owner: no root-owned files in ~.

`user-install.py --uninstall [MANIFEST]` (what `tools/quickstart.sh
--uninstall` runs) removes every file the manifest lists, the project's
own folders once empty (halftone-gimp, gegl-halftone, gimp-2.10), and the
manifest; shared folders (~/.local/bin, locale folders, GEGL's plug-ins
folder) stay. It needs no build folder.
"""
import json
import os
import shutil
import subprocess
import sys

OWN_DIRS = ("halftone-gimp", "gegl-halftone", "gimp-2.10")


def default_manifest():
    data = os.environ.get("XDG_DATA_HOME") or os.path.join(os.path.expanduser("~"), ".local", "share")
    return os.path.join(data, "gegl-halftone", "installed-files")


def give_back(path, home, uid, gid):
    """Gives `path` and its folders up to `home` to uid:gid where root has them."""
    p = path
    while p.startswith(home + "/"):
        try:
            st = os.lstat(p)
        except FileNotFoundError:
            break
        if st.st_uid == 0:
            os.lchown(p, uid, gid)
        p = os.path.dirname(p)


def install(home, manifest, profile, staged):
    destdir = os.environ.get("DESTDIR", "")
    build = os.environ["MESON_BUILD_ROOT"]
    with open(os.path.join(build, "meson-info", "intro-installed.json")) as f:
        placed = sorted(set(json.load(f).values()))
    st = os.stat(home) if os.path.isdir(home) else None
    uid, gid = (st.st_uid, st.st_gid) if st else (os.getuid(), os.getgid())
    for_other = os.geteuid() == 0 and uid != 0

    if staged and destdir:
        print("user-install: DESTDIR is set: the GIMP 2.10 plug-in stays in %s" % staged)
    elif staged:
        if not os.path.isdir(profile):
            gimp = shutil.which("gimp-console-2.10")
            if gimp:
                print("user-install: starting GIMP 2.10 once to set up its profile %s (about half a minute)" % profile)
                env = dict(os.environ, HOME=home, GIMP2_DIRECTORY=profile)
                subprocess.run([gimp, "-i", "-b", "(gimp-quit 0)"], env=env, stdin=subprocess.DEVNULL,
                               stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, timeout=900,
                               user=uid if for_other else None, group=gid if for_other else None)
        if os.path.isdir(profile):
            folder = os.path.join(profile, "plug-ins", "halftone-gimp")
            os.makedirs(folder, exist_ok=True)
            dest = os.path.join(folder, "halftone-gimp")
            shutil.copy2(os.path.join(staged, "halftone-gimp"), dest + ".new")
            os.replace(dest + ".new", dest)  # a running copy keeps its old file
            placed.append(dest)
            print("user-install: GIMP 2.10 plug-in: %s" % dest)
        else:
            print("user-install: no GIMP 2.10 profile (%s) and no gimp-console-2.10 to make one: "
                  "the GIMP 2.10 plug-in stays in %s" % (profile, staged))

    real_manifest = destdir + manifest if destdir else manifest
    os.makedirs(os.path.dirname(real_manifest), exist_ok=True)
    with open(real_manifest, "w") as f:
        f.write("".join(p + "\n" for p in placed + [manifest]))

    if for_other and not destdir:
        for p in placed + [manifest]:
            give_back(p, home, uid, gid)
        print("user-install: run as root: the files under %s are given back to uid %d" % (home, uid))
    print("user-install: %d files; remove them with tools/quickstart.sh --uninstall" % len(placed))


def own_dir(p):
    """One of the project's folders: named as one, or the HTML folder of
    its documentation (doc/gegl-halftone/html)."""
    return os.path.basename(p) in OWN_DIRS or \
        (os.path.basename(p) == "html" and os.path.basename(os.path.dirname(p)) == "gegl-halftone")


def uninstall(manifest):
    if not os.path.exists(manifest):
        print("user-install: nothing to remove (no %s)" % manifest)
        return 0
    with open(manifest) as f:
        paths = [line.rstrip("\n") for line in f if line.strip()]
    removed = 0
    for p in paths:
        if os.path.islink(p) or os.path.isfile(p):
            os.unlink(p)
            removed += 1
    # the project's own folders, once empty; shared ones stay
    for p in sorted(set(os.path.dirname(p) for p in paths), key=len, reverse=True):
        while own_dir(p) and os.path.isdir(p) and not os.listdir(p):
            os.rmdir(p)
            p = os.path.dirname(p)
    print("user-install: removed %d files" % removed)
    return 0


if __name__ == "__main__":
    if len(sys.argv) >= 2 and sys.argv[1] == "--uninstall":
        sys.exit(uninstall(sys.argv[2] if len(sys.argv) > 2 else default_manifest()))
    if len(sys.argv) != 5:
        sys.exit("usage: user-install.py HOME MANIFEST GIMP2_PROFILE STAGED_GIMP_PLUGIN_DIR | --uninstall [MANIFEST]")
    install(*sys.argv[1:])
