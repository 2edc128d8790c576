/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* decode-region-yolo.c — Darknet YOLO v2/v3/v4 heads, as OpenVINO's Model
 * API YOLO wrapper decodes them.
 *
 * Each output produced by a RegionYolo layer is one grid: the layer's
 * attributes give coords, classes, num, mask, anchors and do_softmax; its
 * input's H x W is the grid. The layer has applied the activations already
 * (sigmoid on x, y, objectness and classes; softmax on the classes of
 * do_softmax=1 layers), so values are read as they are. Memory order per
 * anchor n and entry e (x, y, w, h, objectness, classes) at grid cell l:
 * (n * (coords + 1 + classes) + e) * H * W + l.
 *
 *   mask given (v3, v4):  num = mask size, anchors[mask[i]] in input pixels,
 *                         w = exp(tw) * anchor_w (input pixels)
 *   no mask (v2):         all num anchors, in grid cells:
 *                         w = exp(tw) * anchor_w / W of the input
 *   centre:               x = (col + tx) / W of the input
 *
 * Models without RegionYolo layers (OMZ yolo-v4-tf) give the raw
 * convolutions [1, 3*(5+C), H, W]: when the type is named explicitly, the
 * sigmoids are applied here, anchors and masks from the model's
 * model_info/anchors, model_info/masks, else Model API's YOLOv4 (or
 * YOLOv4-tiny, for two outputs) defaults, the largest grid taking the
 * first mask triple.
 *
 * Every (cell, anchor) whose objectness reaches the threshold gives one
 * candidate per class whose objectness x class probability reaches it; then
 * class-wise NMS. AUTO claims models with RegionYolo outputs only.
 */
#include "decode-private.h"

#include <base/m2i-error.h>
#include <math.h>
#include <string.h>

#define MAX_NUM 32                /* anchors per grid cell */
#define MAX_CLASSES 65536
#define MAX_SIDE 4096

typedef struct {
  gint out;
  const char *name;
  M2iShape shape;
  guint side_w, side_h, num, coords, classes;
  gboolean raw;                   /* apply the sigmoids here */
  gboolean anchors_in_cells;      /* v2: anchors are grid cells */
  float anchors[2 * MAX_NUM];
} Grid;

typedef struct {
  Grid *grids;
  guint n_grids;
  guint capacity;                 /* detections */
  InferNms nms;
} RegionYolo;

/* Model API's defaults for raw YOLOv4 heads. */
static const float v4_anchors[] = { 12, 16, 19, 36, 40, 28, 36, 75, 76, 55, 72, 146, 142, 110,
  192, 243, 459, 401 };
static const float v4_tiny_anchors[] = { 10, 14, 23, 27, 37, 58, 81, 82, 135, 169, 344, 319 };
static const gint v4_masks[] = { 0, 1, 2, 3, 4, 5, 6, 7, 8 };
static const gint v4_tiny_masks[] = { 1, 2, 3, 3, 4, 5 };
/* and for v2 layers without anchors */
static const float v2_anchors[] = { 0.57273f, 0.677385f, 1.87446f, 2.06253f, 3.33843f, 5.47434f,
  7.88282f, 3.52778f, 9.77052f, 9.16828f };

static void region_free (gpointer state);

static gboolean
attr_uint (M2iIrNode *n, const char *key, guint lo, guint hi, guint *out)
{
  const char *v = m2i_ir_node_get_attr (n, key);
  guint64 u;
  if (!v || !g_ascii_string_to_unsigned (v, 10, lo, hi, &u, NULL))
    return FALSE;
  *out = (guint) u;
  return TRUE;
}

