/* Tests of the GEGL operation halftone:dither, through the GEGL API: its
 * registration, properties and enums, and its output against the core's
 * (formats, search methods, linear light, custom filters, partial
 * requests, progress). Failures and fall-backs: test-op-failures.c; the
 * kept core context: test-op-context.c.
 *
 * The module is found through GEGL_PATH (set by tests/gegl/meson.build to
 * the build folder of plugin/ and GEGL's own plug-in folder).
 *
 *   test-op                        run every test (TAP-like lines)
 *   test-op --print-reference-hash print the hash of the op's
 *                                  reference composition (used to fill
 *                                  in "reference-hash" in the source)
 */
#include <glib.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "halftone.h"
#include "op-test.h"

/* ------------------------------------------------------------ tests */

static void
test_registered (void)
{
  /* GIMP 3 reaches it through the plug-in, which runs it off GIMP's
   * main thread: no menu entry of its own */
  CHECK (gegl_operation_get_key (OP, "gimp:menu-path") == NULL,
         "gimp:menu-path is %s", gegl_operation_get_key (OP, "gimp:menu-path"));
  CHECK (gegl_operation_get_key (OP, "title") != NULL, "no title");
  CHECK (gegl_operation_get_key (OP, "categories") != NULL, "no categories");
  CHECK (gegl_operation_get_key (OP, "description") != NULL, "no description");
  CHECK (gegl_operation_get_key (OP, "reference-composition") != NULL, "no reference composition");
  /* our own GTypes must not clash with gegl:dither's */
  CHECK (g_type_from_name ("HalftoneAlgorithm") != 0, "enum type HalftoneAlgorithm missing");
  CHECK (g_type_from_name ("HalftoneBackend") != 0, "enum type HalftoneBackend missing");
  CHECK (gegl_has_operation ("gegl:dither"), "GEGL's own dither op is gone");
}

static gchar *
reference_hash (gboolean *binary)
{
  const gchar  *xml  = gegl_operation_get_key (OP, "reference-composition");
  GeglNode     *comp = gegl_node_new_from_xml (xml, "/");
  GeglRectangle r;
  guchar       *buf;
  gchar        *hash;

  r   = gegl_node_get_bounding_box (comp);
  buf = g_malloc0 ((gsize) r.width * (gsize) r.height * 4);
  /* exactly what GEGL's gegl-tester hashes */
  gegl_node_blit (comp, 1.0, &r, babl_format ("R'G'B'A u8"), buf,
                  GEGL_AUTO_ROWSTRIDE, GEGL_BLIT_DEFAULT);
  hash = g_compute_checksum_for_data (G_CHECKSUM_MD5, buf, (gsize) r.width * (gsize) r.height * 4);
  *binary = r.width > 0;
  for (gsize i = 0; i < (gsize) r.width * (gsize) r.height * 4; i++)
    if (buf[i] != 0 && buf[i] != 255)
      *binary = FALSE;
  g_free (buf);
  g_object_unref (comp);
  return hash;
}

static void
test_reference_hash (void)
{
  gboolean binary;
  gchar   *hash = reference_hash (&binary);

  CHECK (binary, "reference composition output is not black and white");
  CHECK (g_strcmp0 (hash, gegl_operation_get_key (OP, "reference-hash")) == 0,
         "reference hash %s, the op says %s", hash, gegl_operation_get_key (OP, "reference-hash"));
  g_free (hash);
}

/* The algorithm, backend and colour-mode enums are the library's lists,
 * exactly: the same values with the same nicks, in the same order, no
 * more and no fewer; the labels are the library's (untranslated here:
 * LC_ALL=C.UTF-8). The property of each has that enum and its default. */
