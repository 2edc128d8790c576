/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* ir-reader.c — OpenVINO IR v10/v11 .xml (GMarkup) and .bin (mapped) into an
 * M2iIrModel. The graph checks that need no kernel (edges, connectivity,
 * cycles, constant bounds) are made here; shapes are inferred at compile. */
#include "ir-private.h"
#include <base/m2i-error.h>
#include <base/m2i-fp16.h>

#include <errno.h>
#include <string.h>

/* Elements may nest this deep (an IR needs 8 levels, OpenVINO's rt_info a
 * few more); deeper is refused before anything else is done with it. */
#define MAX_XML_DEPTH 4096

typedef enum {
  K_NET, K_LAYERS, K_LAYER, K_DATA, K_INPUT, K_OUTPUT, K_PORT, K_DIM,
  K_RTINFO, K_ATTRIBUTE, K_EDGES, K_EDGE, K_MODEL_INFO, K_IGNORE,
} Kind;

typedef struct {
  gint64 from_layer, from_port, to_layer, to_port;
  gint line;
} RawEdge;

typedef struct {
  const char *origin;
  GMarkupParseContext *ctx;
  M2iIrModel *model;
  GArray *kinds;                 /* Kind stack */
  GArray *info_stack;            /* gint rt_info entries open (-1: <rt_info> itself) */
  M2iIrNode *layer;              /* layer being read */
  GArray *ports;                 /* M2iIrPort of the <input>/<output> being read */
  GHashTable *port_ids;          /* gint64* ids of those ports */
  M2iIrPort port;                /* port being read */
  GHashTable **rt_target;        /* rt_info table being filled */
  GString *text;                 /* <dim> text */
  GArray *edges;                 /* RawEdge */
  gboolean seen_net;
  const char *xml;               /* the text parsed, for positions */
  gsize xml_len;
  GArray *line_starts;           /* gsize offset of each line */
  gint elem_line;                /* line of the start tag being handled */
  gint last_line, last_col;      /* the last position converted ... */
  const char *last_pos;          /* ... and where it is in the text */
} Reader;

/* ---- messages ---------------------------------------------------------- */

static gint
reader_line (Reader *r)
{
  return r->elem_line;
}

/* GMarkup reports a start tag where it finished reading (often on a later
 * line); walk back from there to the tag's '<' so messages name the line
 * the user sees the element on. */
static gint
tag_line (Reader *r, const gchar *element)
{
  gint line = 0, col = 0;
  g_markup_parse_context_get_position (r->ctx, &line, &col);
  if (line < 1 || (guint) line > r->line_starts->len)
    return line;
  /* positions only move forward: continue from the last one on its line
   * (a whole model on one line must not cost a walk from its start) */
  const char *end = r->xml + r->xml_len;
  const char *p = r->xml + g_array_index (r->line_starts, gsize, line - 1);
  gint c = 1;
  if (line == r->last_line && col >= r->last_col && r->last_pos) {
    p = r->last_pos;
    c = r->last_col;
  }
  for (; c < col && p < end; c++)
    p = g_utf8_next_char (p);
  r->last_line = line;
  r->last_col = c;
  r->last_pos = p;
  if (p > end)                   /* a truncated UTF-8 sequence at the end */
    p = end;
  gsize elen = strlen (element);
  for (; p >= r->xml; p--) {
    if (p < end && *p == '<' && (gsize) (end - p) > elen && !memcmp (p + 1, element, elen))
      return MAX (line, 1);
    if (p > r->xml && p[-1] == '\n')
      line--;                    /* stepping back onto the previous line */
  }
  return 1;
}

static void G_GNUC_PRINTF (4, 5)
set_error_at (GError **error, const char *origin, gint line, const char *format, ...)
{
  va_list ap;
  va_start (ap, format);
  g_autofree gchar *msg = g_strdup_vprintf (format, ap);
  va_end (ap);
  if (line > 0)
    g_set_error (error, M2I_ERROR, M2I_ERROR_MALFORMED, "%s:%d: %s", origin, line, msg);
  else
    g_set_error (error, M2I_ERROR, M2I_ERROR_MALFORMED, "%s: %s", origin, msg);
}

/* Rewrites the code of an error just set (messages stay as written). */
static void
set_code (GError **error, gint code)
{
  if (error && *error)
    (*error)->code = code;
}

static const char *
find_attr (const gchar **names, const gchar **values, const char *key)
{
  for (gint i = 0; names[i]; i++)
    if (!strcmp (names[i], key))
      return values[i];
  return NULL;
}

static gboolean
parse_int (const char *s, gint64 min, gint64 *out)
{
  if (!s)
    return FALSE;
  gint64 v;
  g_autofree gchar *t = g_strstrip (g_strdup (s));
  if (!g_ascii_string_to_signed (t, 10, min, G_MAXINT64, &v, NULL))
    return FALSE;
  *out = v;
  return TRUE;
}

/* Required integer attribute @key of element @elem. */
static gboolean
int_attr (Reader *r, const gchar **names, const gchar **values, const char *elem,
    const char *key, gint64 *out, GError **error)
{
  const char *s = find_attr (names, values, key);
  if (!s) {
    set_error_at (error, r->origin, reader_line (r), "<%s> lacks the %s attribute", elem, key);
    return FALSE;
  }
  if (!parse_int (s, 0, out)) {
    set_error_at (error, r->origin, reader_line (r),
        "<%s %s=\"%s\">: not a non-negative integer", elem, key, s);
    return FALSE;
  }
  return TRUE;
}

/* Element types the runtime cannot hold, named so the message can say why. */
static const char *const sub_byte_types[] = {
  "u1", "u2", "u3", "u4", "u6", "i4", "nf4", "f4e2m1", "f8e4m3", "f8e5m2",
  "f8e8m0", "bin", "string", "dynamic", NULL
};

