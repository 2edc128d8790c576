/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* infer-session.c — M2iInferSession: one request on a model, the M2I plan
 * into its input, running, decoding; see m2i-infer.h.
 *
 * A session made by m2i_infer_session_new() owns its request; the
 * asynchronous queue (infer-queue.c) makes sessions without one and binds
 * each, for one run, to a slot of a (batched) request it shares
 * (infer-batch.c): the session's plan writes that slice of the input, its
 * decoder reads that item of the outputs.
 */
#include "infer-private.h"

#include <base/m2i-error.h>
#include <base/m2i-fp16.h>
#include <math.h>
#include <string.h>

/* The input path the description was made for. */
typedef enum {
  PATH_NONE,
  PATH_PLAN,          /* an M2I plan into the model's input image */
  PATH_PLANES,        /* NV12/I420 planes copied into a PrePostProcessor head */
  PATH_INPUTS,        /* input tensors set by the caller */
} InputPath;

struct _M2iInferSession {
  M2iInferModel *model;
  /* the request: exactly one of them (NULL both before an unbound
   * session's first bind), the session's own or bound to it */
  M2iIrInferRequest *req;
  M2iSplitRunner *runner;
  gboolean own_request;
  gint slot;                      /* the item of a batched request */
  float **rows;                   /* per output: the item's detections (batched models) */
  M2iDecoder *decoder;
  M2iInferResult *result;
  M2iTensor *outputs;
  guint n_outputs;
  /* pre-processing */
  M2iInferPreprocess pp;
  M2iNormParams norm;
  gboolean norm_active;
  M2iPlanCache *cache;
  InferPreprocessPlan plan;       /* of the last run */
  guint8 *staging;                /* the plan's output when it cannot write the input */
  gsize staging_size;
  float *row;                     /* one row of fp32: writing the input from staging */
  guint64 inputs_set;             /* inputs given by m2i_infer_session_set_input (bit i) */
  /* what the last runs did */
  InputPath path;
  gboolean desc_direct, desc_swap;
  M2iChannelOrder desc_order;
  gchar *description;
  guint serial;
};

void
m2i_infer_preprocess_init (M2iInferPreprocess *pp)
{
  memset (pp, 0, sizeof *pp);
  pp->channel_order = M2I_ORDER_RGB;
  pp->resize_mode = M2I_RESIZE_LINEAR_ONNX;
  for (int c = 0; c < 3; c++)
    pp->std[c] = 1.0f;
  pp->input_scale = 1.0f;
  pp->profile = M2I_PROFILE_DEFAULT;
  pp->resize_type = M2I_RESIZE_TYPE_STANDARD;
  pp->pad_value = 0.0f;
}

static M2iInferSession *
session_new (M2iInferModel *model, gboolean own_request, GError **error)
{
  M2iInferSession *s = g_new0 (M2iInferSession, 1);
  s->model = m2i_infer_model_ref (model);
  s->cache = m2i_plan_cache_new ();
  s->description = g_strdup ("");
  m2i_infer_preprocess_init (&s->pp);
  m2i_norm_params_identity (&s->norm);
  s->own_request = own_request;
  if (own_request && !infer_model_take_request (model, &s->req, &s->runner, error))
    goto fail;
  s->decoder = m2i_decoder_new (model->ir, &model->decoder, error);
  if (!s->decoder)
    goto fail;
  s->result = m2i_decoder_new_result (s->decoder);
  s->n_outputs = (guint) MAX (m2i_ir_model_get_n_outputs (model->ir), 0);
  s->outputs = g_new0 (M2iTensor, MAX (s->n_outputs, 1));
  s->rows = g_new0 (float *, MAX (s->n_outputs, 1));
  for (guint i = 0; i < s->n_outputs; i++)
    if (model->out_kind[i] == INFER_OUT_DETECTIONS)
      s->rows[i] = g_new (float, m2i_shape_numel (&m2i_ir_model_get_output (model->ir,
                  (gint) i)->shape));
  if (model->input_kind == M2I_INFER_INPUT_IMAGE) {
    /* 3 planes of the model's size in the wider of fp16 and fp32 */
    s->staging_size = (gsize) 3 * model->width * model->height * sizeof (float);
    s->staging = g_malloc (s->staging_size);
    s->row = g_new (float, model->width);
  }
  return s;

fail:
  m2i_infer_session_free (s);
  return NULL;
}

