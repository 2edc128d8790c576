/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* decode-openpose.c — bottom-up multi-person pose (OpenPose, Open Model
 * Zoo's human-pose-estimation-0001): two outputs on one grid,
 *
 *   heatmaps  [1, 19, H, W]  18 COCO-18 keypoints + background
 *   PAFs      [1, 38, H, W]  part affinity fields: x, y of 19 limbs
 *
 * decoded as Model API's OpenPose wrapper does: heatmap peaks (a cell at
 * least as high as its 3x3 neighbours, above PEAK_THRESHOLD, the best
 * MAX_PEAKS of each keypoint, moved a quarter cell towards the higher
 * neighbour), limb candidates between the peaks of the limb's two
 * keypoints scored along the limb's PAF (10 samples; a candidate needs
 * more than 80 % of them aligned by more than MIN_ALIGNMENT and a positive
 * mean), the best candidates first with each peak in one limb, then
 * grouped greedily into people (a limb joins the person holding one of its
 * ends, or makes a new person, or merges two people that do not
 * disagree). A person of at least MIN_PERSON_KEYPOINTS keypoints is a
 * detection of class 0 ("person"): its box the keypoints' extent, its
 * confidence the mean heatmap score of its keypoints (kept when at or
 * above the confidence threshold), its 18 keypoints in source pixels
 * (one not found: confidence -1, position NaN).
 *
 * A cell (x, y) is model pixel ((x + 0.5) * stride_x, (y + 0.5) *
 * stride_y), stride = the model input's size / the grid's. Scratch is
 * sized at prepare(); decode() allocates nothing.
 */
#include "decode-private.h"

#include <base/m2i-error.h>
#include <math.h>
#include <string.h>

#define N_KPTS 18                 /* COCO-18 keypoints */
#define N_LIMBS 19                /* PAF pairs */
#define MAX_PEAKS 100             /* per keypoint (Model API's max_points) */
#define MAX_POSES (N_KPTS * MAX_PEAKS / 2)
#define PEAK_THRESHOLD 0.1f       /* Model API's score_threshold */
#define MIN_ALIGNMENT 0.05f       /* Model API's min_paf_alignment_score */
#define LIMB_SAMPLES 10
#define MIN_PERSON_KEYPOINTS 3
#define MAX_GRID (1 << 14)

/* The OpenPose COCO skeleton: the keypoints a limb joins and the PAF
 * channel of its x component (y is the next one). The training's, as
 * every OpenPose COCO model and Model API's decoder use them. */
static const guint8 limb_kpts[N_LIMBS][2] = {
  { 1, 2 }, { 1, 5 }, { 2, 3 }, { 3, 4 }, { 5, 6 }, { 6, 7 }, { 1, 8 }, { 8, 9 }, { 9, 10 },
  { 1, 11 }, { 11, 12 }, { 12, 13 }, { 1, 0 }, { 0, 14 }, { 14, 16 }, { 0, 15 }, { 15, 17 },
  { 2, 16 }, { 5, 17 },
};
static const guint8 limb_paf[N_LIMBS] = {
  12, 20, 14, 16, 22, 24, 0, 2, 4, 6, 8, 10, 28, 30, 34, 32, 36, 18, 26,
};

static const char *const person_labels[] = { "person", NULL };

typedef struct {
  float x, y;                     /* grid cells, refined */
  float score;
} Peak;

typedef struct {
  guint16 a, b;                   /* peak indices within their keypoints */
  float score;
} Limb;

typedef struct {
  gint16 kpt[N_KPTS];             /* peak id (keypoint * MAX_PEAKS + index), -1: none */
  float score;                    /* mean keypoint score, once finished */
} Pose;

typedef struct {
  gint heat_out, paf_out;
  const char *heat_name, *paf_name;
  M2iShape heat_shape, paf_shape;
  guint w, h;
  Peak peaks[N_KPTS * MAX_PEAKS];
  guint n_peaks[N_KPTS];
  Limb *limbs;                    /* MAX_PEAKS^2: one limb type's candidates */
  guint8 used_a[MAX_PEAKS], used_b[MAX_PEAKS];
  Pose poses[MAX_POSES];
  guint n_poses;
} OpenPose;

/* ---- match ------------------------------------------------------------------ */