gboolean
ir_parse_element_type (const char *s, M2iElementType *out, GError **error)
{
  if (m2i_element_type_from_string (s, out) && *out != M2I_ET_UNDEFINED)
    return TRUE;
  for (gint i = 0; sub_byte_types[i]; i++) {
    if (!g_ascii_strcasecmp (s, sub_byte_types[i])) {
      g_set_error (error, M2I_ERROR, M2I_ERROR_UNSUPPORTED,
          "element type \"%s\" is not supported (m2i holds whole-byte types only: "
          "boolean, u8..u64, i8..i64, f16, bf16, f32, f64)", s);
      return FALSE;
    }
  }
  g_set_error (error, M2I_ERROR, M2I_ERROR_MALFORMED,
      "unknown element type \"%s\"", s);
  return FALSE;
}

/* ---- GMarkup callbacks ------------------------------------------------ */

static Kind
top_kind (Reader *r)
{
  return r->kinds->len ? g_array_index (r->kinds, Kind, r->kinds->len - 1) : (Kind) -1;
}

static void
push (Reader *r, Kind k)
{
  g_array_append_val (r->kinds, k);
}

static void
port_clear (M2iIrPort *p)
{
  g_clear_pointer (&p->names, g_free);
  g_clear_pointer (&p->rt_info, g_hash_table_unref);
}

static GHashTable *
new_string_table (void)
{
  return g_hash_table_new_full (g_str_hash, g_str_equal, g_free, g_free);
}

static gboolean
start_net (Reader *r, const gchar *element, const gchar **names,
    const gchar **values, GError **error)
{
  if (strcmp (element, "net")) {
    set_error_at (error, r->origin, reader_line (r),
        "the root element is <%s>, not <net>: not an OpenVINO IR file", element);
    return FALSE;
  }
  const char *version = find_attr (names, values, "version");
  gint64 v;
  if (!version || !parse_int (version, 0, &v)) {
    set_error_at (error, r->origin, reader_line (r),
        "<net> has no valid version attribute (IR version 10 or 11 expected)");
    return FALSE;
  }
  if (v != 10 && v != 11) {
    set_error_at (error, r->origin, reader_line (r),
        "IR version %s is not supported (only 10 and 11; convert the model "
        "with a recent OpenVINO model converter)", version);
    set_code (error, M2I_ERROR_UNSUPPORTED);
    return FALSE;
  }
  r->model->ir_version = (gint) v;
  g_free (r->model->name);
  r->model->name = g_strdup (find_attr (names, values, "name"));
  r->seen_net = TRUE;
  push (r, K_NET);
  return TRUE;
}

static gboolean
start_layer (Reader *r, const gchar **names, const gchar **values, GError **error)
{
  gint64 id;
  if (!int_attr (r, names, values, "layer", "id", &id, error))
    return FALSE;
  const char *type = find_attr (names, values, "type");
  const char *version = find_attr (names, values, "version");
  if (!type || !*type) {
    set_error_at (error, r->origin, reader_line (r), "layer %" G_GINT64_FORMAT
        " has no type attribute", id);
    return FALSE;
  }
  if (!version) {
    set_error_at (error, r->origin, reader_line (r), "layer %" G_GINT64_FORMAT
        " (%s) has no version attribute (the opset, e.g. \"opset1\")", id, type);
    return FALSE;
  }
  r->layer = m2i_ir_node_new (id, find_attr (names, values, "name"), type, version);
  r->layer->line = reader_line (r);
  push (r, K_LAYER);
  return TRUE;
}

static gboolean
start_port (Reader *r, const gchar **names, const gchar **values, GError **error)
{
  M2iIrPort p = { 0 };
  if (!int_attr (r, names, values, "port", "id", &p.id, error))
    return FALSE;
  /* ids seen in this <input>/<output> (a set: layers may have many ports) */
  if (g_hash_table_contains (r->port_ids, &p.id)) {
    set_error_at (error, r->origin, reader_line (r), "layer %" G_GINT64_FORMAT
        ": duplicate %s port id %" G_GINT64_FORMAT, r->layer->id,
        top_kind (r) == K_INPUT ? "input" : "output", p.id);
    return FALSE;
  }
  gint64 *key = g_new (gint64, 1);
  *key = p.id;
  g_hash_table_add (r->port_ids, key);
  const char *precision = find_attr (names, values, "precision");
  if (precision) {
    GError *e = NULL;
    if (!ir_parse_element_type (precision, &p.type, &e)) {
      set_error_at (error, r->origin, reader_line (r), "layer %" G_GINT64_FORMAT
          " port %" G_GINT64_FORMAT ": %s", r->layer->id, p.id, e->message);
      set_code (error, e->code);
      g_error_free (e);
      return FALSE;
    }
  }
  p.names = g_strdup (find_attr (names, values, "names"));
  p.line = reader_line (r);
  r->port = p;
  push (r, K_PORT);
  return TRUE;
}

static gboolean
start_edge (Reader *r, const gchar **names, const gchar **values, GError **error)
{
  RawEdge e = { .line = reader_line (r) };
  if (!int_attr (r, names, values, "edge", "from-layer", &e.from_layer, error) ||
      !int_attr (r, names, values, "edge", "from-port", &e.from_port, error) ||
      !int_attr (r, names, values, "edge", "to-layer", &e.to_layer, error) ||
      !int_attr (r, names, values, "edge", "to-port", &e.to_port, error))
    return FALSE;
  g_array_append_val (r->edges, e);
  push (r, K_EDGE);
  return TRUE;
}

/* An element of the model's rt_info (or v10 meta_data), kept as read. */
static void
start_model_info (Reader *r, const gchar *element, const gchar **names,
    const gchar **values)
{
  if (!r->model->rt_info)
    r->model->rt_info = ir_rt_info_new ();
  gint parent = r->info_stack->len ?
      g_array_index (r->info_stack, gint, r->info_stack->len - 1) : -1;
  gint e = ir_rt_info_add (r->model->rt_info, parent, element,
      find_attr (names, values, "name"), find_attr (names, values, "value"));
  g_array_append_val (r->info_stack, e);
  push (r, K_MODEL_INFO);
}

