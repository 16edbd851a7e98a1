/* The halftone CLI's lists of what imageio writes, read from its format
 * table (hti_formats) and its TIFF compressions (hti_compressions), for
 * the refusals and --help: they name what this build has, and a format
 * added to the table shows in them by itself. */
#include "halftone-cli.h"
#include "imageio.h"

#include <stdio.h>
#include <string.h>

static bool wanted(const hti_format *f, unsigned which)
{
  return (!(which & FORMATS_WRITTEN) || f->write) && (!(which & FORMATS_METADATA) || f->metadata) &&
         (!(which & FORMATS_COMPRESSED) || f->compression);
}

/* Item i of n into buf, filled to *len, after the separator a list "a,
 * b or c" has before it (last_sep before the last), with " (note)" where
 * note is not NULL. */
static void add(char *buf, size_t size, size_t *len, int i, int n, const char *last_sep, const char *item,
                const char *note)
{
  if (*len >= size)
    return;
  int w = snprintf(buf + *len, size - *len, "%s%s%s%s%s", i == 0 ? "" : i == n - 1 ? last_sep : ", ", item,
                   note ? " (" : "", note ? note : "", note ? ")" : "");
  if (w > 0)
    *len += (size_t)w;
}

int format_list(char *buf, size_t size, unsigned which, format_field field, const char *last_sep)
{
  size_t count, len = 0;
  const hti_format *f = hti_formats(&count);
  int n = 0, total = 0;
  buf[0] = '\0';
  for (int pass = 0; pass < 2; pass++) /* count, then write */
    for (size_t i = 0; i < count; i++) {
      if (!wanted(&f[i], which))
        continue;
      const char *items[3] = { NULL, NULL, NULL };
      if (field == FORMAT_EXTENSIONS)
        memcpy(items, f[i].extensions, sizeof items);
      else
        items[0] = field == FORMAT_NAME ? f[i].name : field == FORMAT_EXTENSION ? f[i].extensions[0] : f[i].label;
      for (int k = 0; k < 3 && items[k]; k++) {
        if (pass == 0)
          total++;
        else
          add(buf, size, &len, n++, total, last_sep, items[k], NULL);
      }
    }
  return total;
}

const char *format_names_or(void)
{
  static char buf[256];
  format_list(buf, sizeof buf, FORMATS_WRITTEN, FORMAT_NAME, " or ");
  return buf;
}

/* The compressions but auto (the default), joined "a, b or c", each
 * with its note where `notes`. */
static void compression_list(char *buf, size_t size, bool notes)
{
  size_t count, len = 0;
  const hti_compression_name *c = hti_compressions(&count);
  int n = 0, total = 0;
  buf[0] = '\0';
  for (size_t i = 0; i < count; i++)
    total += c[i].value != HTI_COMPRESS_AUTO;
  for (size_t i = 0; i < count; i++)
    if (c[i].value != HTI_COMPRESS_AUTO)
      add(buf, size, &len, n++, total, " or ", c[i].name, notes ? c[i].note : NULL);
}

const char *compressions_or(void)
{
  static char buf[256];
  compression_list(buf, sizeof buf, false);
  return buf;
}

void compression_help(char *buf, size_t size)
{
  char formats[128], names[256];
  format_list(formats, sizeof formats, FORMATS_COMPRESSED, FORMAT_LABEL, " and ");
  compression_list(names, sizeof names, true);
  size_t count;
  const hti_compression_name *c = hti_compressions(&count);
  const char *dflt = "";
  for (size_t i = 0; i < count; i++)
    if (c[i].value == HTI_COMPRESS_AUTO)
      dflt = c[i].note;
  snprintf(buf, size, "%s output: %s; default %s", formats, names, dflt);
}