M2iInferSession *
m2i_infer_session_new (M2iInferModel *model, GError **error)
{
  return session_new (model, TRUE, error);
}

M2iInferSession *
infer_session_new_unbound (M2iInferModel *model, GError **error)
{
  return session_new (model, FALSE, error);
}

void
infer_session_bind (M2iInferSession *s, M2iIrInferRequest *req, M2iSplitRunner *runner,
    gint slot)
{
  g_return_if_fail (!s->own_request);
  s->req = req;
  s->runner = runner;
  s->slot = slot;
}

void
m2i_infer_session_free (M2iInferSession *s)
{
  if (!s)
    return;
  if (s->req && s->own_request)
    m2i_ir_infer_request_free (s->req);
  if (s->runner && s->own_request)
    m2i_split_runner_free (s->runner);
  for (guint i = 0; s->rows && i < s->n_outputs; i++)
    g_free (s->rows[i]);
  g_free (s->rows);
  m2i_decoder_free (s->decoder);
  if (s->result)
    m2i_infer_result_free (s->result);
  m2i_plan_cache_free (s->cache);
  g_free (s->outputs);
  g_free (s->staging);
  g_free (s->row);
  g_free (s->description);
  m2i_infer_model_unref (s->model);
  g_free (s);
}

M2iInferModel *
m2i_infer_session_get_model (const M2iInferSession *s)
{
  return s->model;
}

M2iDecoder *
m2i_infer_session_get_decoder (M2iInferSession *s)
{
  return s->decoder;
}

const M2iInferResult *
m2i_infer_session_get_result (const M2iInferSession *s)
{
  return s->result;
}

const M2iTensor *
m2i_infer_session_get_outputs (const M2iInferSession *s, guint *n_outputs)
{
  if (n_outputs)
    *n_outputs = s->n_outputs;
  return s->outputs;
}

const char *
m2i_infer_session_describe (const M2iInferSession *s, guint *serial)
{
  if (serial)
    *serial = s->serial;
  return s->description;
}

static void
set_description (M2iInferSession *s, InputPath path, gchar *text)
{
  g_free (s->description);
  s->description = text;
  s->path = path;
  s->serial++;
}

gboolean
m2i_infer_session_set_preprocess (M2iInferSession *s, const M2iInferPreprocess *pp,
    GError **error)
{
  float scale = pp->input_scale;
  if (!isfinite (pp->pad_value) || pp->pad_value < 0.0f || pp->pad_value > 255.0f
      || (guint) pp->resize_type > M2I_RESIZE_TYPE_CROP) {
    g_set_error (error, M2I_ERROR, M2I_ERROR_INVALID_ARGUMENT,
        "pad value %g or resize type %d out of range (0..255, a M2iResizeType)",
        (double) pp->pad_value, (int) pp->resize_type);
    return FALSE;
  }
  if (!(scale > 0.0f) || !isfinite (scale)) {
    g_set_error (error, M2I_ERROR, M2I_ERROR_INVALID_ARGUMENT,
        "input-scale must be positive and finite (is %g)", (double) pp->input_scale);
    return FALSE;
  }
  M2iNormParams norm;
  if (!m2i_norm_params_from_mean_std (&norm, pp->mean, pp->std, scale)) {
    g_set_error (error, M2I_ERROR, M2I_ERROR_INVALID_ARGUMENT,
        "mean <%g, %g, %g> / std <%g, %g, %g> with input-scale %g cannot be held as fp16 "
        "coefficients (std must be positive, mean/input-scale and std/input-scale within "
        "fp16 range)", pp->mean[0], pp->mean[1], pp->mean[2], pp->std[0], pp->std[1],
        pp->std[2], (double) scale);
    return FALSE;
  }
  M2iNormParams id;
  m2i_norm_params_identity (&id);
  s->pp = *pp;
  s->norm = norm;
  s->norm_active = memcmp (&norm, &id, sizeof id) != 0;
  return TRUE;
}