static void
on_start (GMarkupParseContext *ctx, const gchar *element, const gchar **names,
    const gchar **values, gpointer user_data, GError **error)
{
  Reader *r = user_data;
  r->elem_line = tag_line (r, element);
  if (r->kinds->len >= MAX_XML_DEPTH) {
    set_error_at (error, r->origin, reader_line (r), "<%s>: elements nest more than %d levels "
        "deep (an IR needs about 8): refused", element, MAX_XML_DEPTH);
    set_code (error, M2I_ERROR_LIMIT);
    return;
  }
  if (!r->kinds->len) {
    if (r->seen_net) {
      set_error_at (error, r->origin, reader_line (r), "a second root element <%s>", element);
      return;
    }
    start_net (r, element, names, values, error);
    return;
  }
  switch (top_kind (r)) {
    case K_NET:
      if (!strcmp (element, "layers"))
        push (r, K_LAYERS);
      else if (!strcmp (element, "edges"))
        push (r, K_EDGES);
      else if (!strcmp (element, "rt_info")) {
        /* rt_info keys are relative: <rt_info> itself is no entry */
        gint top = -1;
        g_array_append_val (r->info_stack, top);
        push (r, K_MODEL_INFO);
      } else if (!strcmp (element, "meta_data")) {
        /* meta_data keys keep their prefix */
        start_model_info (r, element, names, values);
      } else
        push (r, K_IGNORE);
      return;
    case K_LAYERS:
      if (!strcmp (element, "layer"))
        start_layer (r, names, values, error);
      else
        push (r, K_IGNORE);
      return;
    case K_LAYER:
      if (!strcmp (element, "data")) {
        for (gint i = 0; names[i]; i++)
          m2i_ir_node_set_attr (r->layer, names[i], values[i]);
        push (r, K_DATA);
      } else if (!strcmp (element, "input") || !strcmp (element, "output")) {
        gboolean in = !strcmp (element, "input");
        if (in ? r->layer->inputs != NULL : r->layer->outputs != NULL) {
          set_error_at (error, r->origin, reader_line (r), "layer %" G_GINT64_FORMAT
              " has a second <%s>", r->layer->id, element);
          return;
        }
        g_array_set_size (r->ports, 0);
        g_hash_table_remove_all (r->port_ids);
        push (r, in ? K_INPUT : K_OUTPUT);
      } else if (!strcmp (element, "rt_info")) {
        r->rt_target = &r->layer->rt_info;
        push (r, K_RTINFO);
      } else {
        if (!strcmp (element, "body") || !strcmp (element, "then_body") ||
            !strcmp (element, "else_body"))
          r->layer->has_body = TRUE;
        push (r, K_IGNORE);
      }
      return;
    case K_INPUT:
    case K_OUTPUT:
      if (!strcmp (element, "port"))
        start_port (r, names, values, error);
      else
        push (r, K_IGNORE);
      return;
    case K_PORT:
      if (!strcmp (element, "dim")) {
        g_string_truncate (r->text, 0);
        push (r, K_DIM);
      } else if (!strcmp (element, "rt_info")) {
        r->rt_target = &r->port.rt_info;
        push (r, K_RTINFO);
      } else
        push (r, K_IGNORE);
      return;
    case K_RTINFO:
      if (!strcmp (element, "attribute")) {
        const char *name = find_attr (names, values, "name");
        const char *value = find_attr (names, values, "value");
        if (name) {
          if (!*r->rt_target)
            *r->rt_target = new_string_table ();
          g_hash_table_insert (*r->rt_target, g_strdup (name), g_strdup (value ? value : ""));
        }
      }
      push (r, K_IGNORE);
      return;
    case K_EDGES:
      if (!strcmp (element, "edge"))
        start_edge (r, names, values, error);
      else
        push (r, K_IGNORE);
      return;
    case K_MODEL_INFO:
      start_model_info (r, element, names, values);
      return;
    default:
      push (r, K_IGNORE);
      return;
  }
}

static gboolean
end_dim (Reader *r, GError **error)
{
  gint64 d;
  const char *s = r->text->str;
  if (!parse_int (s, G_MININT64, &d)) {
    set_error_at (error, r->origin, reader_line (r), "layer %" G_GINT64_FORMAT
        " port %" G_GINT64_FORMAT ": <dim>%s</dim> is not an integer", r->layer->id,
        r->port.id, s);
    return FALSE;
  }
  if (d < 0 && d != M2I_DIM_DYNAMIC) {
    set_error_at (error, r->origin, reader_line (r), "layer %" G_GINT64_FORMAT
        " port %" G_GINT64_FORMAT ": <dim>%s</dim> is negative (-1 is the only negative "
        "dimension: a dynamic one)", r->layer->id, r->port.id, s);
    return FALSE;
  }
  if (r->port.shape.rank == M2I_MAX_RANK) {
    set_error_at (error, r->origin, reader_line (r), "layer %" G_GINT64_FORMAT
        " port %" G_GINT64_FORMAT ": more than %d dimensions", r->layer->id,
        r->port.id, M2I_MAX_RANK);
    set_code (error, M2I_ERROR_UNSUPPORTED);
    return FALSE;
  }
  r->port.shape.dims[r->port.shape.rank++] = d;
  return TRUE;
}