static void
test_enums_are_library_lists (void)
{
  static const struct
  {
    const gchar *type, *property, *default_nick;
    ht_list      list;
  } lists[] = {
    { "HalftoneAlgorithm", "algorithm", "floyd-steinberg", HT_LIST_ALGORITHMS },
    { "HalftoneInit", "init", "floyd-steinberg", HT_LIST_INITS },
    { "HalftoneSchedule", "schedule", "parallel", HT_LIST_SCHEDULES },
    { "HalftoneBackend", "backend", "auto", HT_LIST_BACKENDS },
    { "HalftoneColorMode", "color-mode", "luma", HT_LIST_COLOR_MODES },
  };

  for (gsize k = 0; k < G_N_ELEMENTS (lists); k++)
    {
      gint             n = -1;
      const ht_choice *c = ht_choices (lists[k].list, &n);
      GType            t = g_type_from_name (lists[k].type);
      GEnumClass      *ec = t ? g_type_class_ref (t) : NULL;
      GParamSpec      *ps = gegl_operation_find_property (OP, lists[k].property);

      CHECK (c != NULL && n > 0, "ht_choices(%d) is empty", (int) lists[k].list);
      CHECK (ec != NULL, "enum type %s missing", lists[k].type);
      if (!c || !ec)
        continue;
      CHECK ((gint) ec->n_values == n, "%s has %u values, the library's list %d", lists[k].type, ec->n_values, n);
      for (gint i = 0; i < n && i < (gint) ec->n_values; i++)
        {
          const GEnumValue *v = &ec->values[i];

          CHECK (v->value == c[i].value && g_strcmp0 (v->value_nick, c[i].name) == 0,
                 "%s value %d is %d '%s', the library's %d '%s'", lists[k].type, i, v->value, v->value_nick,
                 c[i].value, c[i].name);
          CHECK (g_strcmp0 (v->value_name, c[i].label) == 0, "%s '%s' is labelled '%s', the library '%s'",
                 lists[k].type, c[i].name, v->value_name, c[i].label);
          CHECK (g_enum_get_value_by_nick (ec, c[i].name) == v, "%s: nick %s is not unique", lists[k].type,
                 c[i].name);
        }
      CHECK (ps && G_IS_PARAM_SPEC_ENUM (ps) && G_PARAM_SPEC_VALUE_TYPE (ps) == t,
             "property %s is not of enum type %s", lists[k].property, lists[k].type);
      if (ps && G_IS_PARAM_SPEC_ENUM (ps))
        {
          GEnumValue *d = g_enum_get_value (ec, G_PARAM_SPEC_ENUM (ps)->default_value);
          CHECK (d && g_strcmp0 (d->value_nick, lists[k].default_nick) == 0, "property %s defaults to %s, not %s",
                 lists[k].property, d ? d->value_nick : "(none)", lists[k].default_nick);
        }
      g_type_class_unref (ec);
    }
}

/* The names and values of version 0.1 stay, so that saved gegl graphs,
 * GIMP presets and PDB scripts keep working. */
static void
test_enum_nicks (void)
{
  static const struct
  {
    const gchar *type, *nick;
    gint         value;
  } kept[] = {
    { "HalftoneAlgorithm", "floyd-steinberg", 0 }, { "HalftoneAlgorithm", "jarvis-judice-ninke", 1 },
    { "HalftoneAlgorithm", "stucki", 2 },          { "HalftoneAlgorithm", "burkes", 3 },
    { "HalftoneAlgorithm", "sierra-3", 4 },        { "HalftoneAlgorithm", "sierra-2", 5 },
    { "HalftoneAlgorithm", "sierra-lite", 6 },     { "HalftoneAlgorithm", "atkinson", 7 },
    { "HalftoneAlgorithm", "custom", 8 },
    { "HalftoneBackend", "auto", 0 },              { "HalftoneBackend", "cpu", 1 },
    { "HalftoneBackend", "cuda", 2 },
    { "HalftoneColorMode", "luma", 0 },            { "HalftoneColorMode", "per-channel", 1 },
    { "HalftoneSpace", "stored", 0 },          { "HalftoneSpace", "linear", 1 },
  };

  for (gsize i = 0; i < G_N_ELEMENTS (kept); i++)
    {
      GType       t  = g_type_from_name (kept[i].type);
      GEnumClass *ec = t ? g_type_class_ref (t) : NULL;
      GEnumValue *v  = ec ? g_enum_get_value_by_nick (ec, kept[i].nick) : NULL;

      CHECK (v && v->value == kept[i].value, "%s %s: %d, was %d", kept[i].type, kept[i].nick,
             v ? v->value : -1, kept[i].value);
      /* the built-in filters are the core's */
      if (v && t == g_type_from_name ("HalftoneAlgorithm") && v->value != HT_FILTER_CUSTOM)
        CHECK (ht_filter_by_name (kept[i].nick) == ht_filter_builtin ((ht_filter_id) v->value),
               "algorithm %s is not core filter %d", kept[i].nick, v->value);
      if (ec)
        g_type_class_unref (ec);
    }
}

