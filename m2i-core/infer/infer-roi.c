/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* infer-roi.c — M2iInferRoi: the regions of a frame through a session; see
 * m2i-infer-roi.h.
 *
 * Per batch of regions: each region's crop is a view of the frame; the
 * session's pre-processing builder (infer-preprocess.c) gives the ops from
 * that view to the model's input image, whose plan comes from a small
 * table keyed by the view's geometry (plans depend on the input size); the
 * batch's plans write one staging image each in one m2i_plan_run_batch();
 * then each staging image goes into the model's input, the model runs and
 * the session's decoder decodes it with the region's geometry.
 */
#include "infer-private.h"
#include "m2i-infer-roi.h"

#include <base/m2i-error.h>
#include <string.h>

#define ROI_BATCH_MAX 16
#define ROI_STAGING_BUDGET ((gsize) 32 << 20)
#define ROI_PLAN_SLOTS 64

typedef struct {
  M2iPlan *plan;                  /* NULL: empty slot */
  M2iImage in, out;               /* geometry the plan was made for */
  M2iOpList ops;
  M2iProfile profile;
  guint64 used;                   /* tick of the last use */
} PlanSlot;

/* One region of the batch being run. */
typedef struct {
  guint index;                    /* in the caller's array */
  gboolean empty;                 /* nothing inside the frame */
  M2iInferGeometry geometry;
  guint plan;                     /* index into the batch's plan arrays */
} Entry;

struct _M2iInferRoi {
  M2iInferSession *s;
  gint mw, mh;                    /* the model's input image */
  guint batch;                    /* regions per submission */
  gsize per_region;               /* staging bytes per region */
  guint8 *staging;
  PlanSlot slots[ROI_PLAN_SLOTS];
  guint64 tick;
  /* the batch being run */
  Entry entries[ROI_BATCH_MAX];
  M2iPlan *plans[ROI_BATCH_MAX];
  M2iImage ins[ROI_BATCH_MAX], outs[ROI_BATCH_MAX];
  InferPreprocessPlan ip;         /* of the last region */
  M2iInferRoiStats stats;
  /* what ran */
  M2iOpList desc_ops;
  gboolean desc_direct, desc_swap, desc_valid;
  M2iChannelOrder desc_order;
  gchar *description;
  guint serial;
};

gboolean
m2i_infer_roi_crop_rect (M2iFormat format, gint frame_width, gint frame_height,
    const M2iInferRegion *region, M2iInferRegion *crop)
{
  memset (crop, 0, sizeof *crop);
  if (region->width <= 0 || region->height <= 0 || frame_width <= 0 || frame_height <= 0)
    return FALSE;
  gint64 x0 = MAX (region->x, 0), y0 = MAX (region->y, 0);
  gint64 x1 = MIN ((gint64) region->x + region->width, frame_width);
  gint64 y1 = MIN ((gint64) region->y + region->height, frame_height);
  if (x1 <= x0 || y1 <= y0)
    return FALSE;
  if (m2i_format_is_yuv (format)) {
    x0 &= ~(gint64) 1;
    y0 &= ~(gint64) 1;
    x1 = MIN ((x1 + 1) & ~(gint64) 1, frame_width & ~1);
    y1 = MIN ((y1 + 1) & ~(gint64) 1, frame_height & ~1);
    if (x1 <= x0 || y1 <= y0)
      return FALSE;
  }
  crop->x = (gint) x0;
  crop->y = (gint) y0;
  crop->width = (gint) (x1 - x0);
  crop->height = (gint) (y1 - y0);
  return TRUE;
}

/* @frame's planes moved to the crop @c (even for 4:2:0) and its size set
 * to the crop's: the crop as an image of its own. */
static void
crop_view (const M2iImage *frame, const M2iInferRegion *c, M2iImage *view)
{
  *view = *frame;
  M2iFormat f = frame->format;
  for (guint p = 0; p < m2i_format_n_planes (f); p++) {
    gsize x = (gsize) c->x, y = (gsize) c->y;
    if (m2i_format_is_yuv (f) && p > 0) {
      y /= 2;
      /* NV12's UV row holds a U,V pair per 2 pixels: x bytes; I420's U or V
       * row one sample per 2 pixels */
      x = f == M2I_FORMAT_SP_NV12_8 ? x : x / 2;
    } else if (!m2i_format_is_yuv (f)) {
      x *= m2i_format_pixel_stride (f);      /* a pixel's bytes (a planar sample's) */
    }
    gsize off = y * frame->stride[p] + x;
    view->data[p] = frame->data[p] + off;
    view->size[p] = frame->size[p] - off;
  }
  view->width = c->width;
  view->height = c->height;
}

