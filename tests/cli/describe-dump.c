/* Prints the library's description of its parameters as JSON, one
 * object a line, for the tests that hold a front end against it
 * (test_cli.py's "description" case): what the library says, read
 * through its public API, not from its sources. */
#include "halftone.h"

#include <stdio.h>

static const char *type_name(ht_param_type t)
{
  switch (t) {
  case HT_TYPE_INT: return "int";
  case HT_TYPE_NUMBER: return "number";
  case HT_TYPE_BOOL: return "bool";
  case HT_TYPE_CHOICE: return "choice";
  case HT_TYPE_TEXT: return "text";
  case HT_TYPE_SEED: return "seed";
  }
  return "?";
}

/* A JSON string: the description's texts hold no control characters,
 * only quotes and backslashes to escape. */
static void json_string(const char *s)
{
  putchar('"');
  for (; s && *s; s++) {
    if (*s == '"' || *s == '\\')
      putchar('\\');
    putchar(*s);
  }
  putchar('"');
}

int main(void)
{
  int nalg = 0, ncolor = 0;
  const ht_choice *alg = ht_choices(HT_LIST_ALGORITHMS, &nalg);
  const ht_choice *col = ht_choices(HT_LIST_COLOR_MODES, &ncolor);
  for (int id = 0; id < HT_PARAM_COUNT; id++) {
    const ht_param *d = ht_param_info((ht_param_id)id);
    printf("{\"id\": %d, \"name\": ", id);
    json_string(d->name);
    printf(", \"option\": ");
    json_string(d->option ? d->option : d->name);
    printf(", \"type\": \"%s\", \"min\": %.17g, \"max\": %.17g, \"default\": %.17g, \"default_text\": ",
           type_name(d->type), d->min, d->max, d->def);
    json_string(d->def_text ? d->def_text : "");
    printf(", \"context\": %s, \"per_plane\": %s, \"choices\": [", d->context ? "true" : "false",
           d->per_plane ? "true" : "false");
    int n = 0;
    const ht_choice *c = d->type == HT_TYPE_CHOICE ? ht_choices(d->list, &n) : NULL;
    for (int i = 0; i < n; i++) {
      printf("%s", i ? ", " : "");
      json_string(c[i].name);
    }
    /* used: [algorithm name, colour mode name] pairs */
    printf("], \"used\": [");
    int k = 0;
    for (int a = 0; a < nalg; a++)
      for (int m = 0; m < ncolor; m++)
        if (ht_param_used((ht_param_id)id, alg[a].value, (ht_color_mode)col[m].value)) {
          printf("%s[", k++ ? ", " : "");
          json_string(alg[a].name);
          printf(", ");
          json_string(col[m].name);
          printf("]");
        }
    printf("]}\n");
  }
  return 0;
}