static void
test_properties (void)
{
  GeglNode   *g  = gegl_node_new ();
  GeglNode   *op = gegl_node_new_child (g, "operation", OP, NULL);
  gint        levels = 0, threads = -5, algorithm = -1, backend = -1, color = -1, space = -1;
  gboolean    serp = TRUE;
  gchar      *coef = NULL;

  /* defaults */
  gegl_node_get (op, "levels", &levels, "threads", &threads, "serpentine", &serp,
                 "coefficients", &coef, "algorithm", &algorithm, NULL);
  CHECK (levels == 2 && threads == 0 && !serp && algorithm == 0, "defaults: levels %d threads %d serp %d algo %d",
         levels, threads, serp, algorithm);
  CHECK (g_strcmp0 (coef, "- * 7; 3 5 1 / 16") == 0, "default coefficients %s", coef);
  g_free (coef);

  /* round trips of every property; the algorithms are the library's */
  {
    gint             n = 0;
    const ht_choice *c = ht_choices (HT_LIST_ALGORITHMS, &n);

    for (gint i = 0; i < n; i++)
      {
        gegl_node_set (op, "algorithm", c[i].value, NULL);
        gegl_node_get (op, "algorithm", &algorithm, NULL);
        CHECK (algorithm == c[i].value, "algorithm %d (%s) read back as %d", c[i].value, c[i].name, algorithm);
      }
  }
  for (gint l = 2; l <= 256; l += 127)
    {
      gegl_node_set (op, "levels", l, NULL);
      gegl_node_get (op, "levels", &levels, NULL);
      CHECK (levels == l, "levels %d read back as %d", l, levels);
    }
  gegl_node_set (op, "threads", 1024, NULL);
  gegl_node_get (op, "threads", &threads, NULL);
  CHECK (threads == 1024, "threads 1024 read back as %d", threads);
  gegl_node_set (op, "serpentine", TRUE, NULL);
  gegl_node_get (op, "serpentine", &serp, NULL);
  CHECK (serp, "serpentine did not stick");
  gegl_node_set (op, "coefficients", "- - * 8 4; 2 4 8 4 2; 1 2 4 2 1 / 42", NULL);
  gegl_node_get (op, "coefficients", &coef, NULL);
  CHECK (g_strcmp0 (coef, "- - * 8 4; 2 4 8 4 2; 1 2 4 2 1 / 42") == 0, "coefficients read back as %s", coef);
  g_free (coef);
  for (gint v = 0; v <= 2; v++)
    {
      gegl_node_set (op, "backend", v, NULL);
      gegl_node_get (op, "backend", &backend, NULL);
      CHECK (backend == v, "backend %d read back as %d", v, backend);
    }
  for (gint v = 0; v <= 1; v++)
    {
      gegl_node_set (op, "color-mode", v, "space", v, NULL);
      gegl_node_get (op, "color-mode", &color, "space", &space, NULL);
      CHECK (color == v && space == v, "color-mode/space %d read back as %d/%d", v, color, space);
    }

  /* Out-of-range values are rejected by GObject (a warning, value kept). */
  gegl_node_set (op, "levels", 5, "threads", 3, "algorithm", 2, NULL);
  warnings = 0;
  gegl_node_set (op, "levels", 1, NULL);
  gegl_node_set (op, "levels", 257, NULL);
  gegl_node_set (op, "threads", -1, NULL);
  {
    gint unused = 0; /* the first value that is no algorithm */

    while (ht_choice_by_value (HT_LIST_ALGORITHMS, unused))
      unused++;
    gegl_node_set (op, "algorithm", unused, NULL);
  }
  gegl_node_get (op, "levels", &levels, "threads", &threads, "algorithm", &algorithm, NULL);
  CHECK (warnings == 4, "%d warnings for 4 invalid values", warnings);
  CHECK (levels == 5 && threads == 3 && algorithm == 2, "invalid values changed the op: levels %d threads %d algo %d",
         levels, threads, algorithm);

  /* The method-specific property is only shown for its method. */
  {
    GParamSpec *ps = gegl_operation_find_property (OP, "coefficients");
    CHECK (ps && g_strcmp0 (gegl_param_spec_get_property_key (ps, "visible"), "algorithm {custom}") == 0,
           "coefficients not tied to algorithm custom");
    ps = gegl_operation_find_property (OP, "levels");
    CHECK (ps && G_PARAM_SPEC_INT (ps)->minimum == 2 && G_PARAM_SPEC_INT (ps)->maximum == 256,
           "levels range");
  }
  g_object_unref (g);
}

/* Every pixel's colour samples must be halftone levels, in the space the
 * halftone was made in; a luma halftone of colour has equal colour
 * samples; alpha must be the input's. */
typedef struct
{
  const gchar *in_format;
  const gchar *props_color; /* "luma" or "per-channel" */
  gint         levels;
  const gchar *space;
} FormatCase;