static gboolean
end_layer (Reader *r, GError **error)
{
  M2iIrNode *n = r->layer;
  r->layer = NULL;
  if (g_hash_table_contains (r->model->by_id, &n->id)) {
    M2iIrNode *other = g_hash_table_lookup (r->model->by_id, &n->id);
    set_error_at (error, r->origin, n->line, "duplicate layer id %" G_GINT64_FORMAT
        " (also used at line %d)", n->id, other->line);
    m2i_ir_node_free (n);
    return FALSE;
  }
  n->sources = g_new0 (M2iIrSource, MAX (n->n_inputs, 1));
  for (gint i = 0; i < n->n_inputs; i++)
    n->sources[i].port = -1;
  n->index = r->model->nodes->len;
  g_ptr_array_add (r->model->nodes, n);
  g_hash_table_insert (r->model->by_id, &n->id, n);
  return TRUE;
}

static void
on_end (GMarkupParseContext *ctx, const gchar *element, gpointer user_data,
    GError **error)
{
  Reader *r = user_data;
  Kind k = top_kind (r);
  g_array_set_size (r->kinds, r->kinds->len - 1);
  switch (k) {
    case K_DIM:
      end_dim (r, error);
      break;
    case K_PORT:
      g_array_append_val (r->ports, r->port);
      memset (&r->port, 0, sizeof r->port);
      break;
    case K_INPUT:
    case K_OUTPUT: {
      gint n = r->ports->len;
      M2iIrPort *ports = (M2iIrPort *) g_array_free (r->ports, FALSE);
      r->ports = g_array_new (FALSE, TRUE, sizeof (M2iIrPort));
      /* an empty <input/> still counts as given */
      if (!ports)
        ports = g_new0 (M2iIrPort, 1);
      if (k == K_INPUT) {
        r->layer->inputs = ports;
        r->layer->n_inputs = n;
      } else {
        r->layer->outputs = ports;
        r->layer->n_outputs = n;
      }
      break;
    }
    case K_LAYER:
      end_layer (r, error);
      break;
    case K_MODEL_INFO:
      g_array_set_size (r->info_stack, r->info_stack->len - 1);
      break;
    default:
      break;
  }
}

static void
on_text (GMarkupParseContext *ctx, const gchar *text, gsize len,
    gpointer user_data, GError **error)
{
  Reader *r = user_data;
  if (top_kind (r) == K_DIM)
    g_string_append_len (r->text, text, len);
}

static const GMarkupParser parser_callbacks = { on_start, on_end, on_text, NULL, NULL };

/* ---- the graph -------------------------------------------------------- */

static const char *
layer_label (const M2iIrNode *n, gchar *buf, gsize len)
{
  g_snprintf (buf, len, "layer %" G_GINT64_FORMAT " '%s' (%s)", n->id, n->name, n->type);
  return buf;
}

/* Port ordinals by (layer index, direction, port id): edges look ports up
 * in constant time however many ports a layer has. */
typedef struct {
  gint node;
  gint output;
  gint64 id;
} PortKey;

static guint
port_key_hash (gconstpointer p)
{
  const PortKey *k = p;
  return g_int64_hash (&k->id) ^ ((guint) k->node * 2654435761u) ^ (guint) k->output;
}

static gboolean
port_key_equal (gconstpointer a, gconstpointer b)
{
  const PortKey *x = a, *y = b;
  return x->node == y->node && x->output == y->output && x->id == y->id;
}

static GHashTable *
port_index (const M2iIrModel *m)
{
  GHashTable *t = g_hash_table_new_full (port_key_hash, port_key_equal, g_free, NULL);
  for (guint i = 0; i < m->nodes->len; i++) {
    const M2iIrNode *n = g_ptr_array_index (m->nodes, i);
    for (gint dir = 0; dir < 2; dir++) {
      const M2iIrPort *ports = dir ? n->outputs : n->inputs;
      gint count = dir ? n->n_outputs : n->n_inputs;
      for (gint p = 0; p < count; p++) {
        PortKey *k = g_new (PortKey, 1);
        *k = (PortKey) { n->index, dir, ports[p].id };
        g_hash_table_insert (t, k, GINT_TO_POINTER (p + 1));
      }
    }
  }
  return t;
}

static gint
find_port (GHashTable *index, const M2iIrNode *n, gboolean output, gint64 id)
{
  PortKey k = { n->index, output, id };
  return GPOINTER_TO_INT (g_hash_table_lookup (index, &k)) - 1;
}