/* Fills @gr from RegionYolo layer @node. */
static gboolean
grid_from_layer (Grid *gr, M2iIrNode *node, GError **error)
{
  const char *lname = m2i_ir_node_get_name (node);
  guint num = 0;
  if (!attr_uint (node, "coords", 4, 64, &gr->coords)
      || !attr_uint (node, "classes", 1, MAX_CLASSES, &gr->classes)
      || !attr_uint (node, "num", 1, 1024, &num)) {
    g_set_error (error, M2I_ERROR, M2I_ERROR_INVALID_ARGUMENT,
        "RegionYolo layer '%s' needs attributes coords (4..64), classes (1..%d) "
        "and num (1..1024)", lname, MAX_CLASSES);
    return FALSE;
  }
  double anchors[2 * 1024], mask[MAX_NUM];
  guint n_anchors = 0, n_mask = 0;
  const char *a = m2i_ir_node_get_attr (node, "anchors");
  const char *m = m2i_ir_node_get_attr (node, "mask");
  if ((a && !infer_parse_numbers (a, anchors, G_N_ELEMENTS (anchors), &n_anchors))
      || (m && !infer_parse_numbers (m, mask, G_N_ELEMENTS (mask), &n_mask)) || n_anchors % 2) {
    g_set_error (error, M2I_ERROR, M2I_ERROR_INVALID_ARGUMENT,
        "RegionYolo layer '%s': anchors must be (width, height) pairs and mask at "
        "most %d anchor indices", lname, MAX_NUM);
    return FALSE;
  }
  if (n_mask) {
    gr->num = n_mask;
    for (guint i = 0; i < n_mask; i++) {
      if (mask[i] < 0 || mask[i] != floor (mask[i]) || 2 * mask[i] + 1 >= n_anchors) {
        g_set_error (error, M2I_ERROR, M2I_ERROR_INVALID_ARGUMENT,
            "RegionYolo layer '%s': mask entry %g names no anchor pair (%u given)",
            lname, mask[i], n_anchors / 2);
        return FALSE;
      }
      gr->anchors[2 * i] = (float) anchors[2 * (gsize) mask[i]];
      gr->anchors[2 * i + 1] = (float) anchors[2 * (gsize) mask[i] + 1];
    }
  } else {
    gr->anchors_in_cells = TRUE;
    if (!n_anchors) {
      n_anchors = G_N_ELEMENTS (v2_anchors);
      for (guint i = 0; i < n_anchors; i++)
        anchors[i] = v2_anchors[i];
      num = n_anchors / 2;
    }
    if (num > MAX_NUM || 2 * num > n_anchors) {
      g_set_error (error, M2I_ERROR, M2I_ERROR_INVALID_ARGUMENT,
          "RegionYolo layer '%s': num=%u but %u anchor pairs (at most %d)", lname,
          num, n_anchors / 2, MAX_NUM);
      return FALSE;
    }
    gr->num = num;
    for (guint i = 0; i < 2 * num; i++)
      gr->anchors[i] = (float) anchors[i];
  }
  const M2iShape *in = m2i_ir_node_get_input_shape (node, 0);
  if (!in || in->rank != 4 || in->dims[2] < 1 || in->dims[3] < 1 || in->dims[2] > MAX_SIDE
      || in->dims[3] > MAX_SIDE) {
    g_set_error (error, M2I_ERROR, M2I_ERROR_INVALID_ARGUMENT,
        "RegionYolo layer '%s' reads no [N,C,H,W] grid", lname);
    return FALSE;
  }
  gr->side_h = (guint) in->dims[2];
  gr->side_w = (guint) in->dims[3];
  return TRUE;
}

static gboolean
check_size (const Grid *gr, GError **error)
{
  gint64 want = (gint64) gr->num * (gr->coords + 1 + gr->classes) * gr->side_w * gr->side_h;
  if (m2i_shape_numel (&gr->shape) != want) {
    gchar *got = m2i_shape_to_string (&gr->shape);
    g_set_error (error, M2I_ERROR, M2I_ERROR_INVALID_ARGUMENT,
        "output '%s' %s does not hold %u anchors x (%u coords + 1 + %u classes) on a "
        "%ux%u grid", gr->name, got, gr->num, gr->coords, gr->classes, gr->side_w, gr->side_h);
    g_free (got);
    return FALSE;
  }
  return TRUE;
}

