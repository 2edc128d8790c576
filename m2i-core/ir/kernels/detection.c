/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* DetectionOutput-1/-8 (SSD post-processing), f32 (the priors it reads
 * come from priors.c).
 *
 * DetectionOutput: decodes every prior with its location prediction
 * (CORNER or CENTER_SIZE, variances from the priors or encoded in the
 * target), runs greedy non-maximum suppression per class (Caffe) or across
 * classes with the best class per prior (decrease_label_id, MXNet), keeps
 * keep_top_k detections per image by score, and writes
 * [image, label, confidence, xmin, ymin, xmax, ymax] rows, a row with
 * image = -1 after the last one. Ties in score go to the lower prior index,
 * which is the order OpenVINO's reference (a stable sort) produces. All
 * working memory is scratch sized in infer(): nothing is allocated per run.
 */
#include "kernels-private.h"
#include "heap-sort.h"

#include <base/m2i-align.h>
#include <math.h>
#include <string.h>

/* ---- DetectionOutput --------------------------------------------------- */

typedef struct {
  float xmin, ymin, xmax, ymax;
} Box;

typedef struct {
  float score;
  gint32 label, index;
} Cand;

typedef struct {
  /* attributes */
  gint num_classes, background, top_k, keep_top_k;
  gboolean var_in_target, center_size, share_location, clip_after, clip_before;
  gboolean decrease_label, normalized;
  float nms_threshold, confidence_threshold, objectness;
  gint64 input_h, input_w;
  /* shapes */
  gint64 images, priors, prior_size, prior_batches, loc_classes, results;
  gboolean with_arm;
  /* scratch layout (bytes) */
  gsize off_boxes, off_arm_boxes, off_cands, off_kept, off_counts, off_all, off_cols;
} DoState;

/* Caffe's intersection-over-union on normalised boxes. */
static float
box_size (const Box *b)
{
  if (b->xmax < b->xmin || b->ymax < b->ymin)
    return 0.0f;
  return (b->xmax - b->xmin) * (b->ymax - b->ymin);
}

static float
jaccard (const Box *a, const Box *b)
{
  if (b->xmin > a->xmax || b->xmax < a->xmin || b->ymin > a->ymax || b->ymax < a->ymin)
    return 0.0f;
  Box i = { MAX (a->xmin, b->xmin), MAX (a->ymin, b->ymin), MIN (a->xmax, b->xmax),
    MIN (a->ymax, b->ymax) };
  float w = i.xmax - i.xmin, h = i.ymax - i.ymin;
  if (!(w > 0 && h > 0))
    return 0.0f;
  float inter = w * h;
  return inter / (box_size (a) + box_size (b) - inter);
}

/* Descending score, then ascending prior index, then label. */
static int
cand_cmp (const Cand *a, const Cand *b)
{
  if (a->score != b->score)
    return a->score > b->score ? -1 : 1;
  if (a->index != b->index)
    return a->index < b->index ? -1 : 1;
  return (a->label > b->label) - (a->label < b->label);
}

/* cands_sort() sorts candidates in place by cand_cmp, a total order: the
 * result is the one a stable sort would give. */
M2I_K_HEAP (cands, Cand, cand_cmp)

static float
clip01 (float v)
{
  return MAX (0.0f, MIN (1.0f, v));
}

/* Decodes the box of prior @p from its 4 location values @l against
 * @priors (prior_size floats each, offset 1 when not normalized) or, when
 * not NULL, @prior_box (an ARM-refined box), and @var (4 each, or NULL
 * when the variance is encoded in the target). */