/* ---- running the model -------------------------------------------------------- */

static M2iTensor *
input_tensor (M2iInferSession *s, gint i)
{
  return s->runner ? m2i_split_runner_get_input (s->runner, i)
      : m2i_ir_infer_request_get_input (s->req, i);
}

/* The session's frame of the image input (of a split head, input 0): its
 * slot of a batched request. */
static void
image_tensor (M2iInferSession *s, M2iTensor *t)
{
  const M2iInferModel *m = s->model;
  infer_batch_input_slot (m, input_tensor (s, m->has_head ? 0 : m->image.index), s->slot, t);
}

/* Runs the model (@after_head: the image path of a split plan with a head,
 * whose output the pre-processing wrote) and decodes its outputs for
 * @geometry. */
gboolean
infer_request_run (M2iIrInferRequest *req, M2iSplitRunner *runner, gboolean after_head,
    GError **error)
{
  if (runner)
    return after_head ? m2i_split_runner_run_after_head (runner, error)
        : m2i_split_runner_run (runner, error);
  return m2i_ir_infer_request_infer (req, error);
}

/* Reads the session's item of the outputs the request holds and decodes
 * them for @geometry. */
static gboolean
decode (M2iInferSession *s, const M2iInferGeometry *geometry, GError **error)
{
  for (guint i = 0; i < s->n_outputs; i++)
    infer_batch_output (s->model, (gint) i, s->runner ? m2i_split_runner_get_output (s->runner,
            (gint) i) : m2i_ir_infer_request_get_output (s->req, (gint) i), s->slot, s->rows[i],
        &s->outputs[i]);
  gboolean ok = m2i_decoder_decode (s->decoder, s->outputs, s->n_outputs, geometry, s->result,
      error);
  for (guint i = 0; i < s->n_outputs; i++)
    infer_batch_output_done (s->model, (gint) i, &s->outputs[i]);
  return ok;
}

static gboolean
infer_and_decode (M2iInferSession *s, gboolean after_head, const M2iInferGeometry *geometry,
    GError **error)
{
  return infer_request_run (s->req, s->runner, after_head, error)
      && decode (s, geometry, error);
}

gboolean
infer_session_decode (M2iInferSession *s, GError **error)
{
  return decode (s, &s->plan.geometry, error);
}

/* ---- image models: the M2I plan into the input ----------------------------------- */

/* The type the pre-processing writes: the model input's (u8 pixels only
 * without a normalisation), fp32 for i8 inputs (and u8 ones normalised),
 * the head buffer's fp16 for a split head. */
static M2iDataType
target_dtype (M2iInferSession *s)
{
  const M2iInferModel *m = s->model;
  if (m->has_head)
    return M2I_DTYPE_F16;
  /* (the request's tensor: the runtime may hold a declared f16 as f32) */
  switch (input_tensor (s, m->image.index)->type) {
    case M2I_ET_F16: return M2I_DTYPE_F16;
    case M2I_ET_U8: return s->norm_active ? M2I_DTYPE_F32 : M2I_DTYPE_U8;
    default: return M2I_DTYPE_F32;
  }
}

/* The image the pre-processing writes when it writes the model's input
 * directly: the head's output buffer of a split plan, or the image input
 * (planar, @channels of @dt). */
static gboolean
model_image (M2iInferSession *s, guint channels, M2iDataType dt, M2iImage *img, GError **error)
{
  if (s->model->has_head)
    return m2i_split_runner_get_head_image (s->runner, img, error);
  M2iTensor t;
  image_tensor (s, &t);
  M2iFormat f = m2i_format_compose (M2I_LAYOUT_PLANAR, dt,
      channels == 1 ? M2I_ORDER_GRAY : M2I_ORDER_RGB);
  return m2i_image_wrap (img, f, s->model->width, s->model->height, t.data,
      m2i_tensor_nbytes (&t), 0, error);
}

/* Builds the ops for @source into s->plan and the image they write into
 * @out: the model's input (*@target, when the plan writes it directly) or
 * the staging buffer. */