static gboolean
connect_edges (Reader *r, GError **error)
{
  M2iIrModel *m = r->model;
  gchar a[256], b[256];
  g_autoptr (GHashTable) ports = port_index (m);
  for (guint i = 0; i < r->edges->len; i++) {
    RawEdge *e = &g_array_index (r->edges, RawEdge, i);
    M2iIrNode *from = g_hash_table_lookup (m->by_id, &e->from_layer);
    M2iIrNode *to = g_hash_table_lookup (m->by_id, &e->to_layer);
    if (!from || !to) {
      set_error_at (error, r->origin, e->line, "dangling edge: there is no layer with id %"
          G_GINT64_FORMAT, from ? e->to_layer : e->from_layer);
      return FALSE;
    }
    gint fp = find_port (ports, from, TRUE, e->from_port);
    gint tp = find_port (ports, to, FALSE, e->to_port);
    if (fp < 0) {
      set_error_at (error, r->origin, e->line, "dangling edge: %s has no output port %"
          G_GINT64_FORMAT, layer_label (from, a, sizeof a), e->from_port);
      return FALSE;
    }
    if (tp < 0) {
      set_error_at (error, r->origin, e->line, "dangling edge: %s has no input port %"
          G_GINT64_FORMAT, layer_label (to, a, sizeof a), e->to_port);
      return FALSE;
    }
    if (to->sources[tp].node) {
      set_error_at (error, r->origin, e->line, "%s: input port %" G_GINT64_FORMAT
          " is connected by more than one edge", layer_label (to, a, sizeof a), e->to_port);
      return FALSE;
    }
    const M2iShape *fs = &from->outputs[fp].shape, *ts = &to->inputs[tp].shape;
    if (!ir_shape_fits (fs, ts)) {
      g_autofree gchar *s1 = m2i_shape_to_string (fs);
      g_autofree gchar *s2 = m2i_shape_to_string (ts);
      set_error_at (error, r->origin, e->line, "shape mismatch on edge: %s output port %"
          G_GINT64_FORMAT " has dims %s but %s input port %" G_GINT64_FORMAT " declares %s",
          layer_label (from, a, sizeof a), e->from_port, s1,
          layer_label (to, b, sizeof b), e->to_port, s2);
      return FALSE;
    }
    M2iElementType ft = from->outputs[fp].type, tt = to->inputs[tp].type;
    if (ft != M2I_ET_UNDEFINED && tt != M2I_ET_UNDEFINED && ft != tt) {
      set_error_at (error, r->origin, e->line, "type mismatch on edge: %s output port %"
          G_GINT64_FORMAT " is %s but %s input port %" G_GINT64_FORMAT " declares %s",
          layer_label (from, a, sizeof a), e->from_port, m2i_element_type_to_string (ft),
          layer_label (to, b, sizeof b), e->to_port, m2i_element_type_to_string (tt));
      return FALSE;
    }
    to->sources[tp].node = from;
    to->sources[tp].port = fp;
    M2iIrEdge edge = { from->index, fp, to->index, tp };
    g_array_append_val (m->edges, edge);
  }
  for (guint i = 0; i < m->nodes->len; i++) {
    M2iIrNode *n = g_ptr_array_index (m->nodes, i);
    for (gint p = 0; p < n->n_inputs; p++) {
      if (!n->sources[p].node) {
        set_error_at (error, r->origin, n->inputs[p].line, "%s: input port %" G_GINT64_FORMAT
            " is not connected to any edge", layer_label (n, a, sizeof a), n->inputs[p].id);
        return FALSE;
      }
    }
    if (!strcmp (n->type, "Parameter"))
      g_ptr_array_add (m->parameters, n);
    else if (!strcmp (n->type, "Result"))
      g_ptr_array_add (m->results, n);
  }
  if (!m->results->len) {
    set_error_at (error, r->origin, 0, "the model has no Result layer, so it computes nothing");
    return FALSE;
  }
  return TRUE;
}

/* Kahn's algorithm; on a cycle, walks producers from a leftover layer until
 * one repeats and reports that loop. */
static gboolean
sort_topologically (Reader *r, GError **error)
{
  M2iIrModel *m = r->model;
  gint n = m->nodes->len;
  g_autofree gint *pending = g_new0 (gint, MAX (n, 1));
  g_autofree gint *consumers_start = g_new0 (gint, n + 1);
  g_autofree gint *consumers = g_new0 (gint, MAX (m->edges->len, 1));
  for (guint e = 0; e < m->edges->len; e++) {
    M2iIrEdge *edge = &g_array_index (m->edges, M2iIrEdge, e);
    pending[edge->to_node]++;
    consumers_start[edge->from_node + 1]++;
  }
  for (gint i = 0; i < n; i++)
    consumers_start[i + 1] += consumers_start[i];
  g_autofree gint *fill = g_memdup2 (consumers_start, sizeof (gint) * (n + 1));
  for (guint e = 0; e < m->edges->len; e++) {
    M2iIrEdge *edge = &g_array_index (m->edges, M2iIrEdge, e);
    consumers[fill[edge->from_node]++] = edge->to_node;
  }
  m->topo = g_new (gint, MAX (n, 1));
  gint head = 0, tail = 0;
  for (gint i = 0; i < n; i++)
    if (!pending[i])
      m->topo[tail++] = i;
  while (head < tail) {
    gint v = m->topo[head++];
    for (gint c = consumers_start[v]; c < consumers_start[v + 1]; c++)
      if (--pending[consumers[c]] == 0)
        m->topo[tail++] = consumers[c];
  }
  if (tail == n)
    return TRUE;

  /* every leftover layer has a leftover producer: follow them to a loop */
  g_autofree gint *seen_at = g_new (gint, MAX (n, 1));
  for (gint i = 0; i < n; i++)
    seen_at[i] = -1;
  gint v = 0;
  while (!pending[v])
    v++;
  GArray *walk = g_array_new (FALSE, FALSE, sizeof (gint));
  while (seen_at[v] < 0) {
    seen_at[v] = walk->len;
    g_array_append_val (walk, v);
    M2iIrNode *node = g_ptr_array_index (m->nodes, v);
    for (gint p = 0; p < node->n_inputs; p++) {
      if (pending[node->sources[p].node->index]) {
        v = node->sources[p].node->index;
        break;
      }
    }
  }
  GString *loop = g_string_new (NULL);
  for (gint i = walk->len - 1; i >= seen_at[v]; i--) {
    M2iIrNode *node = g_ptr_array_index (m->nodes, g_array_index (walk, gint, i));
    g_string_append_printf (loop, "layer %" G_GINT64_FORMAT " '%s' -> ", node->id, node->name);
  }
  /* the walk went against the data flow: close the loop where it was printed first */
  M2iIrNode *first = g_ptr_array_index (m->nodes, g_array_index (walk, gint, walk->len - 1));
  g_string_append_printf (loop, "layer %" G_GINT64_FORMAT " '%s'", first->id, first->name);
  set_error_at (error, r->origin, first->line, "the graph has a cycle: %s", loop->str);
  g_string_free (loop, TRUE);
  g_array_free (walk, TRUE);
  return FALSE;
}

/* ---- constants -------------------------------------------------------- */