static Box
decode_box (const DoState *s, const float *priors, const float *var, const Box *prior_box,
    const float *l, gint64 p)
{
  Box pr;
  if (prior_box) {
    pr = *prior_box;
  } else {
    const float *q = priors + p * s->prior_size + (s->normalized ? 0 : 1);
    pr = (Box) { q[0], q[1], q[2], q[3] };
  }
  if (!s->normalized) {
    pr.xmin /= (float) s->input_w;
    pr.ymin /= (float) s->input_h;
    pr.xmax /= (float) s->input_w;
    pr.ymax /= (float) s->input_h;
  }
  float v[4] = { 1, 1, 1, 1 };
  if (var)
    memcpy (v, var + p * 4, sizeof v);
  Box d;
  if (!s->center_size) {
    d = (Box) { pr.xmin + v[0] * l[0], pr.ymin + v[1] * l[1], pr.xmax + v[2] * l[2],
      pr.ymax + v[3] * l[3] };
  } else {
    float pw = pr.xmax - pr.xmin, ph = pr.ymax - pr.ymin;
    float pcx = (pr.xmin + pr.xmax) / 2, pcy = (pr.ymin + pr.ymax) / 2;
    float cx = v[0] * l[0] * pw + pcx, cy = v[1] * l[1] * ph + pcy;
    float w = expf (v[2] * l[2]) * pw, h = expf (v[3] * l[3]) * ph;
    d = (Box) { cx - w / 2, cy - h / 2, cx + w / 2, cy + h / 2 };
  }
  if (s->clip_before)
    d = (Box) { clip01 (d.xmin), clip01 (d.ymin), clip01 (d.xmax), clip01 (d.ymax) };
  return d;
}

/* One image's inputs to box decoding. */
typedef struct {
  const float *priors, *var, *loc, *arm_loc;
} DoImage;

/* Decodes the boxes of the priors of @n candidates into @boxes (the
 * class's P boxes; the ARM-refined ones through @arm_boxes): only boxes
 * some candidate may keep are ever read (NMS, the output rows), so the
 * thousands of priors below the threshold or past top_k are not decoded
 * (a prior decoded for two classes sharing locations gets the same box). */
static void
decode_cands (const DoState *s, const DoImage *im, gint lc, const Cand *c, gint64 n,
    Box *boxes, Box *arm_boxes)
{
  gint64 stride = s->loc_classes * 4;
  for (gint64 i = 0; i < n; i++) {
    gint64 p = c[i].index;
    const float *l = im->loc + p * stride + lc * 4;
    if (im->arm_loc) {
      arm_boxes[p] = decode_box (s, im->priors, im->var, NULL,
          im->arm_loc + p * stride + lc * 4, p);
      boxes[p] = decode_box (s, im->priors, im->var, &arm_boxes[p], l, p);
    } else {
      boxes[p] = decode_box (s, im->priors, im->var, NULL, l, p);
    }
  }
}

/* Offers @v to the @k best candidates held in @c (*n of them, a heap whose
 * top is the worst by cand_cmp): with fewer than @k it joins them, else it
 * replaces the worst when better. Sorting the heap afterwards gives the
 * first min (k, offered) of all offered in cand_cmp order, as sorting them
 * all and cutting would (cand_cmp is a total order), without sorting
 * thousands of candidates for a few hundred. */
static inline void
cands_offer (Cand *c, gint64 *n, gint64 k, Cand v)
{
  if (*n < k) {
    cands_push (c, n, v);
  } else if (k > 0 && cand_cmp (&v, &c[0]) < 0) {
    c[0] = v;
    cands_sift_down (c, 0, *n);
  }
}

/* Greedy NMS over @n candidates sorted by score: appends kept prior indices
 * of boxes that overlap no kept one by more than the threshold. */
static gint64
greedy_nms (const DoState *s, const Cand *c, gint64 n, const Box *boxes, gint32 *kept,
    gint64 n_kept)
{
  for (gint64 i = 0; i < n; i++) {
    gboolean keep = TRUE;
    for (gint64 k = 0; k < n_kept && keep; k++)
      keep = !(jaccard (&boxes[c[i].index], &boxes[kept[k]]) > s->nms_threshold);
    if (keep)
      kept[n_kept++] = c[i].index;
  }
  return n_kept;
}

/* Four floats (GCC's vector extension: an SSE or NEON register on every
 * target, the baseline ABI). */
typedef float NmsVec __attribute__ ((vector_size (16)));
typedef gint32 NmsMask __attribute__ ((vector_size (16)));
#define NMS_LANES 4