static gboolean
build_plan (M2iInferSession *s, const M2iImage *source, const M2iOpList *queued,
    const M2iLetterbox *lb, M2iImage *target, M2iImage *out, GError **error)
{
  M2iDataType dt = target_dtype (s);
  if (!infer_preprocess_build (s->model, &s->pp, s->norm_active ? &s->norm : NULL, dt, source,
          queued, lb, &s->plan, error))
    return FALSE;
  if (s->plan.direct) {
    if (!model_image (s, s->plan.channels, dt, target, error))
      return FALSE;
    *out = *target;
  } else {
    m2i_image_wrap (out, s->plan.format, s->model->width, s->model->height, s->staging,
        s->staging_size, 0, NULL);
  }
  out->format = s->plan.format;
  if (s->plan.swap)
    infer_swap_planes (out);    /* tensor channel c holds the frame's channel 2 - c */
  return TRUE;
}

/* From the staging buffer (@staged, in the model's channel order) into
 * the model's input: copied, widened or narrowed plane by plane when only
 * the float type may differ (and for a split head), else written in the
 * input's layout and type. */
static gboolean
write_staged (M2iInferSession *s, const M2iImage *staged, GError **error)
{
  const M2iInferModel *m = s->model;
  M2iDataType st = m2i_format_dtype (staged->format);
  guint channels = m2i_format_n_channels (staged->format);
  M2iTensor t;
  image_tensor (s, &t);
  gboolean planes = m->has_head || (!m->image.nhwc && (guint) m->image.channels == channels
      && m2i_element_type_is_float (t.type) && st != M2I_DTYPE_U8);
  if (planes) {
    M2iImage target;
    M2iDataType dt = m->has_head || t.type == M2I_ET_F16 ? M2I_DTYPE_F16 : M2I_DTYPE_F32;
    if (!model_image (s, channels, dt, &target, error))
      return FALSE;
    infer_convert_planes (staged, &target);
    return TRUE;
  }
  M2iInferImageInput img = m->image;
  img.type = t.type;
  infer_input_write (&img, staged, &t, s->row);
  return TRUE;
}

static M2iPlanOptions
plan_options (const M2iInferSession *s)
{
  M2iPlanOptions o;
  m2i_plan_options_init (&o);
  o.profile = s->pp.profile;
  o.n_threads = s->pp.n_threads;
  return o;
}

/* "fp16 widened to fp32 (RGB)", "... written as u8 NHWC (BGR), channels swapped", "f32
 * (gray repeated into 3 channels)": how the plan's output reaches the
 * model's input. */
static gchar *
describe_input_path (M2iInferSession *s)
{
  const InferPreprocessPlan *p = &s->plan;
  const M2iInferModel *m = s->model;
  M2iElementType type = m->has_head ? M2I_ET_F16 : input_tensor (s, m->image.index)->type;
  M2iDataType dt = m2i_format_dtype (p->format);
  GString *t = g_string_new (NULL);
  if (p->direct)
    g_string_append (t, m2i_format_to_string (p->format));
  else if (m->has_head || (!m->image.nhwc && (guint) m->image.channels == p->channels
          && m2i_element_type_is_float (type) && dt != M2I_DTYPE_U8))
    g_string_append (t, dt == M2I_DTYPE_F16 ? "fp16 widened to fp32" : "fp32 narrowed to fp16");
  else
    g_string_append_printf (t, "%s %s written as %s %s", m2i_format_to_string (p->format),
        "(staged)", m2i_element_type_to_string (type), m->image.nhwc ? "NHWC" : "NCHW");
  if (p->channels == 1 && !m->has_head && m->image.channels == 3)
    g_string_append (t, " (gray repeated into 3 channels)");
  else if (p->channels == 1)
    g_string_append (t, " (gray)");
  else
    g_string_append_printf (t, " (%s)%s", p->order == M2I_ORDER_RGB ? "RGB" : "BGR",
        p->swap ? ", channels swapped" : "");
  return g_string_free (t, FALSE);
}