static void
check_levels_and_alpha (const FormatCase *fc, GeglBuffer *in, GeglBuffer *out)
{
  const Babl *of     = gegl_buffer_get_format (out);
  gboolean    alpha  = babl_format_has_alpha (of);
  gint        colors = babl_format_get_n_components (of) - (alpha ? 1 : 0);
  gboolean    linear = strcmp (fc->space, "linear") == 0;
  gboolean    luma   = strcmp (fc->props_color, "luma") == 0;
  gint        n      = colors + (alpha ? 1 : 0);
  gchar       name[64];
  gfloat     *o, *i;
  const GeglRectangle *r = gegl_buffer_get_extent (out);
  gsize       npx = (gsize) r->width * (gsize) r->height;
  gint        bad = 0, bad_alpha = 0, bad_gray = 0, lm = fc->levels - 1;
  const Babl *type = babl_format_get_type (of, 0);
  /* integer outputs store round(q * MAX / (levels - 1)); float ones the
   * fraction, through the input's transfer curve where its space is not
   * the halftone's */
  gfloat      tol = type == babl_type ("u8") ? 0.51f / 255.0f
                    : type == babl_type ("u16") ? 0.51f / 65535.0f : 2e-5f;
  /* in linear light a level is the stored value whose light is nearest
   * (core/shared/srgb.h): within half a stored step of the curve's
   * steepest part (2.4 times the step), and babl's curve is not the
   * table's to the last unit */
  if (strcmp (fc->space, "linear") == 0)
    tol = type == babl_type ("u8") ? 1.3f / 255.0f : 8e-5f;

  /* both read as float in the halftone's own model, unpremultiplied */
  g_snprintf (name, sizeof name, "%s%s float", colors >= 3 ? (linear ? "RGB" : "R'G'B'") : (linear ? "Y" : "Y'"),
              alpha ? "A" : "");
  o = get_pixels (out, name);
  i = babl_format_has_alpha (gegl_buffer_get_format (in)) ? get_pixels (in, name) : NULL;
  for (gsize p = 0; p < npx; p++)
    {
      for (gint c = 0; c < colors; c++)
        {
          gfloat v = o[p * (gsize) n + (gsize) c];
          gfloat q = rintf (v * (gfloat) lm);
          if (fabsf (v - q / (gfloat) lm) > tol || q < 0 || q > lm)
            bad++;
          if (luma && c > 0 && v != o[p * (gsize) n])
            bad_gray++;
        }
      if (alpha && i && fabsf (o[p * (gsize) n + (gsize) colors] - i[p * (gsize) n + (gsize) colors]) > 1.0f / 255.0f)
        bad_alpha++;
    }
  CHECK (bad == 0, "%s %s levels %d: %d samples are not levels", fc->in_format, fc->props_color, fc->levels, bad);
  CHECK (bad_gray == 0, "%s luma: %d pixels are not gray", fc->in_format, bad_gray);
  CHECK (bad_alpha == 0, "%s: %d alpha values changed", fc->in_format, bad_alpha);
  g_free (o);
  g_free (i);
}

static void
test_formats (void)
{
  /* the output is always in the input's format */
  static const FormatCase cases[] = {
    { "R'G'B'A u8", "luma", 2, "perceptual" },
    { "R'G'B' u8", "luma", 2, "perceptual" },
    { "Y' u8", "luma", 2, "perceptual" },
    { "Y'A u8", "luma", 3, "perceptual" },
    { "R'G'B'A u8", "per-channel", 2, "perceptual" },
    { "R'G'B' u8", "per-channel", 4, "perceptual" },
    { "R'G'B'A u16", "luma", 2, "perceptual" },
    { "Y' u16", "luma", 5, "perceptual" },
    { "RGBA float", "luma", 2, "perceptual" },
    { "RGBA float", "per-channel", 3, "perceptual" },
    { "Y float", "luma", 3, "perceptual" },
    { "R'G'B'A float", "per-channel", 2, "linear" },
    { "R'G'B'A float", "luma", 5, "linear" },
    { "R'G'B' u8", "luma", 2, "linear" },
    { "R'aG'aB'aA float", "luma", 2, "perceptual" },
    { "R'aG'aB'aA float", "per-channel", 4, "perceptual" },
  };
  const gint w = 67, h = 41;
  guchar    *rgba = make_rgba8 (w, h);

  for (gsize k = 0; k < G_N_ELEMENTS (cases); k++)
    {
      const FormatCase *fc = &cases[k];
      GeglBuffer *in  = buffer_from_rgba8 (rgba, w, h, fc->in_format);
      GeglNode   *g   = gegl_node_new ();
      GeglBuffer *out;
      gint        color = strcmp (fc->props_color, "luma") == 0 ? 0 : 1;
      gint        space = strcmp (fc->space, "perceptual") == 0 ? 0 : 1;

      out = run_op (in, "color-mode", color, "levels", fc->levels, "space", space, NULL);
      CHECK (out != NULL, "%s: no output", fc->in_format);
      if (out)
        {
          const GeglRectangle *e = gegl_buffer_get_extent (out);
          CHECK (e->width == w && e->height == h, "%s: output %dx%d", fc->in_format, e->width, e->height);
          CHECK (gegl_buffer_get_format (out) == babl_format (fc->in_format),
                 "%s %s: output format %s, not the input's", fc->in_format, fc->props_color,
                 babl_get_name (gegl_buffer_get_format (out)));
          check_levels_and_alpha (fc, in, out);
          g_object_unref (out);
        }
      g_object_unref (g);
      g_object_unref (in);
    }
  g_free (rgba);
}