/* Lanes of @a where @m is set, of @b elsewhere. */
static inline NmsVec
nms_select (NmsMask m, NmsVec a, NmsVec b)
{
  return (NmsVec) ((m & (NmsMask) a) | (~m & (NmsMask) b));
}

/* Whether @a (of box_size () @sa) overlaps one of the @n kept boxes in
 * @cols by more than the threshold: jaccard () on four kept boxes at a
 * time, its branches as lane masks (the lanes of a pair that jaccard ()
 * would return 0 for never count; the columns past the n-th box, up to
 * the next multiple of four, hold a box apart from every box: xmin +inf,
 * the rest 0). */
static gboolean
nms_overlaps (const DoState *s, const Box *a, float sa, const float *cols, gint64 stride,
    gint64 n)
{
  const NmsVec ax0 = { a->xmin, a->xmin, a->xmin, a->xmin };
  const NmsVec ay0 = ax0 - ax0 + a->ymin, ax1 = ax0 - ax0 + a->xmax, ay1 = ax0 - ax0 + a->ymax;
  const NmsVec vsa = ax0 - ax0 + sa, thr = ax0 - ax0 + s->nms_threshold, zero = ax0 - ax0;
  NmsMask hit = { 0 };
  for (gint64 k = 0; k < n; k += NMS_LANES) {
    NmsVec bx0, by0, bx1, by1, sb;
    memcpy (&bx0, cols + k, sizeof bx0);
    memcpy (&by0, cols + stride + k, sizeof by0);
    memcpy (&bx1, cols + 2 * stride + k, sizeof bx1);
    memcpy (&by1, cols + 3 * stride + k, sizeof by1);
    memcpy (&sb, cols + 4 * stride + k, sizeof sb);
    NmsMask apart = (bx0 > ax1) | (bx1 < ax0) | (by0 > ay1) | (by1 < ay0);
    /* MAX and MIN of jaccard (): x > y ? x : y, x < y ? x : y */
    NmsVec ix0 = nms_select (ax0 > bx0, ax0, bx0), iy0 = nms_select (ay0 > by0, ay0, by0);
    NmsVec ix1 = nms_select (ax1 < bx1, ax1, bx1), iy1 = nms_select (ay1 < by1, ay1, by1);
    NmsVec w = ix1 - ix0, h = iy1 - iy0, inter = w * h;
    NmsVec q = inter / (vsa + sb - inter);
    hit |= ~apart & (w > zero) & (h > zero) & (q > thr);
  }
  for (gint l = 0; l < NMS_LANES; l++)
    if (hit[l])
      return TRUE;
  return FALSE;
}

/* greedy_nms () from no kept box, the kept boxes also held as columns in
 * @cols (5 rows of nms_cols_stride (n) floats: xmin, ymin, xmax, ymax,
 * size) compared four at a time (nms_overlaps ()). Returns the number
 * kept. */
static gsize
nms_cols_stride (gint64 n)
{
  return (gsize) (n + NMS_LANES - 1) / NMS_LANES * NMS_LANES + NMS_LANES;
}

/* Columns @from .. @from + NMS_LANES of @cols: a box apart from every box. */
static void
nms_cols_pad (float *cols, gint64 stride, gint64 from)
{
  for (gint r = 0; r < 5; r++)
    for (gint l = 0; l < NMS_LANES; l++)
      cols[r * stride + from + l] = r == 0 ? INFINITY : 0.0f;
}

static gint64
greedy_nms_cols (const DoState *s, const Cand *c, gint64 n, const Box *boxes, gint32 *kept,
    float *cols)
{
  gint64 stride = (gint64) nms_cols_stride (n), n_kept = 0;
  nms_cols_pad (cols, stride, 0);
  for (gint64 i = 0; i < n; i++) {
    Box a = boxes[c[i].index];
    float sa = box_size (&a);
    if (nms_overlaps (s, &a, sa, cols, stride, n_kept))
      continue;
    kept[n_kept] = c[i].index;
    float v[5] = { a.xmin, a.ymin, a.xmax, a.ymax, sa };
    for (gint r = 0; r < 5; r++)
      cols[r * stride + n_kept] = v[r];
    n_kept++;
    if (n_kept % NMS_LANES == 0)
      nms_cols_pad (cols, stride, n_kept);
  }
  return n_kept;
}