/* Raw YOLOv4 heads: every [1, 3*(5+C), H, W] float output, largest grid first. */
static gboolean
raw_grids (RegionYolo *ry, M2iIrModel *model, const M2iModelInfo *info, GError **error)
{
  gint n = m2i_ir_model_get_n_outputs (model);
  ry->grids = g_new0 (Grid, MAX (n, 1));
  for (gint i = 0; i < n; i++) {
    const M2iIrIoInfo *io = m2i_ir_model_get_output (model, i);
    const M2iShape *s = &io->shape;
    if (!m2i_element_type_is_float (io->type) || s->rank != 4 || s->dims[0] != 1
        || s->dims[1] % 3 || s->dims[1] / 3 < 6 || s->dims[1] / 3 > 5 + MAX_CLASSES
        || s->dims[2] < 1 || s->dims[2] > MAX_SIDE || s->dims[3] < 1 || s->dims[3] > MAX_SIDE)
      continue;
    Grid *gr = &ry->grids[ry->n_grids++];
    *gr = (Grid) { .out = i, .name = io->name, .shape = *s, .side_h = (guint) s->dims[2],
      .side_w = (guint) s->dims[3], .num = 3, .coords = 4,
      .classes = (guint) (s->dims[1] / 3 - 5), .raw = TRUE };
  }
  if (!ry->n_grids) {
    gchar *got = infer_output_shape_string (model, 0);
    g_set_error (error, M2I_ERROR, M2I_ERROR_INVALID_ARGUMENT,
        "no RegionYolo layer, and no raw YOLO output [1,3*(5+classes),H,W] "
        "(output 0 is %s)", got);
    g_free (got);
    return FALSE;
  }
  /* largest grid first (insertion sort: a handful of outputs) */
  for (guint i = 1; i < ry->n_grids; i++)
    for (guint j = i; j > 0 && ry->grids[j].side_h > ry->grids[j - 1].side_h; j--) {
      Grid t = ry->grids[j];
      ry->grids[j] = ry->grids[j - 1];
      ry->grids[j - 1] = t;
    }
  gboolean tiny = ry->n_grids == 2;
  const float *anchors = info->n_anchors ? info->anchors : tiny ? v4_tiny_anchors : v4_anchors;
  guint n_anchors = info->n_anchors ? info->n_anchors
      : tiny ? G_N_ELEMENTS (v4_tiny_anchors) : G_N_ELEMENTS (v4_anchors);
  const gint *masks = info->n_masks ? info->masks : tiny ? v4_tiny_masks : v4_masks;
  guint n_masks = info->n_masks ? info->n_masks
      : tiny ? G_N_ELEMENTS (v4_tiny_masks) : G_N_ELEMENTS (v4_masks);
  if (n_masks < 3 * ry->n_grids) {
    g_set_error (error, M2I_ERROR, M2I_ERROR_INVALID_ARGUMENT,
        "%u raw YOLO outputs need %u masks, the model gives %u (model_info/masks)",
        ry->n_grids, 3 * ry->n_grids, n_masks);
    return FALSE;
  }
  for (guint i = 0; i < ry->n_grids; i++)
    for (guint k = 0; k < 3; k++) {
      gint a = masks[3 * i + k];
      if (a < 0 || 2 * (guint) a + 1 >= n_anchors) {
        g_set_error (error, M2I_ERROR, M2I_ERROR_INVALID_ARGUMENT,
            "mask %d names no anchor pair (%u given in %s)", a, n_anchors / 2,
            info->n_anchors ? "model_info/anchors" : "the defaults");
        return FALSE;
      }
      ry->grids[i].anchors[2 * k] = anchors[2 * a];
      ry->grids[i].anchors[2 * k + 1] = anchors[2 * a + 1];
    }
  return TRUE;
}