static gboolean
node_type_attr (Reader *r, M2iIrNode *n, const M2iIrPort *port, M2iElementType *out,
    GError **error)
{
  const char *s = m2i_ir_node_get_attr (n, "element_type");
  gchar label[256];
  if (!s) {
    if (port && port->type != M2I_ET_UNDEFINED) {
      *out = port->type;
      return TRUE;
    }
    set_error_at (error, r->origin, n->line, "%s: no element_type attribute and no "
        "output precision", layer_label (n, label, sizeof label));
    return FALSE;
  }
  GError *e = NULL;
  if (!ir_parse_element_type (s, out, &e)) {
    set_error_at (error, r->origin, n->line, "%s: %s", layer_label (n, label, sizeof label),
        e->message);
    set_code (error, e->code);
    g_error_free (e);
    return FALSE;
  }
  return TRUE;
}

/* The shape attribute (both spellings), checked against output port 0;
 * dynamic dims only where @dynamic (Parameters). */
static gboolean
node_shape_attr (Reader *r, M2iIrNode *n, gboolean dynamic, M2iShape *out, GError **error)
{
  const char *s = m2i_ir_node_get_attr (n, "shape");
  gchar label[256];
  const M2iIrPort *port = n->n_outputs ? &n->outputs[0] : NULL;
  if (!s) {
    if (!port) {
      set_error_at (error, r->origin, n->line, "%s: no shape attribute and no output port",
          layer_label (n, label, sizeof label));
      return FALSE;
    }
    *out = port->shape;
    if (!dynamic && !m2i_shape_is_static (out)) {
      g_autofree gchar *s1 = m2i_shape_to_string (out);
      set_error_at (error, r->origin, n->line, "%s: its output port declares dynamic dims %s",
          layer_label (n, label, sizeof label), s1);
      set_code (error, M2I_ERROR_UNSUPPORTED);
      return FALSE;
    }
    return TRUE;
  }
  GError *e = NULL;
  if (!(dynamic ? ir_shape_parse_dynamic (s, out, &e) : m2i_shape_parse (s, out, &e))) {
    set_error_at (error, r->origin, n->line, "%s: %s", layer_label (n, label, sizeof label),
        e->message);
    set_code (error, e->code);
    g_error_free (e);
    return FALSE;
  }
  if (port && !ir_shape_fits (&port->shape, out)) {
    g_autofree gchar *s1 = m2i_shape_to_string (out);
    g_autofree gchar *s2 = m2i_shape_to_string (&port->shape);
    set_error_at (error, r->origin, n->line, "shape mismatch: %s has shape=\"%s\" %s but "
        "its output port declares %s", layer_label (n, label, sizeof label), s, s1, s2);
    return FALSE;
  }
  return TRUE;
}

static gboolean
open_weights (Reader *r, const char *bin_path, const M2iIrNode *user, GError **error)
{
  if (r->model->weights)
    return TRUE;
  gchar label[256];
  if (!bin_path) {
    set_error_at (error, r->origin, user->line, "%s needs weights, but no .bin was given",
        layer_label (user, label, sizeof label));
    set_code (error, M2I_ERROR_IO);
    return FALSE;
  }
  GError *e = NULL;
  GMappedFile *f = g_mapped_file_new (bin_path, FALSE, &e);
  if (!f) {
    g_set_error (error, M2I_ERROR, M2I_ERROR_IO, "%s: cannot open the weights file "
        "(needed by %s): %s", r->origin, layer_label (user, label, sizeof label), e->message);
    g_error_free (e);
    return FALSE;
  }
  r->model->weights = g_mapped_file_get_bytes (f);
  g_mapped_file_unref (f);
  g_free (r->model->bin_path);
  r->model->bin_path = g_strdup (bin_path);
  return TRUE;
}

static gboolean
load_const (Reader *r, M2iIrNode *n, const char *bin_path, GError **error)
{
  gchar label[256];
  layer_label (n, label, sizeof label);
  if (n->n_outputs != 1 || n->n_inputs != 0) {
    set_error_at (error, r->origin, n->line, "%s must have no input and one output port", label);
    return FALSE;
  }
  M2iElementType type;
  M2iShape shape;
  if (!node_type_attr (r, n, &n->outputs[0], &type, error) ||
      !node_shape_attr (r, n, FALSE, &shape, error))
    return FALSE;
  gint64 offset, size;
  const char *so = m2i_ir_node_get_attr (n, "offset");
  const char *ss = m2i_ir_node_get_attr (n, "size");
  if (!so || !ss || !parse_int (so, 0, &offset) || !parse_int (ss, 0, &size)) {
    set_error_at (error, r->origin, n->line, "%s: offset=\"%s\" size=\"%s\" must be "
        "non-negative integers", label, so ? so : "(absent)", ss ? ss : "(absent)");
    return FALSE;
  }
  gint64 numel = m2i_shape_numel (&shape);
  gint64 esize = (gint64) m2i_element_type_size (type);
  if (numel < 0 || numel > G_MAXINT64 / esize || numel * esize != size) {
    g_autofree gchar *s = m2i_shape_to_string (&shape);
    set_error_at (error, r->origin, n->line, "%s: size mismatch: shape %s of %s needs %"
        G_GINT64_FORMAT " bytes but size=\"%s\"", label, s, m2i_element_type_to_string (type),
        numel < 0 || numel > G_MAXINT64 / esize ? (gint64) -1 : numel * esize, ss);
    return FALSE;
  }
  if (!open_weights (r, bin_path, n, error))
    return FALSE;
  gsize bin_len = g_bytes_get_size (r->model->weights);
  if ((guint64) offset > bin_len || (guint64) size > bin_len - (guint64) offset) {
    set_error_at (error, r->origin, n->line, "%s: offset=%" G_GINT64_FORMAT " size=%"
        G_GINT64_FORMAT " reaches past the end of the weights (%" G_GSIZE_FORMAT " bytes%s%s)",
        label, offset, size, bin_len, r->model->bin_path ? " in " : "",
        r->model->bin_path ? r->model->bin_path : "");
    return FALSE;
  }
  /* an empty constant still has data (kernels tell constants by data != NULL) */
  static const guint64 empty[1];
  const guint8 *base = g_bytes_get_data (r->model->weights, NULL);
  const guint8 *data = size == 0 || !base ? (const guint8 *) empty : base + offset;
  n->const_declared = type;
  n->const_value.shape = shape;
  if (type == M2I_ET_F16) {
    /* OpenVINO's CPU plugin computes f16 models in f32: widen once here */
    float *wide = g_malloc (MAX (numel, 1) * sizeof (float));
    if (((guintptr) data & 1) == 0)
      m2i_f16_to_f32_n ((const m2i_f16 *) data, wide, numel);
    else
      for (gint64 i = 0; i < numel; i++) {
        m2i_f16 h;
        memcpy (&h, data + 2 * i, 2);
        wide[i] = m2i_f16_to_f32 (h);
      }
    n->const_owned = wide;
    n->const_value.type = M2I_ET_F32;
    n->const_value.data = wide;
  } else if ((guintptr) data % esize) {
    /* kernels read typed elements: give them an aligned copy */
    n->const_owned = g_malloc (MAX (size, 1));
    memcpy (n->const_owned, data, size);
    n->const_value.type = type;
    n->const_value.data = n->const_owned;
  } else {
    n->const_value.type = type;
    n->const_value.data = (gpointer) data;
  }
  return TRUE;
}

