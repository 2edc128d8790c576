/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* decode-yolo.c — Ultralytics-style YOLO outputs, boxes already decoded in
 * the graph (centre, size in model-input pixels):
 *
 *   yolo-v5   [1, N, 5+C(+3K)(+M)]  rows: cx, cy, w, h, objectness, C class
 *             scores (YOLOv5, YOLOv7); score = objectness x class score
 *   yolo-v8   [1, 4+C(+3K)(+M), N]  columns: cx, cy, w, h, C class scores
 *             (YOLOv8, v9, v11; pose adds K keypoints x (x, y, visibility))
 *   yolo-v10  [1, N, 6(+3K)(+M)]    rows: x1, y1, x2, y2, score, class, best
 *             first (YOLOv10, and any export with NMS inside: no NMS here)
 *
 * M is the mask coefficient count of segmentation exports (a second output
 * [1, M, h, w] of prototypes): the coefficients are skipped, boxes decoded.
 * The class / keypoint split of a row is read from the model's metadata
 * (framework/kpt_shape, then the number of labels), else a 56-row v8 (57
 * for v5) output is taken as COCO pose (1 class, 17 keypoints), else every
 * row is a class. Candidates: the best class of an anchor at or above the
 * confidence threshold (NaN, infinite values skipped), then class-wise (or
 * agnostic) NMS, the best max_detections kept, as Ultralytics'
 * non_max_suppression does.
 */
#include "decode-private.h"

#include <base/m2i-error.h>
#include <math.h>
#include <string.h>

#define MAX_ANCHORS (1u << 22)
#define MAX_ROW (1u << 16)
/* AUTO: end-to-end exports keep a few hundred rows (300 by default), raw
 * heads have thousands of anchors (1,008 for a 128x128 YOLOv5 input). */
#define MAX_END2END_ROWS 1000
#define MIN_V8_ANCHORS 64

typedef enum { LAYOUT_V5, LAYOUT_V8, LAYOUT_END2END } Layout;

/* What match() finds and prepare() keeps. */
typedef struct {
  Layout layout;
  gint out;
  const char *name;               /* the output's (owned by the model) */
  M2iShape shape;
  guint n;                        /* anchors (rows of v5 / end-to-end, columns of v8) */
  guint d;                        /* values per anchor */
  guint n_classes;                /* 0 for end-to-end (a class column) */
  guint n_kpts, kpt_dims, kpt_at; /* keypoints and where the first starts in a row */
  guint masks;                    /* mask coefficients at the end of a row */
} YoloLayout;

typedef struct {
  YoloLayout l;
  guint capacity;                 /* detections */
  InferNms nms;
  float *best;                    /* v8: per anchor, the best class score */
  gint32 *best_class;
} Yolo;


/* Is @s this layout's? *@n anchors, *@d values each. @strict: AUTO's
 * narrower rule. */
static gboolean
fits (const M2iShape *s, Layout layout, gboolean strict, guint *n, guint *d)
{
  if (s->rank != 3 || s->dims[0] != 1)
    return FALSE;
  gint64 a = layout == LAYOUT_V8 ? s->dims[2] : s->dims[1];
  gint64 b = layout == LAYOUT_V8 ? s->dims[1] : s->dims[2];
  gint64 min_d = layout == LAYOUT_V8 ? 5 : 6;
  if (b < min_d || b > MAX_ROW || a < 1 || a > MAX_ANCHORS)
    return FALSE;
  /* anchors outnumber the values of each; end-to-end rows are few, but
   * still more than their values when AUTO asks */
  if ((layout != LAYOUT_END2END || strict) && a <= b)
    return FALSE;
  if (strict && ((layout == LAYOUT_END2END && a > MAX_END2END_ROWS)
          || (layout == LAYOUT_V5 && a <= MAX_END2END_ROWS)
          || (layout == LAYOUT_V8 && a < MIN_V8_ANCHORS)))
    return FALSE;
  *n = (guint) a;
  *d = (guint) b;
  return TRUE;
}

/* Mask coefficients: the channel count of a [1, M, h, w] prototype output. */
static guint
mask_coefficients (M2iIrModel *model, gint skip)
{
  for (gint i = 0; i < m2i_ir_model_get_n_outputs (model); i++) {
    const M2iShape *s = &m2i_ir_model_get_output (model, i)->shape;
    if (i != skip && s->rank == 4 && s->dims[0] == 1 && s->dims[1] >= 1 && s->dims[1] <= 256
        && s->dims[2] > 1 && s->dims[3] > 1)
      return (guint) s->dims[1];
  }
  return 0;
}