/* The grids of @model: its RegionYolo outputs, else (@named only) raw
 * YOLOv4 heads. NULL when there are none, with @error when @named. */
static RegionYolo *
find_grids (M2iIrModel *model, gboolean named, GError **error)
{
  RegionYolo *ry = g_new0 (RegionYolo, 1);
  GError *own = NULL;
  gint n = m2i_ir_model_get_n_outputs (model);
  ry->grids = g_new0 (Grid, MAX (n, 1));
  for (gint i = 0; i < n && !own; i++) {
    M2iIrNode *node = infer_output_producer (model, i);
    if (!node || strcmp (m2i_ir_node_get_type (node), "RegionYolo"))
      continue;
    const M2iIrIoInfo *io = m2i_ir_model_get_output (model, i);
    Grid *gr = &ry->grids[ry->n_grids++];
    gr->out = i;
    gr->name = io->name;
    gr->shape = io->shape;
    if (!m2i_element_type_is_float (io->type))
      g_set_error (&own, M2I_ERROR, M2I_ERROR_INVALID_ARGUMENT,
          "output '%s' is %s, not a float", io->name,
          m2i_element_type_to_string (io->type));
    else if (grid_from_layer (gr, node, &own))
      check_size (gr, &own);
  }
  if (!own && !ry->n_grids) {
    g_clear_pointer (&ry->grids, g_free);
    if (!named) {
      region_free (ry);
      return NULL;
    }
    M2iModelInfo *info = m2i_model_info_new (model);
    raw_grids (ry, model, info, &own);
    m2i_model_info_free (info);
  }
  guint64 total = 0;
  for (guint i = 0; i < ry->n_grids && !own; i++) {
    const Grid *gr = &ry->grids[i];
    total += (guint64) gr->side_w * gr->side_h * gr->num * gr->classes;
  }
  if (!own && total > G_MAXUINT)
    g_set_error (&own, M2I_ERROR, M2I_ERROR_INVALID_ARGUMENT,
        "%" G_GUINT64_FORMAT " candidate boxes x classes is more than this decoder "
        "counts", total);
  if (own) {
    g_propagate_error (error, own);
    region_free (ry);
    return NULL;
  }
  ry->capacity = (guint) total;
  return ry;
}

static gboolean
region_match (M2iIrModel *model, const M2iDecoderOptions *opts, gboolean named, gchar **why,
    GError **error)
{
  RegionYolo *ry = find_grids (model, named, error);
  if (!ry)
    return FALSE;
  GString *s = g_string_new (NULL);
  g_string_append_printf (s, "%u grid%s", ry->n_grids, ry->n_grids == 1 ? "" : "s");
  for (guint i = 0; i < ry->n_grids; i++) {
    const Grid *gr = &ry->grids[i];
    g_string_append_printf (s, "%s '%s' %ux%u x %u anchors (%g,%g..) x %u classes",
        i ? "," : "", gr->name, gr->side_w, gr->side_h, gr->num, gr->anchors[0], gr->anchors[1],
        gr->classes);
  }
  if (ry->grids[0].raw)
    g_string_append (s, " (raw outputs: sigmoids applied here)");
  *why = g_string_free (s, FALSE);
  region_free (ry);
  return TRUE;
}

static gboolean
region_prepare (M2iDecoder *dec, GError **error)
{
  RegionYolo *ry = find_grids (dec->model, TRUE, error);
  if (!ry)
    return FALSE;
  infer_nms_init (&ry->nms, ry->capacity);
  ry->capacity = infer_max_detections (&dec->opts, ry->capacity);
  dec->state = ry;
  dec->capacity.max_detections = ry->capacity;
  return TRUE;
}

static void
region_free (gpointer state)
{
  RegionYolo *ry = state;
  infer_nms_clear (&ry->nms);
  g_free (ry->grids);
  g_free (ry);
}

static inline float
sigmoid (float x)
{
  return 1.0f / (1.0f + expf (-x));
}