static gboolean
grid_shape (const M2iShape *s, gint64 channels)
{
  return s->rank == 4 && s->dims[0] == 1 && s->dims[1] == channels && s->dims[2] >= 1
      && s->dims[2] <= MAX_GRID && s->dims[3] >= 1 && s->dims[3] <= MAX_GRID;
}

/* The heatmap and PAF outputs of @model into @p (heat_out/paf_out -1 when
 * absent). */
static void
find_outputs (M2iIrModel *model, OpenPose *p)
{
  p->heat_out = p->paf_out = -1;
  for (gint i = 0; i < m2i_ir_model_get_n_outputs (model); i++) {
    const M2iIrIoInfo *io = m2i_ir_model_get_output (model, i);
    if (!m2i_element_type_is_float (io->type))
      continue;
    if (p->heat_out < 0 && grid_shape (&io->shape, N_KPTS + 1)) {
      p->heat_out = i;
      p->heat_name = io->name;
      p->heat_shape = io->shape;
    } else if (p->paf_out < 0 && grid_shape (&io->shape, 2 * N_LIMBS)) {
      p->paf_out = i;
      p->paf_name = io->name;
      p->paf_shape = io->shape;
    }
  }
}

static gboolean
find_layout (M2iIrModel *model, gboolean named, OpenPose *p, gchar **why, GError **error)
{
  find_outputs (model, p);
  if (p->heat_out < 0 || p->paf_out < 0) {
    g_autofree gchar *got0 = infer_output_shape_string (model, 0);
    g_autofree gchar *got1 = infer_output_shape_string (model, 1);
    return infer_no_match (named, error, "OpenPose needs two float outputs on one grid: "
        "heatmaps [1,%d,H,W] (%d COCO-18 keypoints + background) and part affinity fields "
        "[1,%d,H,W]; the model's outputs 0 and 1 are %s and %s", N_KPTS + 1, N_KPTS,
        2 * N_LIMBS, got0, got1);
  }
  if (p->heat_shape.dims[2] != p->paf_shape.dims[2]
      || p->heat_shape.dims[3] != p->paf_shape.dims[3]) {
    g_autofree gchar *hs = m2i_shape_to_string (&p->heat_shape);
    g_autofree gchar *ps = m2i_shape_to_string (&p->paf_shape);
    return infer_no_match (named, error, "OpenPose: heatmaps '%s' %s and part affinity fields "
        "'%s' %s are not on the same grid", p->heat_name, hs, p->paf_name, ps);
  }
  p->h = (guint) p->heat_shape.dims[2];
  p->w = (guint) p->heat_shape.dims[3];
  if (why)
    *why = g_strdup_printf ("heatmaps '%s' [1,%d,%u,%u] (%d COCO-18 keypoints + background) "
        "and part affinity fields '%s' [1,%d,%u,%u]", p->heat_name, N_KPTS + 1, p->h, p->w,
        N_KPTS, p->paf_name, 2 * N_LIMBS, p->h, p->w);
  return TRUE;
}

static gboolean
openpose_match (M2iIrModel *model, const M2iDecoderOptions *opts, gboolean named, gchar **why,
    GError **error)
{
  OpenPose *p = g_new (OpenPose, 1);
  gboolean ok = find_layout (model, named, p, why, error);
  g_free (p);
  return ok;
}

static gboolean
openpose_prepare (M2iDecoder *dec, GError **error)
{
  OpenPose *p = g_new0 (OpenPose, 1);
  if (!find_layout (dec->model, TRUE, p, NULL, error)) {
    g_free (p);
    return FALSE;
  }
  p->limbs = g_new (Limb, MAX_PEAKS * MAX_PEAKS);
  dec->state = p;
  dec->capacity.max_detections = infer_max_detections (&dec->opts, MAX_POSES);
  dec->capacity.max_keypoints = dec->capacity.max_detections * N_KPTS;
  return TRUE;
}

static void
openpose_free (gpointer state)
{
  OpenPose *p = state;
  g_free (p->limbs);
  g_free (p);
}

/* ---- peaks ------------------------------------------------------------------ */

/* Whether cell (x, y) of @m (@w x @h) is at least as high as each of its
 * 3x3 neighbours inside the grid (a 3x3 max pool, stride 1, the padding
 * ignored). */