/* cmyk on a layer with alpha (every GIMP layer that has one): the inks'
 * RGB rendering equals that of the same colours without alpha, and the
 * alpha is the input's, without a warning (the library takes 4 inks +
 * alpha; where it does not, the op passes its input through with a warning). */
static void
test_cmyk_alpha (void)
{
  const gint  w = 61, h = 37;
  guchar     *rgba = make_rgba8 (w, h);
  GeglBuffer *in_a = buffer_from_rgba8 (rgba, w, h, "R'G'B'A u8");
  GeglBuffer *in_c = buffer_from_rgba8 (rgba, w, h, "R'G'B' u8");
  GeglBuffer *out_a, *out_c;

  warnings = 0;
  out_a = run_op (in_a, "color-mode", (gint) HT_COLOR_CMYK, NULL);
  out_c = run_op (in_c, "color-mode", (gint) HT_COLOR_CMYK, NULL);
  CHECK (warnings == 0, "cmyk with alpha: %d warning(s), the last: %s", warnings,
         warnings ? last_warning->str : "");
  CHECK (out_a && out_c, "cmyk with alpha: no output");
  if (out_a && out_c)
    {
      guchar *a = get_pixels (out_a, "R'G'B'A u8"), *c = get_pixels (out_c, "R'G'B' u8");
      gint    bad = 0;

      for (gsize i = 0; i < (gsize) w * (gsize) h; i++)
        {
          for (gsize k = 0; k < 3; k++)
            bad += a[4 * i + k] != c[3 * i + k] || (a[4 * i + k] != 0 && a[4 * i + k] != 255);
          bad += a[4 * i + 3] != rgba[4 * i + 3];
        }
      CHECK (bad == 0, "cmyk with alpha: %d sample(s) differ from the inks without alpha or from the alpha", bad);
      g_free (a);
      g_free (c);
    }
  if (out_a)
    g_object_unref (out_a);
  if (out_c)
    g_object_unref (out_c);
  g_object_unref (in_a);
  g_object_unref (in_c);
  g_free (rgba);
}

/* Whether `out` (the op's output on the w x h R'G'B'A u8 `rgba`, read as
 * Y'A u8, or R'G'B'A u8 with p->color per channel) holds the bits that
 * the core's CPU backend gives for p on `threads` threads (0: its
 * default). */
static gboolean
equals_core (GeglBuffer *out, const guchar *rgba, gint w, gint h, const ht_params *p, gint threads)
{
  const gint  nout = p->color == HT_COLOR_PER_CHANNEL ? 4 : 2;
  const gsize size = (gsize) w * (gsize) h * (gsize) nout;
  guchar     *want = g_malloc0 (size);
  guchar     *got;
  ht_context *ctx = ht_context_new ();
  ht_image    ii = { w, h, (size_t) w * 4, 4, HT_FORMAT_U8, (void *) rgba };
  ht_image    oi = { w, h, (size_t) w * (size_t) nout, nout, HT_FORMAT_U8, want };
  gboolean    same;

  ht_context_set_backend (ctx, HT_BACKEND_CPU);
  if (threads)
    ht_context_set_threads (ctx, threads);
  CHECK (ht_run (ctx, &ii, &oi, p) == HT_OK, "core: %s", ht_context_message (ctx));
  got = get_pixels (out, nout == 4 ? "R'G'B'A u8" : "Y'A u8");
  same = memcmp (got, want, size) == 0;
  g_free (got);
  g_free (want);
  ht_context_free (ctx);
  return same;
}

/* The op gives exactly what the core gives on the same 8-bit values, for
 * every built-in filter of the library's list. */