M2iInferRoi *
m2i_infer_roi_new (M2iInferSession *session, GError **error)
{
  gint w = 0, h = 0;
  M2iInferModel *m = m2i_infer_session_get_model (session);
  if (m2i_infer_model_get_input_kind (m, &w, &h) != M2I_INFER_INPUT_IMAGE) {
    g_set_error (error, M2I_ERROR, M2I_ERROR_INVALID_ARGUMENT,
        "regions of interest need a model that takes an image of any size (one float input "
        "[1,3,H,W]); %s takes %s", m2i_infer_model_get_name (m),
        m2i_infer_model_get_input_kind (m, NULL, NULL) == M2I_INFER_INPUT_TENSORS
        ? "tensors" : "NV12/I420 frames of its own size only");
    return NULL;
  }
  M2iInferRoi *r = g_new0 (M2iInferRoi, 1);
  r->s = session;
  r->mw = w;
  r->mh = h;
  /* 3 planes in the wider of fp16 and fp32, 64-byte steps */
  r->per_region = ((gsize) 3 * w * h * sizeof (float) + 63) & ~(gsize) 63;
  r->batch = (guint) CLAMP (ROI_STAGING_BUDGET / r->per_region, 1, ROI_BATCH_MAX);
  r->staging = g_malloc (r->per_region * r->batch);
  r->description = g_strdup ("");
  return r;
}

void
m2i_infer_roi_free (M2iInferRoi *r)
{
  if (!r)
    return;
  for (guint i = 0; i < ROI_PLAN_SLOTS; i++)
    m2i_plan_free (r->slots[i].plan);
  g_free (r->staging);
  g_free (r->description);
  g_free (r);
}

void
m2i_infer_roi_get_stats (const M2iInferRoi *r, M2iInferRoiStats *stats)
{
  *stats = r->stats;
}

const char *
m2i_infer_roi_describe (const M2iInferRoi *r, guint *serial)
{
  if (serial)
    *serial = r->serial;
  return r->description;
}

/* The plan for @in -> @out through @ops: the table's, or made now in the
 * least recently used slot. NULL with @error. */
static M2iPlan *
get_plan (M2iInferRoi *r, const M2iImage *in, const M2iOpList *ops, const M2iImage *out,
    M2iProfile profile, GError **error)
{
  PlanSlot *victim = &r->slots[0];
  r->tick++;
  for (guint i = 0; i < ROI_PLAN_SLOTS; i++) {
    PlanSlot *sl = &r->slots[i];
    if (sl->plan && sl->profile == profile && m2i_image_same_geometry (&sl->in, in)
        && m2i_image_same_geometry (&sl->out, out) && m2i_op_list_equal (&sl->ops, ops)) {
      sl->used = r->tick;
      r->stats.plans_reused++;
      return sl->plan;
    }
    if (sl->used < victim->used)
      victim = sl;
  }
  /* Regions run concurrently, one plan each: one slice per plan. */
  M2iPlanOptions opts = { profile, 1 };
  M2iPlan *plan = m2i_plan_new (in, ops, out, &opts, error);
  if (!plan)
    return NULL;
  m2i_plan_free (victim->plan);
  victim->plan = plan;
  victim->in = *in;
  victim->out = *out;
  victim->ops = *ops;
  victim->profile = profile;
  victim->used = r->tick;
  r->stats.plans_made++;
  return plan;
}

static void
describe (M2iInferRoi *r)
{
  const InferPreprocessPlan *p = &r->ip;
  if (r->desc_valid && m2i_op_list_equal (&r->desc_ops, &p->ops) && r->desc_direct == p->direct
      && r->desc_swap == p->swap && r->desc_order == p->order)
    return;
  r->desc_valid = TRUE;
  r->desc_ops = p->ops;
  r->desc_direct = p->direct;
  r->desc_swap = p->swap;
  r->desc_order = p->order;
  gchar *ops = m2i_op_list_to_string (&p->ops);
  M2iDataType dt = m2i_format_dtype (p->format);
  M2iInferModel *m = m2i_infer_session_get_model (r->s);
  g_free (r->description);
  r->description = g_strdup_printf ("per region: crop -> %s, up to %u regions per device "
      "submission -> model input %s (%s)%s; model on %s", ops, r->batch,
      p->direct ? m2i_format_to_string (p->format)
      : dt == M2I_DTYPE_F16 ? "fp16 widened to fp32" : "fp32 narrowed to fp16",
      p->order == M2I_ORDER_RGB ? "RGB" : "BGR", p->swap ? ", channels swapped" : "",
      m2i_infer_model_describe (m));
  g_free (ops);
  r->serial++;
}