static inline gboolean
is_local_max (const float *m, guint w, guint h, guint x, guint y)
{
  float v = m[(gsize) y * w + x];
  guint y0 = y ? y - 1 : 0, y1 = MIN (y + 1, h - 1);
  guint x0 = x ? x - 1 : 0, x1 = MIN (x + 1, w - 1);
  for (guint yy = y0; yy <= y1; yy++)
    for (guint xx = x0; xx <= x1; xx++)
      if (m[(gsize) yy * w + xx] > v)
        return FALSE;
  return TRUE;
}

/* Model API's quarter offset: a quarter cell towards the higher neighbour
 * along each axis with a neighbour on both sides. */
static inline float
refine (const float *m, gsize at, gsize step, guint pos, guint size)
{
  if (pos == 0 || pos + 1 >= size)
    return 0.0f;
  float d = m[at + step] - m[at - step];
  return d > 0 ? 0.25f : d < 0 ? -0.25f : 0.0f;
}

/* The best MAX_PEAKS peaks of keypoint @k's heatmap @m, best first (ties:
 * row-major order). */
static void
find_peaks (OpenPose *p, guint k, const float *m)
{
  Peak *pk = &p->peaks[k * MAX_PEAKS];
  guint n = 0;
  for (guint y = 0; y < p->h; y++)
    for (guint x = 0; x < p->w; x++) {
      gsize at = (gsize) y * p->w + x;
      float v = m[at];
      /* NaN and infinities are no peaks */
      if (!(v > PEAK_THRESHOLD && v < INFINITY) || !is_local_max (m, p->w, p->h, x, y))
        continue;
      if (n == MAX_PEAKS && !(v > pk[n - 1].score))
        continue;
      /* insertion into the sorted best */
      guint pos = n < MAX_PEAKS ? n++ : n - 1;
      while (pos > 0 && v > pk[pos - 1].score) {
        pk[pos] = pk[pos - 1];
        pos--;
      }
      pk[pos] = (Peak) {
        .x = x + refine (m, at, 1, x, p->w), .y = y + refine (m, at, p->w, y, p->h),
        .score = v,
      };
    }
  p->n_peaks[k] = n;
}

/* ---- limbs ------------------------------------------------------------------ */

/* How well the segment @a -> @b follows the field (@fx, @fy): the mean of
 * the samples aligned by more than MIN_ALIGNMENT, or -1 when no more than
 * 80 % of them are. */
static float
limb_score (const OpenPose *p, const float *fx, const float *fy, const Peak *a, const Peak *b)
{
  float vx = b->x - a->x, vy = b->y - a->y;
  float norm = sqrtf (vx * vx + vy * vy);
  if (!(norm > 1e-6f))
    return -1.0f;
  float ux = vx / norm, uy = vy / norm;
  float sum = 0.0f;
  guint valid = 0;
  for (guint s = 0; s < LIMB_SAMPLES; s++) {
    float t = (float) s / (LIMB_SAMPLES - 1);
    gint x = (gint) lrintf (a->x + t * vx), y = (gint) lrintf (a->y + t * vy);
    x = CLAMP (x, 0, (gint) p->w - 1);
    y = CLAMP (y, 0, (gint) p->h - 1);
    gsize at = (gsize) y * p->w + (guint) x;
    float d = fx[at] * ux + fy[at] * uy;
    if (d > MIN_ALIGNMENT && d < INFINITY) {
      sum += d;
      valid++;
    }
  }
  if (valid * 10 <= LIMB_SAMPLES * 8)
    return -1.0f;
  return sum / valid;
}

/* Best first; ties by the first end, then the second. */
static inline gboolean
limb_before (const Limb *x, const Limb *y)
{
  if (x->score != y->score)
    return x->score > y->score;
  return x->a != y->a ? x->a < y->a : x->b < y->b;
}

static void
sift_down (Limb *l, guint i, guint n)
{
  for (;;) {
    guint c = 2 * i + 1;
    if (c >= n)
      return;
    /* a heap whose root comes last in order */
    if (c + 1 < n && limb_before (&l[c], &l[c + 1]))
      c++;
    if (!limb_before (&l[i], &l[c]))
      return;
    Limb t = l[i];
    l[i] = l[c];
    l[c] = t;
    i = c;
  }
}