/* Splits @extra values (after the box and objectness/score) into classes and
 * keypoints; how, into @why. */
static gboolean
split_row (YoloLayout *y, guint extra, const M2iModelInfo *info, const M2iDecoderOptions *opts,
    GString *why)
{
  gboolean e2e = y->layout == LAYOUT_END2END;
  guint coco_pose = y->layout == LAYOUT_V8 ? 56 - 4 : 57 - 5;
  if (info->kpt_shape_from.key) {
    guint k = info->kpt_count * info->kpt_dims;
    if (k <= extra && (!e2e || k == extra)) {
      y->n_kpts = info->kpt_count;
      y->kpt_dims = info->kpt_dims;
      y->n_classes = e2e ? 0 : extra - k;
      g_string_append_printf (why, ", %u keypoints (%s)", y->n_kpts, info->kpt_shape_from.key);
      return TRUE;
    }
  }
  if (e2e) {
    if (extra % 3)
      return FALSE;
    y->n_kpts = extra / 3;
    y->kpt_dims = 3;
    if (y->n_kpts)
      g_string_append_printf (why, ", %u keypoints", y->n_kpts);
    return TRUE;
  }
  guint n_labels = info->n_labels ? info->n_labels : opts->n_labels;
  if (n_labels && n_labels <= extra && (extra - n_labels) % 3 == 0) {
    y->n_classes = n_labels;
    y->n_kpts = (extra - n_labels) / 3;
    y->kpt_dims = 3;
    if (y->n_kpts)
      g_string_append_printf (why, ", %u keypoints (the rest after %u labels)", y->n_kpts,
          n_labels);
    return TRUE;
  }
  if (extra == coco_pose) {
    y->n_classes = 1;
    y->n_kpts = 17;
    y->kpt_dims = 3;
    g_string_append (why, ", 17 keypoints (COCO pose)");
    return TRUE;
  }
  y->n_classes = extra;
  return TRUE;
}

/* Finds this layout's output and splits its rows; a line for *@why. */
static gboolean
find_layout (Layout layout, M2iIrModel *model, const M2iDecoderOptions *opts, gboolean named,
    YoloLayout *y, gchar **why, GError **error)
{
  memset (y, 0, sizeof *y);
  y->layout = layout;
  y->out = -1;
  for (gint i = 0; i < m2i_ir_model_get_n_outputs (model) && y->out < 0; i++) {
    const M2iIrIoInfo *io = m2i_ir_model_get_output (model, i);
    if (m2i_element_type_is_float (io->type) && fits (&io->shape, layout, !named, &y->n, &y->d)) {
      y->out = i;
      y->name = io->name;
      y->shape = io->shape;
    }
  }
  if (y->out < 0) {
    g_autofree gchar *got = infer_output_shape_string (model, 0);
    return infer_no_match (named, error, "no float output shaped %s (output 0 is %s)",
        layout == LAYOUT_V5 ? "[1,N,5+classes] with N > 5+classes"
        : layout == LAYOUT_V8 ? "[1,4+classes,N] with N > 4+classes"
        : "[1,N,6] (x1,y1,x2,y2,score,class)", got);
  }
  guint base = layout == LAYOUT_V8 ? 4 : layout == LAYOUT_V5 ? 5 : 6;
  /* prototypes with more channels than the row has room for are no masks' */
  y->masks = mask_coefficients (model, y->out);
  if (y->masks + base + (layout == LAYOUT_END2END ? 0 : 1) > y->d)
    y->masks = 0;
  M2iModelInfo *info = m2i_model_info_new (model);
  GString *split = g_string_new (NULL);
  gboolean ok = split_row (y, y->d - base - y->masks, info, opts, split);
  m2i_model_info_free (info);
  g_autofree gchar *shape = m2i_shape_to_string (&y->shape);
  if (!ok) {
    g_string_free (split, TRUE);
    return infer_no_match (named, error, "output '%s' %s has %u values a row after the 6 "
        "of a box, score and class: not keypoints of 3 values", y->name, shape,
        y->d - base - y->masks);
  }
  y->kpt_at = base + y->n_classes;
  if (why) {
    GString *s = g_string_new (NULL);
    g_string_append_printf (s, "output '%s' %s: %u %s of ", y->name, shape, y->n,
        layout == LAYOUT_END2END ? "rows" : "anchors");
    if (layout == LAYOUT_END2END)
      g_string_append (s, "box, score, class");
    else
      g_string_append_printf (s, "box%s + %u classes", layout == LAYOUT_V5 ? " + objectness" : "",
          y->n_classes);
    g_string_append (s, split->str);
    if (y->masks)
      g_string_append_printf (s, " + %u mask coefficients (not decoded)", y->masks);
    g_string_append (s, layout == LAYOUT_END2END ? "; no NMS (inside the model)" : "; NMS here");
    *why = g_string_free (s, FALSE);
  }
  g_string_free (split, TRUE);
  return TRUE;
}