static void
test_equals_core (void)
{
  const gint       w = 67, h = 41;
  guchar          *rgba = make_rgba8 (w, h);
  gint             nf = 0;
  const ht_choice *filters = ht_choices (HT_LIST_FILTERS, &nf);

  for (gint a = 0; a < nf; a++)
    for (gint color = 0; color <= 1; color++)
      for (gint serp = 0; serp <= 1; serp++)
        {
          GeglBuffer *in;
          gint        levels = 2 + a % 3;
          GeglBuffer *out;
          ht_params   p;

          if (filters[a].value == HT_FILTER_CUSTOM)
            continue;
          in  = buffer_from_rgba8 (rgba, w, h, "R'G'B'A u8");
          out = run_op (in, "algorithm", filters[a].value, "color-mode", color, "serpentine", serp,
                        "levels", levels, "backend", 1 /* cpu */, NULL);
          ht_params_init (&p);
          p.filter = *ht_filter_builtin ((ht_filter_id) filters[a].value);
          p.levels = levels;
          p.color  = color ? HT_COLOR_PER_CHANNEL : HT_COLOR_LUMA;
          p.scan   = serp ? HT_SCAN_SERPENTINE : HT_SCAN_RASTER;
          p.alpha  = true;
          CHECK (equals_core (out, rgba, w, h, &p, 0),
                 "op differs from the core: %s color %d serpentine %d levels %d", filters[a].name, color, serp,
                 levels);
          g_object_unref (out);
          g_object_unref (in);
        }
  g_free (rgba);
}

/* The search methods (algorithm les, pes, dbs and their properties): the
 * op gives the core's bits; their properties show for them only. */
static void
test_search (void)
{
  const gint w = 37, h = 29;
  guchar    *rgba = make_rgba8 (w, h);
  static const struct
  {
    gint         algorithm, window, init, seed, schedule, max_rounds, threads;
    gdouble      sigma;
  } runs[] = {
    { HT_ALGORITHM_LES, 2, HT_INIT_FLOYD_STEINBERG, 0, HT_SCHEDULE_PARALLEL, 0, 2, 1.0 },
    { HT_ALGORITHM_PES, 3, HT_INIT_RANDOM, 9, HT_SCHEDULE_PARALLEL, 2, 0, 0.8 },
    { HT_ALGORITHM_DBS, 4, HT_INIT_RANDOM, 3, HT_SCHEDULE_RASTER, 0, 1, 1.5 },
  };
  static const gchar *const search_props[] = { "window", "sigma", "init", "schedule", "max-rounds" };

  for (gsize k = 0; k < G_N_ELEMENTS (search_props); k++)
    {
      GParamSpec  *ps = gegl_operation_find_property (OP, search_props[k]);
      const gchar *vis = ps ? gegl_param_spec_get_property_key (ps, "visible") : NULL;

      CHECK (ps != NULL, "no property %s", search_props[k]);
      CHECK (vis && g_str_has_prefix (vis, "algorithm {les, pes"), "%s is not tied to the search methods: %s",
             search_props[k], vis ? vis : "(none)");
    }

  for (gsize k = 0; k < G_N_ELEMENTS (runs); k++)
    {
      GeglBuffer *in  = buffer_from_rgba8 (rgba, w, h, "R'G'B'A u8");
      GeglBuffer *out = run_op (in, "algorithm", runs[k].algorithm, "window", runs[k].window,
                                "sigma", runs[k].sigma, "init", runs[k].init, "seed", runs[k].seed,
                                "schedule", runs[k].schedule, "max-rounds", runs[k].max_rounds,
                                "threads", runs[k].threads, "backend", 1 /* cpu */, NULL);
      ht_params   p;

      ht_params_init (&p);
      CHECK (ht_params_set_algorithm (&p, runs[k].algorithm) == HT_OK, "algorithm %d", runs[k].algorithm);
      p.window     = runs[k].window;
      p.eye.sigma  = runs[k].sigma;
      p.init       = (ht_search_init) runs[k].init;
      p.seed       = (uint64_t) runs[k].seed;
      p.schedule   = (ht_search_schedule) runs[k].schedule;
      p.max_rounds = runs[k].max_rounds;
      p.alpha      = true;
      /* another thread count than the op's: the same bits */
      CHECK (equals_core (out, rgba, w, h, &p, p.schedule == HT_SCHEDULE_RASTER ? 1 : 3),
             "op differs from the core: search run %zu", k);
      g_object_unref (out);
      g_object_unref (in);
    }
  g_free (rgba);
}

/* space=linear dithers linear light: the op equals the core run with
 * space linear on the stored values, and each space keeps its own mean
 * tone. */
