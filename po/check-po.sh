#!/bin/sh
# Checks that a translation is valid and complete for the *current*
# sources: extracts the strings again with xgettext (as `ninja
# gegl-halftone-pot` does) and compares the catalog against them.
# Usage: check-po.sh SOURCE_ROOT LANG WORKDIR
set -eu
root=$1 lang=$2 work=$3
for p in xgettext msgfmt msgcmp; do
  command -v "$p" >/dev/null 2>&1 || { echo "SKIP: $p not installed"; exit 77; }
done
mkdir -p "$work"
cd "$root"
# every source that marks strings for translation is extracted (the
# labels of the library's lists live in core/)
for f in $(grep -l 'N_(\|_("' core/*.c core/*/*.c plugin/*.c ui/*.c ui/*/*.c 2>/dev/null); do
  grep -qx "$f" po/POTFILES || { echo "$f marks strings for translation but is not in po/POTFILES"; exit 1; }
done
xgettext --from-code=UTF-8 --add-comments=TRANSLATORS --keyword=_ --keyword=N_ \
  --keyword=C_:1c,2 --keyword=NC_:1c,2 --keyword=g_dngettext:2,3 \
  --flag=g_strdup_printf:1:c-format --flag=g_message:1:c-format \
  -o "$work/current.pot" --files-from=po/POTFILES
msgfmt --check --statistics -o /dev/null "po/$lang.po"
# every current string translated (untranslated ones count as missing)
msgcmp "po/$lang.po" "$work/current.pot"
# nothing fuzzy
if [ -n "$(msgattrib --only-fuzzy --no-obsolete "po/$lang.po")" ]; then
  echo "po/$lang.po has fuzzy entries"; exit 1
fi
echo "po/$lang.po: complete for the current sources"