/* Score of class @c for prior @p; with the additional (ARM) inputs, priors
 * whose objectness is below objectness_score count as background. */
static inline float
class_score (const DoState *s, const float *conf, const float *arm_conf, gint c, gint64 p)
{
  if (arm_conf && arm_conf[p * 2 + 1] < s->objectness)
    return c == s->background ? 1.0f : 0.0f;
  return conf[p * s->num_classes + c];
}

static gboolean
do_infer (M2iOpContext *ctx, GError **error)
{
  if (!ir_k_check_arity (ctx, 3, 5, 1, 1, error))
    return FALSE;
  if (ctx->n_inputs == 4) {
    m2i_ir_node_set_error (error, M2I_ERROR_INVALID_ARGUMENT, ctx->node,
        "expects 3 or 5 inputs, has 4");
    return FALSE;
  }
  for (gint i = 0; i < ctx->n_inputs; i++)
    if (!ir_k_check_f32 (ctx, i, error))
      return FALSE;
  gboolean v8 = ir_k_op_version (ctx) >= 8;
  DoState s = { 0 };
  gint64 num_classes, bg, top_k, ih, iw, keep[8];
  gint n_keep, code;
  double nms, conf, obj;
  static const char *const codes[] = { "caffe.PriorBoxParameter.CORNER",
    "caffe.PriorBoxParameter.CENTER_SIZE", NULL };
  if (!m2i_ir_node_attr_int (ctx->node, "num_classes", -1, &num_classes, error) ||
      !m2i_ir_node_attr_int (ctx->node, "background_label_id", 0, &bg, error) ||
      !m2i_ir_node_attr_int (ctx->node, "top_k", -1, &top_k, error) ||
      !m2i_ir_node_attr_ints (ctx->node, "keep_top_k", keep, 8, &n_keep, error) ||
      !m2i_ir_node_attr_enum (ctx->node, "code_type", codes[0], codes, &code, error) ||
      !m2i_ir_node_attr_bool (ctx->node, "variance_encoded_in_target", FALSE, &s.var_in_target, error) ||
      !m2i_ir_node_attr_bool (ctx->node, "share_location", TRUE, &s.share_location, error) ||
      !m2i_ir_node_attr_float (ctx->node, "nms_threshold", NAN, &nms, error) ||
      !m2i_ir_node_attr_float (ctx->node, "confidence_threshold", 0, &conf, error) ||
      !m2i_ir_node_attr_bool (ctx->node, "clip_after_nms", FALSE, &s.clip_after, error) ||
      !m2i_ir_node_attr_bool (ctx->node, "clip_before_nms", FALSE, &s.clip_before, error) ||
      !m2i_ir_node_attr_bool (ctx->node, "decrease_label_id", FALSE, &s.decrease_label, error) ||
      !m2i_ir_node_attr_bool (ctx->node, "normalized", FALSE, &s.normalized, error) ||
      !m2i_ir_node_attr_int (ctx->node, "input_height", 1, &ih, error) ||
      !m2i_ir_node_attr_int (ctx->node, "input_width", 1, &iw, error) ||
      !m2i_ir_node_attr_float (ctx->node, "objectness_score", 0, &obj, error))
    return FALSE;
  if (isnan (nms) || n_keep < 1) {
    m2i_ir_node_set_error (error, M2I_ERROR_MALFORMED, ctx->node,
        "attributes nms_threshold and keep_top_k are required");
    return FALSE;
  }
  if (ih < 1 || iw < 1) {
    m2i_ir_node_set_error (error, M2I_ERROR_INVALID_ARGUMENT, ctx->node,
        "input_height and input_width must be positive");
    return FALSE;
  }
  const M2iShape *loc = &ctx->inputs[0].shape, *cls = &ctx->inputs[1].shape;
  const M2iShape *pri = &ctx->inputs[2].shape;
  if (loc->rank != 2 || cls->rank != 2 || pri->rank != 3 || cls->dims[0] != loc->dims[0]) {
    m2i_ir_node_set_error (error, M2I_ERROR_INVALID_ARGUMENT, ctx->node,
        "inputs %s, %s, %s: expected box logits [N, P·4·L], class predictions [N, P·C] "
        "and priors [1 or N, 1 or 2, P·4 (or 5)]", ir_k_shape_str (loc, 0),
        ir_k_shape_str (cls, 1), ir_k_shape_str (pri, 2));
    return FALSE;
  }
  s.prior_size = s.normalized ? 4 : 5;
  s.priors = pri->dims[2] / s.prior_size;
  s.images = loc->dims[0];
  s.prior_batches = pri->dims[0];
  if (v8 && s.priors > 0)
    num_classes = cls->dims[1] / s.priors;
  if (num_classes < 1 || num_classes > G_MAXINT32 / 2) {
    m2i_ir_node_set_error (error, M2I_ERROR_INVALID_ARGUMENT, ctx->node,
        "num_classes must be a positive integer (got %" G_GINT64_FORMAT ")", num_classes);
    return FALSE;
  }
  s.num_classes = (gint) num_classes;
  s.loc_classes = s.share_location ? 1 : num_classes;
  gint64 want_pri1 = s.var_in_target ? 1 : 2;
  /* candidates are indexed in 32 bits: priors × classes must fit */
  gint64 loc_width, pairs;
  if (!ir_mul_i64 (s.priors, s.loc_classes * 4, &loc_width) ||
      !ir_mul_i64 (s.priors, num_classes, &pairs) || pairs > G_MAXINT32) {
    m2i_ir_node_set_error (error, M2I_ERROR_UNSUPPORTED, ctx->node, "%" G_GINT64_FORMAT
        " priors of %" G_GINT64_FORMAT " classes are more than 2^31 candidates", s.priors,
        num_classes);
    return FALSE;
  }
  if (s.priors < 1 || pri->dims[2] % s.prior_size || pri->dims[1] != want_pri1 ||
      (s.prior_batches != 1 && s.prior_batches != s.images) ||
      loc->dims[1] != loc_width || cls->dims[1] != pairs) {
    m2i_ir_node_set_error (error, M2I_ERROR_INVALID_ARGUMENT, ctx->node,
        "inputs %s, %s, %s do not agree: %" G_GINT64_FORMAT " priors of %" G_GINT64_FORMAT
        " values need box logits [N,%" G_GINT64_FORMAT "], class predictions [N,%"
        G_GINT64_FORMAT "], priors [1 or N,%" G_GINT64_FORMAT ",%" G_GINT64_FORMAT "]",
        ir_k_shape_str (loc, 0), ir_k_shape_str (cls, 1), ir_k_shape_str (pri, 2),
        s.priors, s.prior_size, loc_width, pairs, want_pri1, s.priors * s.prior_size);
    return FALSE;
  }
  if (ctx->n_inputs == 5) {
    if (!m2i_shape_equal (&ctx->inputs[4].shape, loc) ||
        ctx->inputs[3].shape.rank != 2 || ctx->inputs[3].shape.dims[0] != s.images ||
        ctx->inputs[3].shape.dims[1] != s.priors * 2 || s.prior_batches != s.images) {
      m2i_ir_node_set_error (error, M2I_ERROR_INVALID_ARGUMENT, ctx->node,
          "additional inputs %s and %s: expected [N,%" G_GINT64_FORMAT "] and the box "
          "logits' shape %s (with per-image priors)", ir_k_shape_str (&ctx->inputs[3].shape, 0),
          ir_k_shape_str (&ctx->inputs[4].shape, 1), s.priors * 2, ir_k_shape_str (loc, 2));
      return FALSE;
    }
    s.with_arm = TRUE;
  }
  s.background = (gint) bg;
  s.top_k = (gint) CLAMP (top_k, -1, G_MAXINT32);
  s.keep_top_k = (gint) CLAMP (keep[0], -1, G_MAXINT32);
  s.center_size = code == 1;
  s.nms_threshold = (float) nms;
  s.confidence_threshold = (float) conf;
  s.objectness = (float) obj;
  s.input_h = ih;
  s.input_w = iw;
  gint64 per_image = s.keep_top_k > 0 ? s.keep_top_k : s.top_k > 0 ?
      (gint64) s.top_k * num_classes : pairs;
  if (!ir_mul_i64 (s.images, per_image, &s.results) || s.results > G_MAXINT64 / 7) {
    m2i_ir_node_set_error (error, M2I_ERROR_UNSUPPORTED, ctx->node, "%" G_GINT64_FORMAT
        " images of %" G_GINT64_FORMAT " results each are too many", s.images, per_image);
    return FALSE;
  }

  /* Scratch for one image at a time; every part 16-byte aligned (the
   * 12-byte candidates leave the next part misaligned for an odd number of
   * priors: the 8-byte counts, when the classes are even). */
  gsize boxes = (gsize) s.loc_classes * s.priors * sizeof (Box);
  s.off_boxes = 0;
  s.off_arm_boxes = boxes;
  s.off_cands = s.off_arm_boxes + (s.with_arm ? boxes : 0);
  s.off_kept = m2i_align_up (s.off_cands + s.priors * sizeof (Cand), 16);
  s.off_counts = m2i_align_up (s.off_kept + pairs * sizeof (gint32), 16);
  s.off_all = s.off_counts + m2i_align_up (num_classes * sizeof (gint64), 16);
  s.off_cols = m2i_align_up (s.off_all + pairs * sizeof (Cand) +
      (s.decrease_label ? pairs * sizeof (Cand) : 0), 16);
  ctx->scratch_bytes = s.off_cols + 5 * nms_cols_stride (s.priors) * sizeof (float);
  ctx->outputs[0].type = M2I_ET_F32;
  ctx->outputs[0].shape = (M2iShape) { 4, { 1, 1, s.results, 7 } };
  ctx->state = g_memdup2 (&s, sizeof s);
  return TRUE;
}