static void
test_linear (void)
{
  const gint  w = 120, h = 90;
  gsize       n = (gsize) w * (gsize) h;
  guchar     *rgba = make_rgba8 (w, h);
  GeglBuffer *in = buffer_from_rgba8 (rgba, w, h, "R'G'B' u8");
  GeglBuffer *lin = run_op (in, "space", 1, "backend", 1, NULL);
  GeglBuffer *per = run_op (in, "space", 0, "backend", 1, NULL);
  guchar     *src = get_pixels (in, "R'G'B' u8");
  guchar     *want = g_malloc (n);
  guchar     *got = get_pixels (lin, "Y' u8");
  ht_context *ctx = ht_context_new ();
  ht_params   p;
  ht_image    ii = { w, h, (size_t) w * 3, 3, HT_FORMAT_U8, src };
  ht_image    oi = { w, h, (size_t) w, 1, HT_FORMAT_U8, want };
  gfloat     *lin_in = get_pixels (in, "Y float"), *lin_out = get_pixels (lin, "Y float");
  gfloat     *per_out = get_pixels (per, "Y' float");
  gdouble     m[4] = { 0, 0, 0, 0 };

  ht_params_init (&p);
  p.space = HT_SPACE_LINEAR;
  CHECK (ht_run (ctx, &ii, &oi, &p) == HT_OK, "core: %s", ht_context_message (ctx));
  CHECK (memcmp (want, got, n) == 0, "linear op differs from the core's linear light");
  CHECK (gegl_buffer_get_format (lin) == babl_format ("R'G'B' u8"), "linear output format %s, not the input's",
         babl_get_name (gegl_buffer_get_format (lin)));
  for (gsize i = 0; i < n; i++)
    {
      m[0] += lin_in[i]; m[1] += lin_out[i];
      /* perceptual luma: Rec. 709 weights on the stored values */
      m[2] += (0.2126 * rgba[i * 4] + 0.7152 * rgba[i * 4 + 1] + 0.0722 * rgba[i * 4 + 2]) / 255.0;
      m[3] += per_out[i];
    }
  for (gint k = 0; k < 4; k++)
    m[k] /= (gdouble) n;
  /* error diffusion keeps the mean tone of what it diffuses */
  CHECK (fabs (m[1] - m[0]) < 0.02, "linear: mean light %.4f in, %.4f out", m[0], m[1]);
  CHECK (fabs (m[3] - m[2]) < 0.02, "perceptual: mean value %.4f in, %.4f out", m[2], m[3]);
  CHECK (memcmp (lin_out, per_out, n * sizeof (gfloat)) != 0, "linear and perceptual give the same image");
  ht_context_free (ctx);
  g_free (lin_in); g_free (lin_out); g_free (per_out);
  g_free (src); g_free (want); g_free (got); g_free (rgba);
  g_object_unref (lin); g_object_unref (per); g_object_unref (in);
}

/* A custom string equal to a built-in filter gives the same image; a bad
 * one warns and passes the input through untouched. */
static void
test_custom (void)
{
  const gint w = 67, h = 41;
  guchar    *rgba = make_rgba8 (w, h);
  GeglBuffer *in = buffer_from_rgba8 (rgba, w, h, "R'G'B'A u8");
  GeglBuffer *fs = run_op (in, "algorithm", 0, NULL);
  GeglBuffer *cu = run_op (in, "algorithm", 8, "coefficients", "- * 7; 3 5 1 / 16", NULL);
  GeglBuffer *st = run_op (in, "algorithm", 2, NULL);
  GeglBuffer *bad;
  guchar     *a = get_pixels (fs, "Y'A u8"), *b = get_pixels (cu, "Y'A u8"), *c = get_pixels (st, "Y'A u8");

  CHECK (memcmp (a, b, (gsize) w * (gsize) h * 2) == 0, "custom FS string differs from floyd-steinberg");
  CHECK (memcmp (a, c, (gsize) w * (gsize) h * 2) != 0, "stucki equals floyd-steinberg");
  g_free (a); g_free (b); g_free (c);

  warnings = 0;
  bad = run_op (in, "algorithm", 8, "coefficients", "- * 7; 3 x 1", NULL);
  CHECK (warnings >= 1 && strstr (last_warning->str, "coefficients") != NULL,
         "no warning naming the coefficients (%d warnings, last: %s)", warnings, last_warning->str);
  a = get_pixels (bad, "R'G'B'A u8");
  CHECK (memcmp (a, rgba, (gsize) w * (gsize) h * 4) == 0, "bad coefficients did not pass the input through");
  g_free (a);
  g_object_unref (bad);
  g_object_unref (fs); g_object_unref (cu); g_object_unref (st);
  g_object_unref (in);
  g_free (rgba);
}