static gboolean
yolo_v5_match (M2iIrModel *model, const M2iDecoderOptions *opts, gboolean named, gchar **why,
    GError **error)
{
  YoloLayout y;
  return find_layout (LAYOUT_V5, model, opts, named, &y, why, error);
}

static gboolean
yolo_v8_match (M2iIrModel *model, const M2iDecoderOptions *opts, gboolean named, gchar **why,
    GError **error)
{
  YoloLayout y;
  return find_layout (LAYOUT_V8, model, opts, named, &y, why, error);
}

static gboolean
yolo_v10_match (M2iIrModel *model, const M2iDecoderOptions *opts, gboolean named, gchar **why,
    GError **error)
{
  YoloLayout y;
  return find_layout (LAYOUT_END2END, model, opts, named, &y, why, error);
}

static gboolean
yolo_prepare (Layout layout, M2iDecoder *dec, GError **error)
{
  Yolo *y = g_new0 (Yolo, 1);
  if (!find_layout (layout, dec->model, &dec->opts, TRUE, &y->l, NULL, error)) {
    g_free (y);
    return FALSE;
  }
  y->capacity = infer_max_detections (&dec->opts, y->l.n);
  infer_nms_init (&y->nms, y->l.n);
  if (layout == LAYOUT_V8) {
    y->best = g_new (float, y->l.n);
    y->best_class = g_new (gint32, y->l.n);
  }
  dec->state = y;
  dec->capacity.max_detections = y->capacity;
  dec->capacity.max_keypoints = y->capacity * y->l.n_kpts;
  return TRUE;
}

static gboolean
yolo_v5_prepare (M2iDecoder *dec, GError **error)
{
  return yolo_prepare (LAYOUT_V5, dec, error);
}

static gboolean
yolo_v8_prepare (M2iDecoder *dec, GError **error)
{
  return yolo_prepare (LAYOUT_V8, dec, error);
}

static gboolean
yolo_v10_prepare (M2iDecoder *dec, GError **error)
{
  return yolo_prepare (LAYOUT_END2END, dec, error);
}

static void
yolo_free (gpointer state)
{
  Yolo *y = state;
  infer_nms_clear (&y->nms);
  g_free (y->best);
  g_free (y->best_class);
  g_free (y);
}

static inline gboolean
finite4 (float a, float b, float c, float d)
{
  return isfinite (a) && isfinite (b) && isfinite (c) && isfinite (d);
}

static void
add_centre_box (InferNms *nms, float cx, float cy, float w, float h, float score, gint cls,
    guint index)
{
  if (!finite4 (cx, cy, w, h))
    return;
  InferBox b = { cx - w / 2, cy - h / 2, cx + w / 2, cy + h / 2, score, cls, index };
  infer_nms_add (nms, &b);
}

static void
candidates_v8 (Yolo *y, const float *p, float conf)
{
  guint n = y->l.n;
  for (guint j = 0; j < n; j++) {
    y->best[j] = -INFINITY;
    y->best_class[j] = 0;
  }
  /* class rows are contiguous: one pass per class, along the anchors,
   * branch-free so that it vectorizes */
  float *best = y->best;
  gint32 *best_class = y->best_class;
  for (guint c = 0; c < y->l.n_classes; c++) {
    const float *row = p + (gsize) (4 + c) * n;
    for (guint j = 0; j < n; j++) {
      float v = row[j];
      gboolean up = (v > best[j]) & (v < INFINITY);
      best[j] = up ? v : best[j];
      best_class[j] = up ? (gint32) c : best_class[j];
    }
  }
  for (guint j = 0; j < n; j++)
    if (best[j] >= conf)
      add_centre_box (&y->nms, p[j], p[n + j], p[2 * (gsize) n + j], p[3 * (gsize) n + j],
          best[j], best_class[j], j);
}

static void
candidates_v5 (Yolo *y, const float *p, float conf)
{
  for (guint j = 0; j < y->l.n; j++) {
    const float *r = p + (gsize) j * y->l.d;
    float obj = r[4];
    if (!(obj >= conf && obj < INFINITY))
      continue;
    float best = -INFINITY;
    gint cls = 0;
    for (guint c = 0; c < y->l.n_classes; c++) {
      float v = obj * r[5 + c];
      if (v > best && v < INFINITY) {
        best = v;
        cls = (gint) c;
      }
    }
    if (best >= conf)
      add_centre_box (&y->nms, r[0], r[1], r[2], r[3], best, cls, j);
  }
}