static gboolean
check_parameter (Reader *r, M2iIrNode *n, M2iIrIoInfo *info, GError **error)
{
  gchar label[256];
  if (n->n_outputs != 1 || n->n_inputs != 0) {
    set_error_at (error, r->origin, n->line, "%s must have no input and one output port",
        layer_label (n, label, sizeof label));
    return FALSE;
  }
  if (!node_type_attr (r, n, &n->outputs[0], &info->type, error) ||
      !node_shape_attr (r, n, TRUE, &info->shape, error))
    return FALSE;
  info->name = n->name;
  info->node = n;
  return TRUE;
}

static gboolean
check_result (Reader *r, M2iIrNode *n, M2iIrIoInfo *info, GError **error)
{
  gchar label[256];
  if (n->n_inputs != 1) {
    set_error_at (error, r->origin, n->line, "%s must have exactly one input port",
        layer_label (n, label, sizeof label));
    return FALSE;
  }
  M2iIrNode *src = n->sources[0].node;
  gint port = n->sources[0].port;
  const char *names = src->outputs[port].names;
  g_autofree gchar *name = NULL;
  if (names && *names) {
    const char *comma = strchr (names, ',');
    name = g_strstrip (comma ? g_strndup (names, comma - names) : g_strdup (names));
  } else if (port > 0)
    name = g_strdup_printf ("%s.%d", src->name, port);
  else
    name = g_strdup (src->name);
  /* the model owns the name (freed with it) */
  g_ptr_array_add (r->model->names, g_steal_pointer (&name));
  info->name = g_ptr_array_index (r->model->names, r->model->names->len - 1);
  info->type = src->outputs[port].type;
  info->shape = src->outputs[port].shape;
  info->node = n;
  return TRUE;
}

/* Removes from @port the names @seen gives to another port, claims the
 * others. */
static gint
claim_names (M2iIrPort *port, GHashTable *seen)
{
  if (!port->names)
    return 0;
  g_auto (GStrv) names = g_strsplit (port->names, ",", -1);
  GString *kept = g_string_new (NULL);
  gint dropped = 0;
  for (gchar **it = names; *it; it++) {
    g_strstrip (*it);
    if (!**it)
      continue;
    M2iIrPort *owner = g_hash_table_lookup (seen, *it);
    if (owner && owner != port) {
      dropped++;
      continue;
    }
    if (!owner)
      g_hash_table_insert (seen, g_strdup (*it), port);
    if (kept->len)
      g_string_append_c (kept, ',');
    g_string_append (kept, *it);
  }
  if (dropped) {
    g_free (port->names);
    port->names = kept->len ? g_strdup (kept->str) : NULL;
  }
  g_string_free (kept, TRUE);
  return dropped;
}

/* A tensor name names one tensor. Model Optimizer sometimes gave two the
 * same (the input "data" and the scaled input after it): the name stays
 * with a model output's tensor, else an input's, else the first in the
 * file, and the other tensors lose it (they keep their other names, or
 * are named by their layer), so names look tensors up unambiguously. */
static void
unique_tensor_names (Reader *r)
{
  M2iIrModel *m = r->model;
  GHashTable *seen = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, NULL);
  gint dropped = 0;
  /* (malformed Results and Parameters are refused after this, by
   * check_result() and check_parameter()) */
  for (guint i = 0; i < m->results->len; i++) {
    const M2iIrNode *res = g_ptr_array_index (m->results, i);
    if (res->n_inputs == 1)
      dropped += claim_names (&res->sources[0].node->outputs[res->sources[0].port], seen);
  }
  for (guint i = 0; i < m->parameters->len; i++) {
    M2iIrNode *par = g_ptr_array_index (m->parameters, i);
    if (par->n_outputs >= 1)
      dropped += claim_names (&par->outputs[0], seen);
  }
  for (guint i = 0; i < m->nodes->len; i++) {
    M2iIrNode *n = g_ptr_array_index (m->nodes, i);
    for (gint p = 0; p < n->n_outputs; p++)
      dropped += claim_names (&n->outputs[p], seen);
  }
  if (dropped)
    g_debug ("%s: %d tensor name%s named more than one tensor; each now names the first "
        "(model outputs, then inputs, then file order)", r->origin, dropped, dropped > 1 ? "s" : "");
  g_hash_table_unref (seen);
}