/* Asking for a small part of the output gives that part of the whole
 * result (error diffusion is global; a crop must not restart it). */
static void
test_partial_request (void)
{
  const gint    w = 200, h = 150;
  guchar       *rgba = make_rgba8 (w, h);
  GeglBuffer   *in = buffer_from_rgba8 (rgba, w, h, "R'G'B'A u8");
  GeglBuffer   *full = run_op (in, NULL);
  guchar       *all = get_pixels (full, "Y'A u8");
  GeglRectangle roi = { 120, 90, 37, 23 };
  gint          diff = part_rows_differ (in, &roi, all, w, NULL);

  CHECK (diff == 0, "%d rows of a partial request differ from the full result", diff);
  g_free (all); g_free (rgba);
  g_object_unref (full); g_object_unref (in);
}

/* The op reports progress while it runs, ending at 1. */
static void
on_progress (GeglNode *node, gdouble fraction, gpointer user)
{
  gdouble *last = user;
  (void) node;
  *last = fraction;
}

static void
test_progress (void)
{
  const gint  w = 300, h = 200;
  guchar     *rgba = make_rgba8 (w, h);
  GeglBuffer *in = buffer_from_rgba8 (rgba, w, h, "R'G'B'A u8");
  GeglNode   *g = gegl_node_new ();
  GeglBuffer *out = NULL;
  GeglNode   *src = gegl_node_new_child (g, "operation", "gegl:buffer-source", "buffer", in, NULL);
  GeglNode   *op = gegl_node_new_child (g, "operation", OP, NULL);
  GeglNode   *sink = gegl_node_new_child (g, "operation", "gegl:buffer-sink", "buffer", &out, NULL);
  gdouble     last = -1.0;

  g_signal_connect (op, "progress", G_CALLBACK (on_progress), &last);
  gegl_node_link_many (src, op, sink, NULL);
  gegl_node_process (sink);
  CHECK (last == 1.0, "last progress %g", last);
  g_object_unref (out); g_object_unref (g); g_object_unref (in); g_free (rgba);
}

/* A search's estimate (ht_estimate_seconds) is said before it starts,
 * as the operation's data "halftone-estimate" (and its progress
 * message, which GeglNode's signal does not pass on); error diffusion's
 * is empty. */
static void
test_estimate_message (void)
{
  const gint  w = 24, h = 16;
  guchar     *rgba = make_rgba8 (w, h);
  GeglBuffer *in = buffer_from_rgba8 (rgba, w, h, "Y' u8");

  for (gint k = 0; k < 2; k++)
    {
      GeglNode   *g = gegl_node_new ();
      GeglBuffer *out = NULL;
      GeglNode   *src = gegl_node_new_child (g, "operation", "gegl:buffer-source", "buffer", in, NULL);
      GeglNode   *op = gegl_node_new_child (g, "operation", OP, NULL);
      GeglNode   *sink = gegl_node_new_child (g, "operation", "gegl:buffer-sink", "buffer", &out, NULL);
      const gchar *said;

      if (k == 0)
        gegl_node_set (op, "algorithm", (gint) HT_ALGORITHM_LES, "window", 2, NULL);
      gegl_node_link_many (src, op, sink, NULL);
      gegl_node_process (sink);
      said = g_object_get_data (G_OBJECT (gegl_node_get_gegl_operation (op)), "halftone-estimate");
      if (k == 0)
        CHECK (said && strstr (said, "les: estimated to take ") != NULL, "les: the estimate said is %s", said);
      else
        CHECK (!said || *said == '\0', "error diffusion: an estimate: %s", said);
      if (out)
        g_object_unref (out);
      g_object_unref (g);
    }
  g_object_unref (in);
  g_free (rgba);
}

int
main (int argc, char **argv)
{
  op_test_start (&argc, &argv);
  if (argc > 1 && strcmp (argv[1], "--print-reference-hash") == 0)
    {
      gboolean binary;
      gchar   *hash = reference_hash (&binary);
      printf ("%s%s\n", hash, binary ? "" : " (NOT binary!)");
      g_free (hash);
      gegl_exit ();
      return 0;
    }

  if (op_registered ())
    {
      test_registered ();
      test_reference_hash ();
      test_enums_are_library_lists ();
      test_enum_nicks ();
      test_properties ();
      test_formats ();
      test_cmyk_alpha ();
      test_equals_core ();
      test_search ();
      test_linear ();
      test_custom ();
      test_partial_request ();
      test_progress ();
      test_estimate_message ();
    }
  return op_test_end ();
}