static void
grid_candidates (RegionYolo *ry, const Grid *gr, const float *p, const M2iInferGeometry *g,
    guint base, float conf)
{
  guint cells = gr->side_w * gr->side_h, entries = gr->coords + 1 + gr->classes;
  for (guint n = 0; n < gr->num; n++) {
    const float *a = p + (gsize) n * entries * cells;
    for (guint l = 0; l < cells; l++) {
      float obj = a[(gsize) gr->coords * cells + l];
      if (gr->raw)
        obj = sigmoid (obj);
      if (!(obj >= conf && obj < INFINITY))
        continue;
      float tx = a[l], ty = a[cells + l];
      float tw = a[2 * (gsize) cells + l], th = a[3 * (gsize) cells + l];
      if (gr->raw) {
        tx = sigmoid (tx);
        ty = sigmoid (ty);
      }
      guint col = l % gr->side_w, row = l / gr->side_w;
      /* model pixels */
      float cx = (col + tx) / gr->side_w * g->model_width;
      float cy = (row + ty) / gr->side_h * g->model_height;
      float w = expf (tw) * gr->anchors[2 * n], h = expf (th) * gr->anchors[2 * n + 1];
      if (gr->anchors_in_cells) {
        w *= (float) g->model_width / gr->side_w;
        h *= (float) g->model_height / gr->side_h;
      }
      if (!(isfinite (cx) && isfinite (cy) && isfinite (w) && isfinite (h)))
        continue;
      for (guint c = 0; c < gr->classes; c++) {
        float cls = a[(gsize) (gr->coords + 1 + c) * cells + l];
        float prob = obj * (gr->raw ? sigmoid (cls) : cls);
        if (!(prob >= conf && prob < INFINITY))
          continue;
        InferBox b = { cx - w / 2, cy - h / 2, cx + w / 2, cy + h / 2, prob, (gint) c,
          base + ((l * gr->num + n) * gr->classes + c) };
        infer_nms_add (&ry->nms, &b);
      }
    }
  }
}

static gboolean
region_decode (M2iDecoder *dec, const M2iTensor *outputs, guint n_outputs,
    const M2iInferGeometry *g, M2iInferResult *r, GError **error)
{
  RegionYolo *ry = dec->state;
  const M2iDecoderOptions *opts = &dec->opts;
  if (!infer_check_geometry (g, error))
    return FALSE;
  if (g->model_width <= 0 || g->model_height <= 0) {
    g_set_error_literal (error, M2I_ERROR, M2I_ERROR_INVALID_ARGUMENT,
        "the geometry has no model input size");
    return FALSE;
  }
  for (guint i = 0; i < ry->n_grids; i++)
    if (!infer_check_output (outputs, n_outputs, (guint) ry->grids[i].out, ry->grids[i].name,
            M2I_ET_F32, &ry->grids[i].shape, error))
      return FALSE;
  infer_nms_reset (&ry->nms);
  guint base = 0;
  for (guint i = 0; i < ry->n_grids; i++) {
    const Grid *gr = &ry->grids[i];
    grid_candidates (ry, gr, outputs[gr->out].data, g, base, opts->confidence_threshold);
    base += gr->side_w * gr->side_h * gr->num * gr->classes;
  }
  gboolean truncated;
  guint kept = infer_nms_run (&ry->nms, opts->iou_threshold, opts->class_agnostic_nms,
      MIN (infer_max_detections (opts, ry->capacity), r->detections_capacity), &truncated);
  r->truncated |= truncated;
  for (guint i = 0; i < kept; i++)
    infer_result_add_box (r, g, &ry->nms.boxes[i]);
  return TRUE;
}

const InferDecoderClass infer_decoder_region_yolo = {
  .type = M2I_MODEL_TYPE_REGION_YOLO,
  .match = region_match,
  .prepare = region_prepare,
  .decode = region_decode,
  .free = region_free,
};