static gboolean
finish (Reader *r, const char *bin_path, GError **error)
{
  M2iIrModel *m = r->model;
  if (!connect_edges (r, error) || !sort_topologically (r, error))
    return FALSE;
  unique_tensor_names (r);
  for (guint i = 0; i < m->nodes->len; i++) {
    M2iIrNode *n = g_ptr_array_index (m->nodes, i);
    if (!strcmp (n->type, "Const") && !load_const (r, n, bin_path, error))
      return FALSE;
  }
  m->input_info = g_new0 (M2iIrIoInfo, MAX (m->parameters->len, 1));
  m->output_info = g_new0 (M2iIrIoInfo, m->results->len);
  for (guint i = 0; i < m->parameters->len; i++)
    if (!check_parameter (r, g_ptr_array_index (m->parameters, i), &m->input_info[i], error))
      return FALSE;
  for (guint i = 0; i < m->results->len; i++)
    if (!check_result (r, g_ptr_array_index (m->results, i), &m->output_info[i], error))
      return FALSE;
  return TRUE;
}

/* ---- entry points ----------------------------------------------------- */

static M2iIrModel *
model_new (const char *origin)
{
  M2iIrModel *m = g_new0 (M2iIrModel, 1);
  m->ref_count = 1;
  m->xml_path = g_strdup (origin);
  m->nodes = g_ptr_array_new_with_free_func ((GDestroyNotify) m2i_ir_node_free);
  m->by_id = g_hash_table_new (g_int64_hash, g_int64_equal);
  m->edges = g_array_new (FALSE, FALSE, sizeof (M2iIrEdge));
  m->parameters = g_ptr_array_new ();
  m->results = g_ptr_array_new ();
  m->names = g_ptr_array_new_with_free_func (g_free);
  return m;
}

static M2iIrModel *
load (const char *xml, gsize xml_len, GBytes *weights, const char *bin_path,
    const char *origin, GError **error)
{
  Reader r = {
    .origin = origin,
    .model = model_new (origin),
    .kinds = g_array_new (FALSE, FALSE, sizeof (Kind)),
    .info_stack = g_array_new (FALSE, FALSE, sizeof (gint)),
    .ports = g_array_new (FALSE, TRUE, sizeof (M2iIrPort)),
    .port_ids = g_hash_table_new_full (g_int64_hash, g_int64_equal, g_free, NULL),
    .text = g_string_new (NULL),
    .edges = g_array_new (FALSE, FALSE, sizeof (RawEdge)),
  };
  if (weights)
    r.model->weights = g_bytes_ref (weights);
  r.xml = xml;
  r.xml_len = xml_len;
  r.line_starts = g_array_new (FALSE, FALSE, sizeof (gsize));
  gsize zero = 0;
  g_array_append_val (r.line_starts, zero);
  for (gsize i = 0; i < xml_len; i++) {
    if (xml[i] == '\n') {
      gsize next = i + 1;
      g_array_append_val (r.line_starts, next);
    }
  }
  r.ctx = g_markup_parse_context_new (&parser_callbacks, G_MARKUP_TREAT_CDATA_AS_TEXT, &r, NULL);
  GError *e = NULL;
  gboolean ok = g_markup_parse_context_parse (r.ctx, xml, xml_len, &e) &&
      g_markup_parse_context_end_parse (r.ctx, &e);
  if (!ok) {
    if (e->domain == M2I_ERROR)
      g_propagate_error (error, e);
    else {
      g_set_error (error, M2I_ERROR, M2I_ERROR_MALFORMED, "%s: malformed XML: %s", origin,
          e->message);
      g_error_free (e);
    }
  } else if (!r.seen_net) {
    set_error_at (error, origin, 0, "no <net> element: not an OpenVINO IR file");
    ok = FALSE;
  }
  /* a layer or port left open by an error belongs to nobody yet */
  if (r.layer)
    m2i_ir_node_free (r.layer);
  port_clear (&r.port);
  for (guint i = 0; i < r.ports->len; i++)
    port_clear (&g_array_index (r.ports, M2iIrPort, i));
  g_markup_parse_context_free (r.ctx);
  if (ok)
    ok = finish (&r, bin_path, error);
  g_array_free (r.kinds, TRUE);
  g_array_free (r.info_stack, TRUE);
  g_array_free (r.ports, TRUE);
  g_hash_table_unref (r.port_ids);
  g_string_free (r.text, TRUE);
  g_array_free (r.edges, TRUE);
  g_array_free (r.line_starts, TRUE);
  if (!ok) {
    m2i_ir_model_unref (r.model);
    return NULL;
  }
  return r.model;
}

M2iIrModel *
m2i_ir_model_load (const char *xml_path, const char *bin_path, GError **error)
{
  g_return_val_if_fail (xml_path != NULL, NULL);
  gchar *xml;
  gsize len;
  GError *e = NULL;
  if (!g_file_get_contents (xml_path, &xml, &len, &e)) {
    g_set_error (error, M2I_ERROR, M2I_ERROR_IO, "cannot read the model: %s", e->message);
    g_error_free (e);
    return NULL;
  }
  g_autofree gchar *default_bin = NULL;
  if (!bin_path) {
    /* "model.xml" → "model.bin", as OpenVINO's reader guesses it */
    const char *dot = strrchr (xml_path, '.');
    const char *slash = strrchr (xml_path, '/');
    gsize stem = dot && (!slash || dot > slash) ? (gsize) (dot - xml_path) : strlen (xml_path);
    default_bin = g_strdup_printf ("%.*s.bin", (int) stem, xml_path);
  }
  M2iIrModel *m = load (xml, len, NULL, bin_path ? bin_path : default_bin, xml_path, error);
  g_free (xml);
  return m;
}

M2iIrModel *
m2i_ir_model_load_from_memory (const char *xml, gsize xml_len, GBytes *weights,
    const char *origin, GError **error)
{
  g_return_val_if_fail (xml != NULL || xml_len == 0, NULL);
  return load (xml ? xml : "", xml_len, weights, NULL, origin ? origin : "<memory>", error);
}
