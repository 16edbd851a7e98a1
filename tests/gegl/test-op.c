/* Tests of the GEGL operation halftone:dither, through the GEGL API.
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
#include <sys/resource.h>
#include <unistd.h>

#include "halftone.h"
#include "op-test.h"

static int warnings; /* warnings seen by the log handler since reset */
static GString *last_warning;
static GString *last_warning_domain;
static gint contexts_made;  /* the op's debug lines about its kept core context */
static gint contexts_freed;

static void
log_handler (const gchar *domain, GLogLevelFlags level, const gchar *message, gpointer user)
{
  (void) user;
  if (level & (G_LOG_LEVEL_WARNING | G_LOG_LEVEL_CRITICAL))
    {
      warnings++;
      g_string_assign (last_warning, message);
      g_string_assign (last_warning_domain, domain ? domain : "(null)");
    }
  if (strstr (message, "halftone:dither: made a core context"))
    g_atomic_int_inc (&contexts_made);
  if (strstr (message, "halftone:dither: freed the idle core context"))
    g_atomic_int_inc (&contexts_freed);
  fprintf (stderr, "  (log %s: %s)\n", domain ? domain : "-", message);
}

/* ------------------------------------------------------------ tests */

static void
test_registered (void)
{
  CHECK (gegl_has_operation (OP), "%s is not registered (GEGL_PATH=%s)", OP, g_getenv ("GEGL_PATH"));
  if (!gegl_has_operation (OP))
    return;
  CHECK (g_strcmp0 (gegl_operation_get_key (OP, "gimp:menu-path"), "<Image>/Filters/Distorts") == 0,
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
    { "HalftoneSpace", "perceptual", 0 },          { "HalftoneSpace", "linear", 1 },
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

  /* round trips of every property */
  for (gint a = 0; a <= 8; a++)
    {
      gegl_node_set (op, "algorithm", a, NULL);
      gegl_node_get (op, "algorithm", &algorithm, NULL);
      CHECK (algorithm == a, "algorithm %d read back as %d", a, algorithm);
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
  gegl_node_set (op, "algorithm", 42, NULL);
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

/* The op gives exactly what the core gives on the same 8-bit values. */
static void
test_equals_core (void)
{
  const gint w = 67, h = 41;
  guchar    *rgba = make_rgba8 (w, h);
  static const char *const algos[] = { "floyd-steinberg", "jarvis-judice-ninke", "stucki", "burkes",
                                       "sierra-3", "sierra-2", "sierra-lite", "atkinson" };

  for (gint a = 0; a < 8; a++)
    for (gint color = 0; color <= 1; color++)
      for (gint serp = 0; serp <= 1; serp++)
        {
          GeglBuffer *in  = buffer_from_rgba8 (rgba, w, h, "R'G'B'A u8");
          gint        levels = 2 + a % 3;
          GeglBuffer *out = run_op (in, "algorithm", a, "color-mode", color, "serpentine", serp,
                                    "levels", levels, "backend", 1 /* cpu */, NULL);
          gint        nout = color ? 4 : 2;
          guchar     *want = g_malloc0 ((gsize) w * (gsize) h * (gsize) nout);
          guchar     *got;
          ht_context *ctx = ht_context_new ();
          ht_params   p;
          ht_image    ii = { w, h, (size_t) w * 4, 4, HT_FORMAT_U8, rgba };
          ht_image    oi = { w, h, (size_t) w * (size_t) nout, nout, HT_FORMAT_U8, want };
          ht_status   s;

          ht_params_init (&p);
          p.filter = *ht_filter_by_name (algos[a]);
          p.levels = levels;
          p.color  = color ? HT_COLOR_PER_CHANNEL : HT_COLOR_LUMA;
          p.scan   = serp ? HT_SCAN_SERPENTINE : HT_SCAN_RASTER;
          p.alpha  = true;
          ht_context_set_backend (ctx, HT_BACKEND_CPU);
          s = ht_run (ctx, &ii, &oi, &p);
          CHECK (s == HT_OK, "core: %s", ht_context_message (ctx));
          got = get_pixels (out, color ? "R'G'B'A u8" : "Y'A u8");
          CHECK (memcmp (got, want, (gsize) w * (gsize) h * (gsize) nout) == 0,
                 "op differs from the core: %s color %d serpentine %d levels %d", algos[a], color, serp, levels);
          g_free (got);
          g_free (want);
          ht_context_free (ctx);
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
      guchar     *want = g_malloc0 ((gsize) w * (gsize) h * 2);
      guchar     *got;
      ht_context *ctx = ht_context_new ();
      ht_params   p;
      ht_image    ii = { w, h, (size_t) w * 4, 4, HT_FORMAT_U8, rgba };
      ht_image    oi = { w, h, (size_t) w * 2, 2, HT_FORMAT_U8, want };
      ht_status   s;

      ht_params_init (&p);
      CHECK (ht_params_set_algorithm (&p, runs[k].algorithm) == HT_OK, "algorithm %d", runs[k].algorithm);
      p.window     = runs[k].window;
      p.eye.sigma  = runs[k].sigma;
      p.init       = (ht_search_init) runs[k].init;
      p.seed       = (uint64_t) runs[k].seed;
      p.schedule   = (ht_search_schedule) runs[k].schedule;
      p.max_rounds = runs[k].max_rounds;
      p.alpha      = true;
      ht_context_set_backend (ctx, HT_BACKEND_CPU);
      ht_context_set_threads (ctx, 3); /* another thread count than the op's: the same bits */
      if (p.schedule == HT_SCHEDULE_RASTER)
        ht_context_set_threads (ctx, 1);
      s = ht_run (ctx, &ii, &oi, &p);
      CHECK (s == HT_OK, "core: %s", ht_context_message (ctx));
      got = get_pixels (out, "Y'A u8");
      CHECK (memcmp (got, want, (gsize) w * (gsize) h * 2) == 0, "op differs from the core: search run %zu", k);
      g_free (got);
      g_free (want);
      ht_context_free (ctx);
      g_object_unref (out);
      g_object_unref (in);
    }
  g_free (rgba);
}

/* space=linear dithers linear light: the op equals the core run on the
 * babl-linearised floats, and each space keeps its own mean tone. */
static void
test_linear (void)
{
  const gint  w = 120, h = 90;
  gsize       n = (gsize) w * (gsize) h;
  guchar     *rgba = make_rgba8 (w, h);
  GeglBuffer *in = buffer_from_rgba8 (rgba, w, h, "R'G'B' u8");
  GeglBuffer *lin = run_op (in, "space", 1, "backend", 1, NULL);
  GeglBuffer *per = run_op (in, "space", 0, "backend", 1, NULL);
  gfloat     *src = get_pixels (in, "RGB float");
  guchar     *want = g_malloc (n);
  guchar     *got = get_pixels (lin, "Y u8");
  ht_context *ctx = ht_context_new ();
  ht_params   p;
  ht_image    ii = { w, h, (size_t) w * 12, 3, HT_FORMAT_F32, src };
  ht_image    oi = { w, h, (size_t) w, 1, HT_FORMAT_U8, want };
  gfloat     *lin_in = get_pixels (in, "Y float"), *lin_out = get_pixels (lin, "Y float");
  gfloat     *per_out = get_pixels (per, "Y' float");
  gdouble     m[4] = { 0, 0, 0, 0 };

  ht_params_init (&p);
  CHECK (ht_run (ctx, &ii, &oi, &p) == HT_OK, "core: %s", ht_context_message (ctx));
  CHECK (memcmp (want, got, n) == 0, "linear op differs from the core on linear floats");
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

/* ------------------------------------------------- failures pass through */

/* Runs the op on `in` like run_op, and also returns the output format
 * that its prepare() announced. */
static GeglBuffer *
run_op_announced (GeglBuffer *in, const Babl **announced, const gchar *first_property, ...)
{
  GeglBuffer *out;
  va_list     ap;

  va_start (ap, first_property);
  out = run_op_valist (in, announced, first_property, ap);
  va_end (ap);
  return out;
}

/* `out` is `in`: the same format, and the same bytes over `check` (the
 * whole extent where NULL). */
static gboolean
same_as_input (GeglBuffer *in, GeglBuffer *out, const GeglRectangle *check, const gchar *what)
{
  const Babl          *f = gegl_buffer_get_format (in);
  const GeglRectangle *r = check ? check : gegl_buffer_get_extent (in);
  gsize                bytes = (gsize) r->width * (gsize) r->height * (gsize) babl_format_get_bytes_per_pixel (f);
  guchar              *a, *b;
  gboolean             same;

  CHECK (out != NULL, "%s: no output", what);
  if (!out)
    return FALSE;
  CHECK (gegl_buffer_get_format (out) == f, "%s: output format %s, the input's %s", what,
         babl_get_name (gegl_buffer_get_format (out)), babl_get_name (f));
  CHECK (gegl_rectangle_equal (gegl_buffer_get_extent (out), gegl_buffer_get_extent (in)),
         "%s: output extent differs from the input's", what);
  a = g_malloc (bytes);
  b = g_malloc (bytes);
  gegl_buffer_get (in, r, 1.0, f, a, GEGL_AUTO_ROWSTRIDE, GEGL_ABYSS_NONE);
  gegl_buffer_get (out, r, 1.0, f, b, GEGL_AUTO_ROWSTRIDE, GEGL_ABYSS_NONE);
  same = memcmp (a, b, bytes) == 0;
  CHECK (same, "%s: output pixels differ from the input's", what);
  g_free (a);
  g_free (b);
  return same && gegl_buffer_get_format (out) == f;
}

/* The warning of a failure: one at least, in the op's log domain,
 * naming `needle`. */
static void
check_warning (const gchar *needle, const gchar *what)
{
  CHECK (warnings >= 1, "%s: no warning", what);
  if (warnings < 1)
    return;
  CHECK (strstr (last_warning->str, needle) != NULL && strstr (last_warning->str, "passing the input through"),
         "%s: the warning does not name \"%s\" and the pass-through: %s", what, needle, last_warning->str);
  CHECK (g_strcmp0 (last_warning_domain->str, "gegl-halftone") == 0, "%s: warning in log domain %s", what,
         last_warning_domain->str);
}

/* The warning of backend cuda's fall-back to the CPU: in the op's log
 * domain, naming `needle` and the CPU. */
static void
check_fallback_warning (const gchar *needle, const gchar *what)
{
  CHECK (warnings >= 1, "%s: no warning", what);
  if (warnings < 1)
    return;
  CHECK (strstr (last_warning->str, needle) != NULL && strstr (last_warning->str, "computed on the CPU instead"),
         "%s: the warning does not name \"%s\" and the CPU: %s", what, needle, last_warning->str);
  CHECK (g_strcmp0 (last_warning_domain->str, "gegl-halftone") == 0, "%s: warning in log domain %s", what,
         last_warning_domain->str);
}

/* `out` holds the same pixels as `want` (in `format`). */
static void
check_same_pixels (GeglBuffer *want, GeglBuffer *out, const gchar *format, const gchar *what)
{
  const GeglRectangle *r = gegl_buffer_get_extent (want);
  gsize   bytes = (gsize) r->width * (gsize) r->height * (gsize) babl_format_get_bytes_per_pixel (babl_format (format));
  guchar *a = g_malloc (bytes), *b = g_malloc (bytes);

  CHECK (out != NULL, "%s: no output", what);
  if (out)
    {
      gegl_buffer_get (want, r, 1.0, babl_format (format), a, GEGL_AUTO_ROWSTRIDE, GEGL_ABYSS_NONE);
      gegl_buffer_get (out, r, 1.0, babl_format (format), b, GEGL_AUTO_ROWSTRIDE, GEGL_ABYSS_NONE);
      CHECK (memcmp (a, b, bytes) == 0, "%s: not the CPU's halftone", what);
    }
  g_free (a);
  g_free (b);
}

static const gchar *const failure_formats[] = {
  "R'G'B'A u8", "Y' u8", "R'G'B' float", "Y'A float", "R'G'B'A u16",
};

static gboolean
is_float (const gchar *format)
{
  return strstr (format, "float") != NULL;
}

/* Frees the op's idle core context, so that the next calls make their
 * own and see the environment of the moment (HT_CUDA_MODULE). */
static void
drop_kept_context (GeglBuffer *in)
{
  g_setenv ("HT_GEGL_KEEP_SECONDS", "0", TRUE);
  g_object_unref (run_op (in, "backend", 1, NULL));
}

/* Every failure hands on the input itself, in its own format (colour and
 * gray, 8-bit, 16-bit and float), with a warning that says why; where the
 * failure is known before the run, prepare() announces that format too. */
static void
test_failures_pass_input_through (void)
{
  const gint w = 67, h = 41;
  guchar    *rgba = make_rgba8 (w, h);

  for (gsize k = 0; k < G_N_ELEMENTS (failure_formats); k++)
    {
      const gchar *fmt = failure_formats[k];
      GeglBuffer  *in  = buffer_from_rgba8 (rgba, w, h, fmt);
      const Babl  *announced = NULL;
      GeglBuffer  *out;
      gchar        what[128];

      /* a bad custom string */
      g_snprintf (what, sizeof what, "%s, bad coefficients", fmt);
      warnings = 0;
      out = run_op_announced (in, &announced, "algorithm", 8, "coefficients", "- * 7; 3 x 1", NULL);
      same_as_input (in, out, NULL, what);
      check_warning ("coefficients", what);
      CHECK (announced == babl_format (fmt), "%s: prepare announced %s", what, babl_get_name (announced));
      g_clear_object (&out);

      /* settings backend cuda refuses (ht_check) but the CPU runs: the
       * CPU's halftone, with a warning that says so (an image editor has
       * no use for a refusal; the CLI refuses) */
      g_snprintf (what, sizeof what, "%s, serpentine on backend cuda", fmt);
      {
        GeglBuffer *cpu = run_op (in, "serpentine", TRUE, "backend", 1, "color-mode", 1, NULL);

        warnings = 0;
        out = run_op_announced (in, &announced, "serpentine", TRUE, "backend", 2, "color-mode", 1, NULL);
        check_same_pixels (cpu, out, fmt, what);
        check_fallback_warning ("serpentine", what);
        CHECK (announced == babl_format (fmt), "%s: prepare announced %s", what, babl_get_name (announced));
        g_clear_object (&out);

        /* backend cuda without a usable GPU: a module that is not there */
        g_snprintf (what, sizeof what, "%s, backend cuda without a GPU", fmt);
        drop_kept_context (in);
        g_setenv ("HT_CUDA_MODULE", "/nonexistent/libhalftone-cuda.so", TRUE);
        g_object_unref (cpu);
        cpu = run_op (in, "backend", 1, NULL);
        warnings = 0;
        out = run_op (in, "backend", 2, NULL);
        check_same_pixels (cpu, out, fmt, what);
        check_fallback_warning ("/nonexistent/libhalftone-cuda.so", what);
        g_clear_object (&out);
        g_object_unref (cpu);
        g_unsetenv ("HT_CUDA_MODULE");
        g_unsetenv ("HT_GEGL_KEEP_SECONDS");
      }

      /* the library refuses the pixels: NaN */
      if (is_float (fmt))
        {
          const Babl   *f = babl_format (fmt);
          gfloat        px[4] = { 0.5f, 0.5f, 0.5f, 0.5f };
          GeglRectangle one = { 5, 3, 1, 1 };

          px[0] = NAN;
          gegl_buffer_set (in, &one, 0, f, px, GEGL_AUTO_ROWSTRIDE);
          g_snprintf (what, sizeof what, "%s, a NaN pixel", fmt);
          warnings = 0;
          for (gint color = 0; color <= 1; color++)
            {
              out = run_op (in, "color-mode", color, "backend", 1, NULL);
              same_as_input (in, out, NULL, what);
              check_warning ("NaN", what);
              g_clear_object (&out);
            }
        }
      g_object_unref (in);
    }
  g_free (rgba);
}

/* Blits `rect` of the op's output on `in` in the input's format, and
 * returns the output format the op announced (blit_op_valist). */
static guchar *
blit_op (GeglBuffer *in, const GeglRectangle *rect, const Babl **announced, const gchar *first_property, ...)
{
  guchar  *buf;
  va_list  ap;

  va_start (ap, first_property);
  buf = blit_op_valist (in, rect, NULL, announced, first_property, ap);
  va_end (ap);
  return buf;
}

/* Larger than the library takes, and out of memory: inputs of a side
 * beyond HT_MAX_SIDE, and of more than 10^9 pixels under an
 * address-space limit that leaves no room for them, run serpentine (a
 * scan that needs the whole image at once: in bands of rows, the rows
 * above a corner need little memory). The buffers are sparse and only a
 * corner is read back, so neither costs the memory it stands for. */
static void
test_failures_large (void)
{
  static const gchar *const fmts[] = { "R'G'B'A u8", "Y' u8", "R'G'B' float", "Y'A float" };
  const GeglRectangle corner = { 0, 0, 64, 16 };

  for (gsize k = 0; k < G_N_ELEMENTS (fmts); k++)
    {
      const Babl   *f = babl_format (fmts[k]);
      const gsize   bytes = (gsize) corner.width * (gsize) corner.height * (gsize) babl_format_get_bytes_per_pixel (f);
      GeglRectangle wide = { 0, 0, (gint) HT_MAX_SIDE + 1, corner.height };
      GeglRectangle big = { 0, 0, 40000, 30000 };
      GeglBuffer   *in = gegl_buffer_new (&wide, f);
      guchar       *rgba = make_rgba8 (corner.width, corner.height);
      guchar       *want = g_malloc (bytes), *got;
      const Babl   *announced = NULL;
      gchar         what[128];
      struct rlimit old, lim;
      FILE         *statm;
      unsigned long pages = 0;

      gegl_buffer_set (in, &corner, 0, babl_format ("R'G'B'A u8"), rgba, GEGL_AUTO_ROWSTRIDE);
      gegl_buffer_get (in, &corner, 1.0, f, want, GEGL_AUTO_ROWSTRIDE, GEGL_ABYSS_NONE);
      g_snprintf (what, sizeof what, "%s, %d pixels wide", fmts[k], wide.width);
      warnings = 0;
      got = blit_op (in, &corner, &announced, NULL);
      CHECK (memcmp (got, want, bytes) == 0, "%s: output pixels differ from the input's", what);
      check_warning ("larger than the library takes", what);
      CHECK (announced == f, "%s: the op announced %s", what, babl_get_name (announced));
      g_free (got);
      g_object_unref (in);

      /* out of memory: room for what GEGL needs, not for the image */
      in = gegl_buffer_new (&big, f);
      gegl_buffer_set (in, &corner, 0, babl_format ("R'G'B'A u8"), rgba, GEGL_AUTO_ROWSTRIDE);
      gegl_buffer_get (in, &corner, 1.0, f, want, GEGL_AUTO_ROWSTRIDE, GEGL_ABYSS_NONE);
      statm = fopen ("/proc/self/statm", "r");
      if (!statm || fscanf (statm, "%lu", &pages) != 1 || getrlimit (RLIMIT_AS, &old) != 0)
        {
          printf ("out of memory: not tested (no /proc/self/statm or RLIMIT_AS)\n");
          if (statm)
            fclose (statm);
          g_object_unref (in);
          g_free (rgba);
          g_free (want);
          continue;
        }
      fclose (statm);
      lim = old;
      lim.rlim_cur = (rlim_t) pages * (rlim_t) sysconf (_SC_PAGESIZE) + ((rlim_t) 512 << 20);
      if (old.rlim_cur != RLIM_INFINITY && lim.rlim_cur > old.rlim_cur)
        lim.rlim_cur = old.rlim_cur;
      g_snprintf (what, sizeof what, "%s, out of memory for %dx%d", fmts[k], big.width, big.height);
      warnings = 0;
      CHECK (setrlimit (RLIMIT_AS, &lim) == 0, "%s: setrlimit", what);
      got = blit_op (in, &corner, &announced, "backend", 1, "serpentine", TRUE, NULL);
      CHECK (setrlimit (RLIMIT_AS, &old) == 0, "%s: setrlimit back", what);
      CHECK (memcmp (got, want, bytes) == 0, "%s: output pixels differ from the input's", what);
      check_warning ("out of memory", what);
      CHECK (announced == f, "%s: the op announced %s", what, babl_get_name (announced));
      g_free (got);
      g_object_unref (in);
      g_free (rgba);
      g_free (want);
    }
}

/* backend=cuda: the same bits as the CPU, computed on the GPU where one
 * is usable; where not, on the CPU with a warning naming the problem (the
 * module itself loads anywhere). */
static void
test_backend_cuda (void)
{
  const gint  w = 67, h = 41;
  guchar     *rgba = make_rgba8 (w, h);
  GeglBuffer *in = buffer_from_rgba8 (rgba, w, h, "R'G'B'A u8");
  GeglBuffer *cpu = run_op (in, "backend", 1, NULL);
  GeglBuffer *gpu;
  guchar     *a, *b;

  warnings = 0;
  gpu = run_op (in, "backend", 2, NULL);
  a = get_pixels (cpu, "Y'A u8");
  b = get_pixels (gpu, "Y'A u8");
  CHECK (memcmp (a, b, (gsize) w * (gsize) h * 2) == 0, "cuda backend differs from the cpu backend");
  if (warnings > 0)
    CHECK ((strstr (last_warning->str, "cuda") != NULL || strstr (last_warning->str, "GPU") != NULL) &&
           strstr (last_warning->str, "computed on the CPU instead") != NULL,
           "backend cuda fell back without saying why: %s", last_warning->str);
  printf ("backend cuda: %s\n", warnings ? last_warning->str : "ran, identical to cpu");
  g_free (a); g_free (b);
  g_object_unref (cpu); g_object_unref (gpu); g_object_unref (in);
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

/* ------------------------------------------------- the kept context */

static gboolean
same_buffers (GeglBuffer *a, GeglBuffer *b)
{
  const GeglRectangle *ra = gegl_buffer_get_extent (a), *rb = gegl_buffer_get_extent (b);
  gboolean             same = gegl_rectangle_equal (ra, rb);

  if (same)
    {
      guchar *pa = get_pixels (a, "Y' u8"), *pb = get_pixels (b, "Y' u8");
      same = memcmp (pa, pb, (gsize) ra->width * (gsize) ra->height) == 0;
      g_free (pa);
      g_free (pb);
    }
  return same;
}

typedef struct
{
  GeglBuffer *in;
  GeglBuffer *want;
  gint        threads;
  gint        bad;
} Runner;

static gpointer
run_many (gpointer user)
{
  Runner *r = user;

  for (gint k = 0; k < 6; k++)
    {
      GeglBuffer *out = run_op (r->in, "threads", r->threads, "backend", 1, NULL);
      if (!out || !same_buffers (out, r->want))
        r->bad++;
      if (out)
        g_object_unref (out);
    }
  return NULL;
}

/* Runs the default main loop until the op frees its idle context (a
 * debug line), for at most 8 s. */
static gboolean
wait_freed (void)
{
  const gint   freed = g_atomic_int_get (&contexts_freed);
  const gint64 end = g_get_monotonic_time () + 8 * G_USEC_PER_SEC;

  while (g_atomic_int_get (&contexts_freed) == freed && g_get_monotonic_time () < end)
    if (!g_main_context_iteration (NULL, FALSE))
      g_usleep (20000);
  return g_atomic_int_get (&contexts_freed) == freed + 1;
}

/* Calls one after another share one core context, whatever their
 * settings; calls at the same time each get one of their own and the
 * same pixels; an idle context is freed after HT_GEGL_KEEP_SECONDS where
 * a main loop runs, and 0 keeps none. */
static void
test_kept_context (void)
{
  const gint  w = 257, h = 129;
  guchar     *rgba = make_rgba8 (w, h);
  GeglBuffer *in = buffer_from_rgba8 (rgba, w, h, "R'G'B'A u8");
  GeglBuffer *want = run_op (in, "threads", 1, "backend", 1, NULL);
  gint        made;

  g_setenv ("HT_GEGL_KEEP_SECONDS", "30", TRUE);
  made = g_atomic_int_get (&contexts_made);
  for (gint t = 0; t < 4; t++)
    {
      GeglBuffer *out = run_op (in, "threads", t, "backend", 1, NULL);
      CHECK (same_buffers (out, want), "kept context, threads %d: other pixels", t);
      g_object_unref (out);
    }
  CHECK (g_atomic_int_get (&contexts_made) == made, "4 calls one after another made %d core contexts, not 0",
         g_atomic_int_get (&contexts_made) - made);

  {
    Runner   r[3];
    GThread *th[3];

    for (gint i = 0; i < 3; i++)
      {
        r[i] = (Runner) { in, want, i + 1, 0 };
        th[i] = g_thread_new ("halftone-test", run_many, &r[i]);
      }
    for (gint i = 0; i < 3; i++)
      {
        g_thread_join (th[i]);
        CHECK (r[i].bad == 0, "calls at the same time (%d threads each): %d of 6 gave other pixels",
               r[i].threads, r[i].bad);
      }
  }

  /* freed once idle for HT_GEGL_KEEP_SECONDS, by a main loop */
  g_setenv ("HT_GEGL_KEEP_SECONDS", "1", TRUE);
  {
    GeglBuffer *out = run_op (in, "threads", 2, "backend", 1, NULL);

    g_object_unref (out);
    CHECK (wait_freed (), "the idle context was not freed within 8 s");
    made = g_atomic_int_get (&contexts_made);
    out = run_op (in, "threads", 2, "backend", 1, NULL);
    CHECK (g_atomic_int_get (&contexts_made) == made + 1, "no new context after the idle one was freed");
    CHECK (same_buffers (out, want), "after the idle context was freed: other pixels");
    g_object_unref (out);
    CHECK (wait_freed (), "the second idle context was not freed within 8 s");
  }

  /* 0: none kept */
  g_setenv ("HT_GEGL_KEEP_SECONDS", "0", TRUE);
  made = g_atomic_int_get (&contexts_made);
  for (gint k = 0; k < 3; k++)
    g_object_unref (run_op (in, "threads", 2, "backend", 1, NULL));
  CHECK (g_atomic_int_get (&contexts_made) == made + 3, "HT_GEGL_KEEP_SECONDS=0: %d contexts for 3 calls, not 3",
         g_atomic_int_get (&contexts_made) - made);
  g_unsetenv ("HT_GEGL_KEEP_SECONDS");

  g_object_unref (want);
  g_object_unref (in);
  g_free (rgba);
}

/* Runs the op on `in` (properties as run_op) with `cancel` as its
 * "halftone-cancel" flag; gives the output, and the run's
 * "halftone-failed" and "halftone-notice" (g_free them). */
static GeglBuffer *
run_op_embedded (GeglBuffer *in, gint *cancel, gchar **failed, gchar **notice, const gchar *first_property, ...)
{
  GeglNode   *g    = gegl_node_new ();
  GeglBuffer *out  = NULL;
  GeglNode   *src  = gegl_node_new_child (g, "operation", "gegl:buffer-source", "buffer", in, NULL);
  GeglNode   *op   = gegl_node_new_child (g, "operation", OP, NULL);
  GeglNode   *sink = gegl_node_new_child (g, "operation", "gegl:buffer-sink", "buffer", &out, NULL);
  GObject    *obj  = G_OBJECT (gegl_node_get_gegl_operation (op));
  va_list     ap;

  va_start (ap, first_property);
  gegl_node_set_valist (op, first_property, ap);
  va_end (ap);
  if (cancel)
    g_object_set_data (obj, "halftone-cancel", cancel);
  gegl_node_link_many (src, op, sink, NULL);
  gegl_node_process (sink);
  *failed = g_strdup (g_object_get_data (obj, "halftone-failed"));
  *notice = g_strdup (g_object_get_data (obj, "halftone-notice"));
  g_object_unref (g);
  return out;
}

/* What a program running the op in its own process (the GIMP 2.10
 * plug-in) reads and sets on the operation object: the reason of a
 * pass-through, the note of a fall-back to the CPU, and a cancel, which
 * passes the input on without a warning. */
static void
test_embedding (void)
{
  const gint  w = 300, h = 200;
  guchar     *rgba = make_rgba8 (w, h);
  GeglBuffer *in = buffer_from_rgba8 (rgba, w, h, "R'G'B'A u8");
  GeglBuffer *out;
  gchar      *failed, *notice;
  gint        cancel = 1;

  out = run_op_embedded (in, NULL, &failed, &notice, "backend", 1, NULL);
  CHECK (failed == NULL && notice == NULL, "a good run: failed %s, notice %s", failed, notice);
  g_clear_object (&out); g_free (failed); g_free (notice);

  out = run_op_embedded (in, NULL, &failed, &notice, "algorithm", 8, "coefficients", "- * 7; 3 x 1", NULL);
  CHECK (failed && strstr (failed, "position") && strstr (failed, "coefficients"),
         "bad coefficients: failed is %s", failed);
  same_as_input (in, out, NULL, "embedded, bad coefficients");
  g_clear_object (&out); g_free (failed); g_free (notice);

  out = run_op_embedded (in, NULL, &failed, &notice, "backend", 2, "serpentine", TRUE, NULL);
  CHECK (failed == NULL && notice && strstr (notice, "computed on the CPU"),
         "serpentine on cuda: failed %s, notice %s", failed, notice);
  g_clear_object (&out); g_free (failed); g_free (notice);

  warnings = 0;
  out = run_op_embedded (in, &cancel, &failed, &notice, "backend", 1, NULL);
  CHECK (g_strcmp0 (failed, "cancelled") == 0, "cancelled run: failed is %s", failed);
  CHECK (warnings == 0, "a cancel asked for warned: %s", last_warning->str);
  same_as_input (in, out, NULL, "embedded, cancelled");
  g_clear_object (&out); g_free (failed); g_free (notice);

  g_object_unref (in);
  g_free (rgba);
}

int
main (int argc, char **argv)
{
  last_warning = g_string_new ("");
  last_warning_domain = g_string_new ("");
  /* The op is GPL-3.0-or-later; GEGL only lists such ops to programs
   * that accept the GPL3 (gegl itself and GIMP do). */
  g_object_set (gegl_config (), "application-license", "GPL3", NULL);
  gegl_init (&argc, &argv);
  g_log_set_default_handler (log_handler, NULL);

  if (argc > 1 && strcmp (argv[1], "--print-reference-hash") == 0)
    {
      gboolean binary;
      gchar   *hash = reference_hash (&binary);
      printf ("%s%s\n", hash, binary ? "" : " (NOT binary!)");
      g_free (hash);
      gegl_exit ();
      return 0;
    }

  test_registered ();
  if (gegl_has_operation (OP))
    {
      test_reference_hash ();
      test_enums_are_library_lists ();
      test_enum_nicks ();
      test_properties ();
      test_formats ();
      test_equals_core ();
      test_search ();
      test_linear ();
      test_custom ();
      test_failures_pass_input_through ();
      test_failures_large ();
      test_partial_request ();
      test_backend_cuda ();
      test_embedding ();
      test_progress ();
      test_kept_context ();
    }
  printf ("%d checks, %d failed\n", checks, failures);
  g_string_free (last_warning, TRUE);
  g_string_free (last_warning_domain, TRUE);
  gegl_exit ();
  return failures ? 1 : 0;
}