/* Heap sort, best first, in place. */
static void
sort_limbs (Limb *l, guint n)
{
  for (guint i = n / 2; i-- > 0;)
    sift_down (l, i, n);
  for (guint end = n; end > 1; end--) {
    Limb t = l[0];
    l[0] = l[end - 1];
    l[end - 1] = t;
    sift_down (l, 0, end - 1);
  }
}

/* ---- people ----------------------------------------------------------------- */

static gint
pose_holding (const OpenPose *p, guint k, gint16 id)
{
  for (guint i = 0; i < p->n_poses; i++)
    if (p->poses[i].kpt[k] == id)
      return (gint) i;
  return -1;
}

/* Merges pose @j into pose @i when no keypoint of theirs disagrees. */
static void
merge_poses (OpenPose *p, guint i, guint j)
{
  Pose *a = &p->poses[i], *b = &p->poses[j];
  for (guint k = 0; k < N_KPTS; k++)
    if (a->kpt[k] >= 0 && b->kpt[k] >= 0 && a->kpt[k] != b->kpt[k])
      return;
  for (guint k = 0; k < N_KPTS; k++)
    if (a->kpt[k] < 0)
      a->kpt[k] = b->kpt[k];
  memmove (b, b + 1, (p->n_poses - j - 1) * sizeof *b);
  p->n_poses--;
}

/* Adds limb @l (of type @t) to the people. */
static void
add_limb (OpenPose *p, guint t, const Limb *l)
{
  guint ka = limb_kpts[t][0], kb = limb_kpts[t][1];
  gint16 ida = (gint16) (ka * MAX_PEAKS + l->a), idb = (gint16) (kb * MAX_PEAKS + l->b);
  gint pa = pose_holding (p, ka, ida), pb = pose_holding (p, kb, idb);
  if (pa < 0 && pb < 0) {
    if (p->n_poses == MAX_POSES)
      return;
    Pose *n = &p->poses[p->n_poses++];
    memset (n->kpt, 0xff, sizeof n->kpt);
    n->kpt[ka] = ida;
    n->kpt[kb] = idb;
  } else if (pa >= 0 && pb >= 0) {
    if (pa != pb)
      merge_poses (p, (guint) MIN (pa, pb), (guint) MAX (pa, pb));
  } else if (pa >= 0) {
    if (p->poses[pa].kpt[kb] < 0)
      p->poses[pa].kpt[kb] = idb;
  } else if (p->poses[pb].kpt[ka] < 0) {
    p->poses[pb].kpt[ka] = ida;
  }
}

static void
connect_limb (OpenPose *p, guint t, const float *pafs)
{
  guint ka = limb_kpts[t][0], kb = limb_kpts[t][1];
  guint na = p->n_peaks[ka], nb = p->n_peaks[kb];
  if (!na || !nb)
    return;
  gsize plane = (gsize) p->w * p->h;
  const float *fx = pafs + limb_paf[t] * plane, *fy = fx + plane;
  const Peak *pa = &p->peaks[ka * MAX_PEAKS], *pb = &p->peaks[kb * MAX_PEAKS];
  guint n = 0;
  for (guint i = 0; i < na; i++)
    for (guint j = 0; j < nb; j++) {
      float s = limb_score (p, fx, fy, &pa[i], &pb[j]);
      if (s > 0)
        p->limbs[n++] = (Limb) { (guint16) i, (guint16) j, s };
    }
  sort_limbs (p->limbs, n);
  memset (p->used_a, 0, na);
  memset (p->used_b, 0, nb);
  for (guint c = 0; c < n; c++) {
    const Limb *l = &p->limbs[c];
    if (p->used_a[l->a] || p->used_b[l->b])
      continue;
    p->used_a[l->a] = p->used_b[l->b] = 1;
    add_limb (p, t, l);
  }
}

static inline const Peak *
peak_of (const OpenPose *p, gint16 id)
{
  return &p->peaks[id];
}

/* Model pixels of a keypoint at grid position @v of @stride. */
static inline double
to_model (float v, double stride)
{
  return (v + 0.5) * stride;
}