/* Adds region @index (@region of @source) to the batch: its crop, ops,
 * staging image and plan. */
static gboolean
add_region (M2iInferRoi *r, const M2iImage *source, const M2iInferRegion *region, guint index,
    guint *n_entries, guint *n_plans, M2iDataType target, GError **error)
{
  Entry *e = &r->entries[(*n_entries)++];
  M2iInferRegion c;
  e->index = index;
  e->empty = !m2i_infer_roi_crop_rect (source->format, source->width, source->height, region,
      &c);
  if (e->empty)
    return TRUE;
  M2iInferPreprocess pp;
  const M2iNormParams *norm;
  infer_session_get_preprocess (r->s, &pp, &norm);
  pp.resize_type = M2I_RESIZE_TYPE_STANDARD;   /* a region is stretched to the model */
  M2iImage view;
  crop_view (source, &c, &view);
  M2iInferModel *m = m2i_infer_session_get_model (r->s);
  if (!infer_preprocess_build (m, &pp, norm, target, &view, NULL, NULL, &r->ip, error))
    return FALSE;
  guint k = (*n_plans)++;
  M2iImage *out = &r->outs[k];
  m2i_image_wrap (out, r->ip.format, r->mw, r->mh, r->staging + k * r->per_region,
      r->per_region, 0, NULL);
  if (r->ip.swap)
    infer_swap_planes (out);    /* staging plane c holds the frame's channel 2 - c */
  r->ins[k] = view;
  r->plans[k] = get_plan (r, &view, &r->ip.ops, out, pp.profile, error);
  if (!r->plans[k])
    return FALSE;
  e->plan = k;
  e->geometry = r->ip.geometry;
  e->geometry.source_width = source->width;
  e->geometry.source_height = source->height;
  e->geometry.crop_x = c.x;
  e->geometry.crop_y = c.y;
  return TRUE;
}

/* Pre-processes the batch's regions in one submission, then runs the model
 * on each and reports it. */
static gboolean
run_batch (M2iInferRoi *r, guint n_entries, guint n_plans, M2iInferRoiFunc func,
    gpointer user_data, GError **error)
{
  if (n_plans > 0) {
    if (!m2i_plan_run_batch (r->plans, r->ins, r->outs, n_plans, error))
      return FALSE;
    r->stats.batches++;
    describe (r);
  }
  M2iInferModel *m = m2i_infer_session_get_model (r->s);
  for (guint i = 0; i < n_entries; i++) {
    const Entry *e = &r->entries[i];
    if (e->empty) {
      if (func)
        func (e->index, NULL, user_data);
      continue;
    }
    M2iImage staged;
    m2i_image_wrap (&staged, r->outs[e->plan].format, r->mw, r->mh,
        r->staging + e->plan * r->per_region, r->per_region, 0, NULL);
    if (!infer_session_write_staged (r->s, &staged, error)
        || !infer_session_infer_and_decode (r->s, m2i_infer_model_get_head (m) != NULL,
            &e->geometry, error))
      return FALSE;
    r->stats.regions++;
    if (func)
      func (e->index, m2i_infer_session_get_result (r->s), user_data);
  }
  return TRUE;
}

gboolean
m2i_infer_roi_run (M2iInferRoi *r, const M2iImage *source, const M2iInferRegion *regions,
    guint n_regions, M2iInferRoiFunc func, gpointer user_data, GError **error)
{
  if (n_regions == 0)
    return TRUE;
  if (!regions) {
    g_set_error (error, M2I_ERROR, M2I_ERROR_INVALID_ARGUMENT, "no regions");
    return FALSE;
  }
  if (!m2i_image_check (source, "frame", TRUE, error))
    return FALSE;
  M2iDataType target = infer_session_target_dtype (r->s);
  guint n_entries = 0, n_plans = 0;
  for (guint i = 0; i < n_regions; i++) {
    if (!add_region (r, source, &regions[i], i, &n_entries, &n_plans, target, error))
      return FALSE;
    gboolean full = n_plans == r->batch || n_entries == ROI_BATCH_MAX;
    if ((full || i + 1 == n_regions)
        && !run_batch (r, n_entries, n_plans, func, user_data, error))
      return FALSE;
    if (full)
      n_entries = n_plans = 0;
  }
  return TRUE;
}