static void
describe_plan (M2iInferSession *s, gboolean replanned)
{
  const InferPreprocessPlan *p = &s->plan;
  if (!replanned && s->path == PATH_PLAN && s->desc_direct == p->direct
      && s->desc_swap == p->swap && s->desc_order == p->order)
    return;
  s->desc_direct = p->direct;
  s->desc_swap = p->swap;
  s->desc_order = p->order;
  gchar *input = describe_input_path (s);
  set_description (s, PATH_PLAN, g_strdup_printf ("%s -> model input %s; model on %s",
          m2i_plan_cache_describe (s->cache), input, s->model->description));
  g_free (input);
}

/* NV12/I420 models: @source must be the head's frame. */
static gboolean
check_planes_source (const M2iInferSession *s, const M2iImage *source, const M2iOpList *queued,
    const M2iLetterbox *lb, GError **error)
{
  const M2iInferModel *m = s->model;
  M2iFormat want = m->input_kind == M2I_INFER_INPUT_NV12 ? M2I_FORMAT_SP_NV12_8
      : M2I_FORMAT_PL_YUV420_8;
  if (source->format != want || source->width != m->width || source->height != m->height
      || (queued && queued->n_ops) || (lb && lb->active)) {
    g_set_error (error, M2I_ERROR, M2I_ERROR_INVALID_ARGUMENT,
        "the model's input is the %s PrePostProcessor head of a %dx%d frame; got %s %dx%d%s",
        m2i_format_to_string (want), m->width, m->height, m2i_format_to_string (source->format),
        source->width, source->height, queued && queued->n_ops ? " with ops queued" : "");
    return FALSE;
  }
  return TRUE;
}

static gboolean
check_image_model (const M2iInferSession *s, GError **error)
{
  if (s->model->input_kind == M2I_INFER_INPUT_TENSORS) {
    g_set_error (error, M2I_ERROR, M2I_ERROR_INVALID_ARGUMENT,
        "the model takes no image (%d inputs, not one [1,3,H,W] float input or an NV12/I420 "
        "head): set its inputs with m2i_infer_session_set_input()",
        m2i_ir_model_get_n_inputs (s->model->ir));
    return FALSE;
  }
  return TRUE;
}

/* The centre of @src cut to the model's aspect ratio (resize_type crop)
 * into @view, its origin in *@x0, *@y0 (even for NV12/I420). */
static void
crop_view (const M2iInferModel *m, const M2iImage *src, M2iImage *view, gint *x0, gint *y0)
{
  gint w = src->width, h = src->height;
  gint cw = w, ch = h;
  if ((gint64) w * m->height > (gint64) h * m->width)
    cw = (gint) CLAMP (((gint64) h * m->width + m->height / 2) / m->height, 1, w);
  else
    ch = (gint) CLAMP (((gint64) w * m->height + m->width / 2) / m->width, 1, h);
  gboolean yuv = m2i_format_is_yuv (src->format);
  if (yuv) {
    cw = MAX (2, cw & ~1);
    ch = MAX (2, ch & ~1);
  }
  *x0 = (w - cw) / 2;
  *y0 = (h - ch) / 2;
  if (yuv) {
    *x0 &= ~1;
    *y0 &= ~1;
  }
  *view = *src;
  view->width = cw;
  view->height = ch;
  for (guint p = 0; p < m2i_format_n_planes (src->format); p++) {
    gboolean chroma = yuv && p > 0;
    gsize off = (gsize) (chroma ? *y0 / 2 : *y0) * src->stride[p]
        + (gsize) (chroma ? *x0 / 2 * (src->format == M2I_FORMAT_SP_NV12_8 ? 2 : 1)
        : *x0 * (gint) m2i_format_pixel_stride (src->format));
    if (!src->data[p])
      continue;
    view->data[p] = off <= src->size[p] ? src->data[p] + off : src->data[p];
    view->size[p] = off <= src->size[p] ? src->size[p] - off : 0;
  }
}