static void
candidates_end2end (Yolo *y, const float *p, float conf)
{
  for (guint j = 0; j < y->l.n; j++) {
    const float *r = p + (gsize) j * y->l.d;
    float score = r[4], cls = r[5];
    if (!(score >= conf && score < INFINITY) || !(cls >= 0.0f && cls < 65536.0f)
        || !finite4 (r[0], r[1], r[2], r[3]))
      continue;
    InferBox b = { MIN (r[0], r[2]), MIN (r[1], r[3]), MAX (r[0], r[2]), MAX (r[1], r[3]), score,
      (gint) lrintf (cls), j };
    infer_nms_add (&y->nms, &b);
  }
}

/* Keypoint value @v (0 x, 1 y, 2 visibility) of keypoint @k of anchor @j. */
static inline float
kpt_value (const YoloLayout *y, const float *p, guint j, guint k, guint v)
{
  guint at = y->kpt_at + k * y->kpt_dims + v;
  return y->layout == LAYOUT_V8 ? p[(gsize) at * y->n + j] : p[(gsize) j * y->d + at];
}

static gboolean
yolo_decode (M2iDecoder *dec, const M2iTensor *outputs, guint n_outputs,
    const M2iInferGeometry *g, M2iInferResult *r, GError **error)
{
  Yolo *y = dec->state;
  const M2iDecoderOptions *opts = &dec->opts;
  const YoloLayout *l = &y->l;
  if (!infer_check_geometry (g, error)
      || !infer_check_output (outputs, n_outputs, (guint) l->out, l->name, M2I_ET_F32, &l->shape,
          error))
    return FALSE;
  const float *p = outputs[l->out].data;
  float conf = opts->confidence_threshold;
  infer_nms_reset (&y->nms);
  switch (l->layout) {
    case LAYOUT_V8: candidates_v8 (y, p, conf); break;
    case LAYOUT_V5: candidates_v5 (y, p, conf); break;
    case LAYOUT_END2END: candidates_end2end (y, p, conf); break;
  }
  gboolean truncated;
  /* end-to-end models did their NMS: IoU above 1 suppresses nothing */
  float iou = l->layout == LAYOUT_END2END ? 2.0f : opts->iou_threshold;
  guint max = MIN (infer_max_detections (opts, y->capacity), r->detections_capacity);
  guint kept = infer_nms_run (&y->nms, iou, opts->class_agnostic_nms, max, &truncated);
  r->truncated |= truncated;
  for (guint i = 0; i < kept; i++) {
    const InferBox *b = &y->nms.boxes[i];
    M2iInferDetection *d = infer_result_add_box (r, g, b);
    if (!l->n_kpts)
      continue;
    if (r->n_keypoints + l->n_kpts > r->keypoints_capacity) {
      r->truncated = TRUE;
      continue;
    }
    d->first_keypoint = r->n_keypoints;
    d->n_keypoints = l->n_kpts;
    for (guint k = 0; k < l->n_kpts; k++) {
      M2iInferKeypoint *kp = &r->keypoints[r->n_keypoints++];
      kp->x = infer_source_x (g, kpt_value (l, p, b->index, k, 0));
      kp->y = infer_source_y (g, kpt_value (l, p, b->index, k, 1));
      kp->confidence = l->kpt_dims == 3 ? kpt_value (l, p, b->index, k, 2) : -1.0f;
    }
  }
  return TRUE;
}

const InferDecoderClass infer_decoder_yolo_v5 = {
  .type = M2I_MODEL_TYPE_YOLO_V5,
  .match = yolo_v5_match,
  .prepare = yolo_v5_prepare,
  .decode = yolo_decode,
  .free = yolo_free,
};

const InferDecoderClass infer_decoder_yolo_v8 = {
  .type = M2I_MODEL_TYPE_YOLO_V8,
  .match = yolo_v8_match,
  .prepare = yolo_v8_prepare,
  .decode = yolo_decode,
  .free = yolo_free,
};

const InferDecoderClass infer_decoder_yolo_v10 = {
  .type = M2I_MODEL_TYPE_YOLO_V10,
  .match = yolo_v10_match,
  .prepare = yolo_v10_prepare,
  .decode = yolo_decode,
  .free = yolo_free,
};