static gboolean
do_execute (M2iOpContext *ctx, GError **error)
{
  const DoState *s = ctx->state;
  const float *loc = ctx->inputs[0].data, *conf = ctx->inputs[1].data;
  const float *pri = ctx->inputs[2].data;
  const float *arm_conf = s->with_arm ? ctx->inputs[3].data : NULL;
  const float *arm_loc = s->with_arm ? ctx->inputs[4].data : NULL;
  guint8 *scratch = ctx->scratch;
  Box *boxes = (Box *) (scratch + s->off_boxes), *arm_boxes = (Box *) (scratch + s->off_arm_boxes);
  Cand *cands = (Cand *) (scratch + s->off_cands);
  gint32 *kept = (gint32 *) (scratch + s->off_kept);   /* [class][priors] */
  gint64 *counts = (gint64 *) (scratch + s->off_counts);
  Cand *all = (Cand *) (scratch + s->off_all);
  float *cols = (float *) (scratch + s->off_cols);
  float *out = ctx->outputs[0].data;
  gint C = s->num_classes;
  gint64 P = s->priors, count = 0;
  memset (out, 0, s->results * 7 * sizeof (float));

  for (gint64 img = 0; img < s->images; img++) {
    const float *img_conf = conf + img * P * C;
    const float *img_arm_conf = arm_conf ? arm_conf + img * P * 2 : NULL;
    /* Per-image (or shared) priors; variances follow the boxes. */
    gint64 pb = s->prior_batches == 1 ? 0 : img;
    gint64 stride = (s->var_in_target ? 1 : 2) * P * s->prior_size;
    const float *pr = pri + pb * stride;
    const float *var = s->var_in_target ? NULL : pr + P * s->prior_size;
    DoImage im = { pr, var, loc + img * P * s->loc_classes * 4,
      arm_loc ? arm_loc + img * P * s->loc_classes * 4 : NULL };
    /* top_k as a bound on the candidates kept (-1: all) */
    gint64 top = s->top_k > -1 ? s->top_k : G_MAXINT64;

    gint64 n_det = 0;
    for (gint c = 0; c < C; c++)
      counts[c] = 0;
    if (!s->decrease_label) {
      /* Caffe: NMS per class over the priors scoring above the threshold. */
      for (gint c = 0; c < C; c++) {
        if (c == s->background)
          continue;
        gint64 n = 0;
        for (gint64 p = 0; p < P; p++) {
          float sc = class_score (s, img_conf, img_arm_conf, c, p);
          if (sc > s->confidence_threshold)
            cands_offer (cands, &n, top, (Cand) { sc, c, (gint32) p });
        }
        cands_sort (cands, n);
        gint lc = s->share_location ? 0 : c;
        decode_cands (s, &im, lc, cands, n, boxes + lc * P, arm_boxes + lc * P);
        counts[c] = greedy_nms_cols (s, cands, n, boxes + lc * P, kept + c * P, cols);
        n_det += counts[c];
      }
    } else {
      /* MXNet: each prior's best class (background excluded), one sorted
       * list, NMS within each class. */
      Cand *list = all + (gsize) C * P;
      gint64 n = 0;
      for (gint64 p = 0; p < P; p++) {
        float best = -1;
        gint id = 0;
        for (gint c = 1; c < C; c++) {
          if (s->background > -1 && c == s->background)
            continue;
          float sc = class_score (s, img_conf, img_arm_conf, c, p);
          if (sc > best) {
            best = sc;
            id = c;
          }
        }
        if (id > 0 && best >= s->confidence_threshold)
          cands_offer (list, &n, top, (Cand) { best, id, (gint32) p });
      }
      cands_sort (list, n);
      for (gint64 i = 0; i < n; i++) {
        gint lc = s->share_location ? 0 : list[i].label;
        decode_cands (s, &im, lc, &list[i], 1, boxes + lc * P, arm_boxes + lc * P);
      }
      for (gint64 i = 0; i < n; i++) {
        gint c = list[i].label;
        const Box *b = boxes + (s->share_location ? 0 : c) * P;
        gint64 before = counts[c];
        counts[c] = greedy_nms (s, &list[i], 1, b, kept + c * P, counts[c]);
        n_det += counts[c] - before;
      }
    }

    /* keep_top_k across classes: the best scores, then regrouped by class
     * in score order. */
    if (s->keep_top_k > -1 && n_det > s->keep_top_k) {
      gint64 n = 0;
      for (gint c = 0; c < C; c++)
        for (gint64 k = 0; k < counts[c]; k++) {
          gint32 p = kept[c * P + k];
          all[n++] = (Cand) { class_score (s, img_conf, img_arm_conf, c, p), c, p };
        }
      cands_sort (all, n);
      for (gint c = 0; c < C; c++)
        counts[c] = 0;
      for (gint64 i = 0; i < s->keep_top_k; i++) {
        gint c = all[i].label;
        kept[c * P + counts[c]++] = all[i].index;
      }
    }

    /* Rows in class order, each class in its kept order. */
    for (gint c = 0; c < C; c++) {
      const Box *b = boxes + (s->share_location ? 0 : c) * P;
      for (gint64 k = 0; k < counts[c] && count < s->results; k++) {
        gint32 p = kept[c * P + k];
        float *row = out + count * 7;
        Box d = b[p];
        if (s->clip_after)
          d = (Box) { clip01 (d.xmin), clip01 (d.ymin), clip01 (d.xmax), clip01 (d.ymax) };
        row[0] = (float) img;
        row[1] = (float) (s->decrease_label ? c - 1 : c);
        row[2] = class_score (s, img_conf, img_arm_conf, c, p);
        row[3] = d.xmin;
        row[4] = d.ymin;
        row[5] = d.xmax;
        row[6] = d.ymax;
        count++;
      }
    }
  }
  if (count < s->results)
    out[count * 7] = -1.0f;
  return TRUE;
}

const M2iOpKernel ir_kernel_detection_output = {
  "DetectionOutput", "opset1 opset8", do_infer, do_execute, g_free,
};