gboolean
m2i_infer_session_check_inputs (const M2iInferSession *s, GError **error)
{
  M2iIrModel *ir = s->model->ir;
  gint n = m2i_ir_model_get_n_inputs (ir);
  for (gint i = 0; i < n && !s->model->has_head; i++) {
    if (i == s->model->image.index || (i < 64 && (s->inputs_set >> i) & 1))
      continue;
    const M2iIrIoInfo *io = m2i_ir_model_get_input (ir, i);
    gchar *shape = m2i_shape_to_string (&io->shape);
    g_set_error (error, M2I_ERROR, M2I_ERROR_INVALID_ARGUMENT, "model input '%s' %s %s has no "
        "value (the image goes into '%s'): give it with extra-inputs=\"%s=v1,v2,...\" or "
        "\"%s=@file\" (m2i_infer_session_set_extra_inputs)", io->name,
        m2i_element_type_to_string (io->type), shape,
        m2i_ir_model_get_input (ir, s->model->image.index)->name, io->name, io->name);
    g_free (shape);
    return FALSE;
  }
  return TRUE;
}

/* Plans the pre-processing of @source (with @queued and @lb) into the
 * model's input and, with @run, runs it. */
static gboolean
preprocess (M2iInferSession *s, const M2iImage *source, const M2iOpList *queued,
    const M2iLetterbox *lb, gboolean run, GError **error)
{
  M2iImage target, out, view;
  M2iPlanOptions opts = plan_options (s);
  gboolean replanned = FALSE;
  gint x0 = 0, y0 = 0, full_w = source->width, full_h = source->height;
  gboolean crop = s->pp.resize_type == M2I_RESIZE_TYPE_CROP && !s->model->has_head
      && (!queued || !queued->n_ops) && (!lb || !lb->active);
  if (crop) {
    crop_view (s->model, source, &view, &x0, &y0);
    source = &view;
  }
  if (!m2i_infer_session_check_inputs (s, error)
      || !build_plan (s, source, queued, lb, &target, &out, error))
    return FALSE;
  const M2iLetterbox *use = s->plan.letterbox.active ? &s->plan.letterbox : lb;
  if (!(run ? m2i_plan_cache_run (s->cache, source, &s->plan.ops, use, &out, &opts, &replanned,
              error) : m2i_plan_cache_prepare (s->cache, source, &s->plan.ops, use, &out, &opts,
              &replanned, error)))
    return FALSE;
  if (crop) {
    s->plan.geometry.crop_x = x0;
    s->plan.geometry.crop_y = y0;
    s->plan.geometry.source_width = full_w;
    s->plan.geometry.source_height = full_h;
  }
  if (run && !s->plan.direct) {
    /* out's planes are in the model's order now, as target's */
    M2iImage staged;
    m2i_image_wrap (&staged, s->plan.format, s->model->width, s->model->height, s->staging,
        s->staging_size, 0, NULL);
    if (!write_staged (s, &staged, error))
      return FALSE;
  }
  describe_plan (s, replanned);
  return TRUE;
}

gboolean
m2i_infer_session_prepare (M2iInferSession *s, const M2iImage *source, const M2iOpList *queued,
    const M2iLetterbox *letterbox, GError **error)
{
  if (!check_image_model (s, error) || !m2i_image_check (source, "source", FALSE, error))
    return FALSE;
  if (s->model->input_kind != M2I_INFER_INPUT_IMAGE)
    return check_planes_source (s, source, queued, letterbox, error);
  return preprocess (s, source, queued, letterbox, FALSE, error);
}

/* Copies the planes of @source into the model's u8 inputs. */
static void
copy_planes (M2iInferSession *s, const M2iImage *source)
{
  for (guint p = 0; p < m2i_format_n_planes (source->format); p++) {
    gsize row;
    gint rows;
    m2i_format_plane_geometry (source->format, source->width, source->height, p, &row, &rows);
    guint8 *dst = input_tensor (s, (gint) p)->data;
    for (gint y = 0; y < rows; y++)
      memcpy (dst + (gsize) y * row, source->data[p] + (gsize) y * source->stride[p], row);
  }
  if (s->path != PATH_PLANES)
    set_description (s, PATH_PLANES, g_strdup_printf ("%s planes straight into the model's "
            "PrePostProcessor head; model on %s", m2i_format_to_string (source->format),
            s->model->description));
}