static gboolean
openpose_decode (M2iDecoder *dec, const M2iTensor *outputs, guint n_outputs,
    const M2iInferGeometry *g, M2iInferResult *r, GError **error)
{
  OpenPose *p = dec->state;
  if (!infer_check_geometry (g, error)
      || !infer_check_output (outputs, n_outputs, (guint) p->heat_out, p->heat_name, M2I_ET_F32,
          &p->heat_shape, error)
      || !infer_check_output (outputs, n_outputs, (guint) p->paf_out, p->paf_name, M2I_ET_F32,
          &p->paf_shape, error))
    return FALSE;
  if (g->model_width <= 0 || g->model_height <= 0) {
    g_set_error (error, M2I_ERROR, M2I_ERROR_INVALID_ARGUMENT, "openpose decoder: the "
        "geometry's model size %dx%d is not positive: fill it with m2i_infer_geometry_init()",
        g->model_width, g->model_height);
    return FALSE;
  }
  const float *heat = outputs[p->heat_out].data, *pafs = outputs[p->paf_out].data;
  gsize plane = (gsize) p->w * p->h;
  for (guint k = 0; k < N_KPTS; k++)
    find_peaks (p, k, heat + k * plane);
  p->n_poses = 0;
  for (guint t = 0; t < N_LIMBS; t++)
    connect_limb (p, t, pafs);

  /* people with enough keypoints, scored, best first (insertion: few) */
  guint n = 0;
  for (guint i = 0; i < p->n_poses; i++) {
    Pose *ps = &p->poses[i];
    guint found = 0;
    float sum = 0.0f;
    for (guint k = 0; k < N_KPTS; k++)
      if (ps->kpt[k] >= 0) {
        found++;
        sum += peak_of (p, ps->kpt[k])->score;
      }
    ps->score = found ? sum / found : 0.0f;
    if (found < MIN_PERSON_KEYPOINTS || ps->score < dec->opts.confidence_threshold)
      continue;
    /* to its place among the first n kept (ties: the order they were made in) */
    Pose keep = *ps;
    guint pos = n;
    while (pos > 0 && keep.score > p->poses[pos - 1].score) {
      p->poses[pos] = p->poses[pos - 1];
      pos--;
    }
    p->poses[pos] = keep;
    n++;
  }

  guint max = MIN (infer_max_detections (&dec->opts, MAX_POSES), r->detections_capacity);
  if (n > max)
    r->truncated = TRUE;
  double sx = (double) g->model_width / p->w, sy = (double) g->model_height / p->h;
  for (guint i = 0; i < n && r->n_detections < max; i++) {
    const Pose *ps = &p->poses[i];
    if (r->n_keypoints + N_KPTS > r->keypoints_capacity) {
      r->truncated = TRUE;
      break;
    }
    double x0 = INFINITY, y0 = INFINITY, x1 = -INFINITY, y1 = -INFINITY;
    M2iInferKeypoint *kp = &r->keypoints[r->n_keypoints];
    for (guint k = 0; k < N_KPTS; k++) {
      if (ps->kpt[k] < 0) {
        kp[k] = (M2iInferKeypoint) { NAN, NAN, -1.0f };
        continue;
      }
      const Peak *pk = peak_of (p, ps->kpt[k]);
      double mx = to_model (pk->x, sx), my = to_model (pk->y, sy);
      x0 = MIN (x0, mx);
      y0 = MIN (y0, my);
      x1 = MAX (x1, mx);
      y1 = MAX (y1, my);
      kp[k] = (M2iInferKeypoint) { infer_source_x (g, (float) mx), infer_source_y (g, (float) my),
        pk->score };
    }
    M2iInferDetection *d = &r->detections[r->n_detections++];
    *d = (M2iInferDetection) { .class_id = 0, .confidence = ps->score,
      .first_keypoint = r->n_keypoints, .n_keypoints = N_KPTS };
    infer_geometry_map_box (g, x0, y0, x1, y1, d);
    r->n_keypoints += N_KPTS;
  }
  return TRUE;
}

const InferDecoderClass infer_decoder_openpose = {
  .type = M2I_MODEL_TYPE_OPENPOSE,
  .match = openpose_match,
  .prepare = openpose_prepare,
  .decode = openpose_decode,
  .free = openpose_free,
  .labels = person_labels,
};