gboolean
infer_session_preprocess (M2iInferSession *s, const M2iImage *source, const M2iOpList *queued,
    const M2iLetterbox *letterbox, GError **error)
{
  if (!check_image_model (s, error))
    return FALSE;
  if (s->model->input_kind != M2I_INFER_INPUT_IMAGE) {
    if (!check_planes_source (s, source, queued, letterbox, error)
        || !m2i_image_check (source, "source", TRUE, error))
      return FALSE;
    copy_planes (s, source);
    m2i_infer_geometry_init (&s->plan.geometry, source->width, source->height, source->width,
        source->height, FALSE);
    return TRUE;
  }
  return preprocess (s, source, queued, letterbox, TRUE, error);
}

gboolean
m2i_infer_session_run (M2iInferSession *s, const M2iImage *source, const M2iOpList *queued,
    const M2iLetterbox *letterbox, GError **error)
{
  return infer_session_preprocess (s, source, queued, letterbox, error)
      && infer_and_decode (s, s->model->has_head, &s->plan.geometry, error);
}

/* ---- tensor inputs ------------------------------------------------------------------ */

gboolean
m2i_infer_session_set_input (M2iInferSession *s, gint i, const M2iTensor *src, GError **error)
{
  M2iTensor *t = i >= 0 ? input_tensor (s, i) : NULL;
  if (!t) {
    g_set_error (error, M2I_ERROR, M2I_ERROR_INVALID_ARGUMENT, "the model has no input %d "
        "(it has %d)", i, m2i_ir_model_get_n_inputs (s->model->ir));
    return FALSE;
  }
  gsize n = (gsize) m2i_shape_numel (&t->shape);
  if (i < 64)
    s->inputs_set |= G_GUINT64_CONSTANT (1) << i;
  if (src->type == t->type)
    memcpy (t->data, src->data, m2i_tensor_nbytes (t));
  else if (src->type == M2I_ET_F16 && t->type == M2I_ET_F32)
    m2i_f16_to_f32_n (src->data, t->data, n);
  else if (src->type == M2I_ET_F32 && t->type == M2I_ET_F16)
    m2i_f32_to_f16_n (src->data, t->data, n);
  else {
    g_set_error (error, M2I_ERROR, M2I_ERROR_INVALID_ARGUMENT, "input %d is %s; %s cannot be "
        "copied into it", i, m2i_element_type_to_string (t->type),
        m2i_element_type_to_string (src->type));
    return FALSE;
  }
  return TRUE;
}

gboolean
m2i_infer_session_run_inputs (M2iInferSession *s, GError **error)
{
  const M2iInferModel *m = s->model;
  gint n = m2i_ir_model_get_n_inputs (m->ir);
  if (s->path != PATH_INPUTS)
    set_description (s, PATH_INPUTS, g_strdup_printf ("%d input tensor%s copied in; model on %s",
            n, n == 1 ? "" : "s", m->description));
  M2iInferGeometry g;
  if (m->input_kind == M2I_INFER_INPUT_TENSORS)
    m2i_infer_geometry_init (&g, 1, 1, 1, 1, FALSE);
  else
    m2i_infer_geometry_init (&g, m->width, m->height, m->width, m->height, FALSE);
  return infer_and_decode (s, FALSE, &g, error);
}

/* ---- what infer-roi.c uses (infer-private.h) ------------------------------------------ */

void
infer_session_get_preprocess (const M2iInferSession *s, M2iInferPreprocess *pp,
    const M2iNormParams **norm)
{
  *pp = s->pp;
  *norm = s->norm_active ? &s->norm : NULL;
}

M2iDataType
infer_session_target_dtype (M2iInferSession *s)
{
  return target_dtype (s);
}

gboolean
infer_session_write_staged (M2iInferSession *s, const M2iImage *staged, GError **error)
{
  return write_staged (s, staged, error);
}

gboolean
infer_session_infer_and_decode (M2iInferSession *s, gboolean after_head,
    const M2iInferGeometry *geometry, GError **error)
{
  return infer_and_decode (s, after_head, geometry, error);
}
