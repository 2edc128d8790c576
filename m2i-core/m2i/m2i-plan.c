/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* m2i-plan.c — profiles, the planner, plan description and synchronous runs.
 *
 * Planning: validate the op list as given (errors name the user's op), bring
 * it to canonical order (permute moves past convert/resize/norm to just
 * before a trailing norm — exact, since those ops work channel by channel and
 * permute only moves values), then cut it greedily into tasks: at each op the
 * longest pattern the profile's device fuses, else the op alone if the device
 * can run it, else a CPU task of the ops the device cannot run.
 */
#include "engine-private.h"
#include "chan-private.h"
#include "m2i-device.h"
#include "device-model.h"

#include <base/m2i-error.h>
#include <base/m2i-parallel.h>
#include <string.h>

typedef struct {
  M2iTaskTarget target;
  guint n_ops;
  M2iOp ops[M2I_MAX_OPS];
  M2iImage in, out;           /* geometry; data set for intermediates */
  Fused *fused;
  ChanFused *chan;             /* pixel chains (chan-fused.c) */
  OpsExec *exec;
  guint64 bytes_read, bytes_written, cycles;
} Task;

struct M2iPlan {
  M2iOpList ops, canon;
  M2iProfile profile;
  gint n_threads;
  M2iImage in, out;
  guint n_tasks;
  Task tasks[M2I_MAX_OPS];
  guint8 *inter_buf[M2I_MAX_OPS];
  GMutex lock;
  guint64 sum_read, sum_written, sum_cycles;
  guint n_device, n_cpu;
};

void
m2i_plan_options_init (M2iPlanOptions *opts)
{
  opts->profile = M2I_PROFILE_DEFAULT;
  opts->n_threads = 0;
}

const char *
m2i_profile_to_string (M2iProfile p)
{
  return p == M2I_PROFILE_EXTENDED ? "extended" : p == M2I_PROFILE_DEFAULT ? "default" : NULL;
}

gboolean
m2i_profile_from_string (const char *s, M2iProfile *out)
{
  if (!g_strcmp0 (s, "default"))
    *out = M2I_PROFILE_DEFAULT;
  else if (!g_strcmp0 (s, "extended"))
    *out = M2I_PROFILE_EXTENDED;
  else
    return FALSE;
  return TRUE;
}

/* ---- canonical order ---------------------------------------------------- */

static void
canonicalize (const M2iOpList *in, M2iOpList *out)
{
  guint perm = in->n_ops;
  for (guint i = 0; i < in->n_ops; i++)
    if (in->ops[i].kind == M2I_OP_PERMUTE)
      perm = i;
  *out = *in;
  if (perm == in->n_ops)
    return;
  /* Without the permute: is the last op a norm? Then permute goes before it. */
  M2iOpList rest;
  m2i_op_list_init (&rest);
  for (guint i = 0; i < in->n_ops; i++)
    if (i != perm)
      rest.ops[rest.n_ops++] = in->ops[i];
  guint at = rest.n_ops;
  if (rest.n_ops > 0 && rest.ops[rest.n_ops - 1].kind == M2I_OP_NORM)
    at = rest.n_ops - 1;
  /* Never before csc: permute needs RGB data. */
  if (at == 0)
    at = 1;
  m2i_op_list_init (out);
  for (guint i = 0; i < rest.n_ops; i++) {
    if (i == at)
      out->ops[out->n_ops++] = in->ops[perm];
    out->ops[out->n_ops++] = rest.ops[i];
  }
  if (at >= rest.n_ops)
    out->ops[out->n_ops++] = in->ops[perm];
}

/* ---- profiles ------------------------------------------------------------ */

static gboolean
conv_ok (M2iProfile prof, const M2iOp *op)
{
  return op->kind == M2I_OP_CONVERT
      && (op->u.convert.to == M2I_DTYPE_F16 || prof == M2I_PROFILE_EXTENDED);
}

/* Length of the longest fused pattern starting at ops[i] (0 if none) on
 * data of format @at. */
static guint
pattern_len (M2iProfile prof, const M2iOp *ops, guint i, guint n, M2iFormat at)
{
  static const M2iOpKind patterns[][4] = {
    { M2I_OP_CSC, M2I_OP_CONVERT, M2I_OP_RESIZE, M2I_OP_PERMUTE },
    { M2I_OP_CSC, M2I_OP_RESIZE, M2I_OP_PERMUTE },
    { M2I_OP_CSC, M2I_OP_CONVERT, M2I_OP_PERMUTE },
    { M2I_OP_CSC, M2I_OP_RESIZE },
    { M2I_OP_CSC, M2I_OP_PERMUTE },
  };
  static const guint lens[] = { 4, 3, 3, 2, 2 };
  guint best = 0;
  for (guint p = 0; p < G_N_ELEMENTS (lens); p++) {
    guint len = lens[p];
    if (i + len > n)
      continue;
    gboolean ok = TRUE, has_conv = FALSE;
    for (guint j = 0; j < len && ok; j++) {
      const M2iOp *op = &ops[i + j];
      if (op->kind != patterns[p][j])
        ok = FALSE;
      else if (op->kind == M2I_OP_CONVERT) {
        ok = conv_ok (prof, op);
        has_conv = TRUE;
      }
    }
    if (!ok)
      continue;
    /* extended: norm fused after the planar fp patterns */
    if (prof == M2I_PROFILE_EXTENDED && has_conv && i + len < n
        && ops[i + len].kind == M2I_OP_NORM)
      len++;
    best = MAX (best, len);
  }
  /* extended: chains on u8 RGB, 4-byte or gray pixels fuse like the csc
   * patterns, headed by dropAlpha or gray instead of csc (chan-fused.c):
   * [dropAlpha | gray] [convert] [resize] [permute] [norm after a convert],
   * at least two ops (a single op is the op's own device task), never
   * ending in interleaved fp data (which the device does not write). */
  if (prof == M2I_PROFILE_EXTENDED && best == 0 && m2i_format_dtype (at) == M2I_DTYPE_U8
      && (!m2i_format_is_yuv (at) || ops[i].kind == M2I_OP_GRAY)) {
    static const M2iOpKind order[] = { M2I_OP_DROP_ALPHA, M2I_OP_CONVERT, M2I_OP_RESIZE,
      M2I_OP_PERMUTE, M2I_OP_NORM };
    guint len = 0, stage = 0;
    gboolean has_conv = FALSE, planar = m2i_format_layout (at) == M2I_LAYOUT_PLANAR;
    while (i + len < n) {
      const M2iOp *op = &ops[i + len];
      M2iOpKind k = op->kind == M2I_OP_GRAY ? M2I_OP_DROP_ALPHA : op->kind;
      while (stage < G_N_ELEMENTS (order) && order[stage] != k)
        stage++;
      if (stage == G_N_ELEMENTS (order) || (k == M2I_OP_DROP_ALPHA && len > 0)
          || (k == M2I_OP_CONVERT && !conv_ok (prof, op)) || (k == M2I_OP_NORM && !has_conv))
        break;
      has_conv |= k == M2I_OP_CONVERT;
      planar |= op->kind == M2I_OP_GRAY || op->kind == M2I_OP_PERMUTE;
      stage++;
      len++;
      if (len >= 2 && (planar || !has_conv))
        best = len;
    }
  }
  return best;
}

/* Whether the device runs op alone, given the format it reads. */
static gboolean
single_ok (M2iProfile prof, const M2iOp *op, M2iFormat in)
{
  M2iLayout l = m2i_format_layout (in);
  M2iDataType dt = m2i_format_dtype (in);
  gboolean fp_ok = dt == M2I_DTYPE_F16 || (dt == M2I_DTYPE_F32 && prof == M2I_PROFILE_EXTENDED);
  switch (op->kind) {
    case M2I_OP_CSC:
      return TRUE;
    case M2I_OP_CONVERT:       /* interleaved fp output: refused */
      return l == M2I_LAYOUT_PLANAR && conv_ok (prof, op);
    case M2I_OP_RESIZE:
      return dt == M2I_DTYPE_U8 || (l == M2I_LAYOUT_PLANAR && fp_ok);
    case M2I_OP_PERMUTE:
      return dt == M2I_DTYPE_U8;
    case M2I_OP_NORM:
      return l == M2I_LAYOUT_PLANAR && fp_ok;
    case M2I_OP_DROP_ALPHA:
    case M2I_OP_GRAY:            /* the extended block's channel stage */
      return prof == M2I_PROFILE_EXTENDED;
  }
  return FALSE;
}

/* ---- cost model ----------------------------------------------------------- */

/* The device's figures: device-model.h. */

static guint64
image_bytes (const M2iImage *img)
{
  return m2i_image_wrap_size (img->format, img->width, img->height, 0);
}

static void
task_cost (Task *t)
{
  guint64 compute = 0;
  guint64 ch = m2i_format_n_channels (t->out.format);
  t->bytes_written = image_bytes (&t->out);
  t->bytes_read = image_bytes (&t->in);
  gint w = t->in.width, h = t->in.height;
  gint src_rows = h, src_cols = w;
  if (t->fused) {
    m2i_fused_source_extent (t->fused, &src_rows, &src_cols);
    /* whole source rows are fetched: luma plus half a chroma row */
    t->bytes_read = (guint64) src_rows * (guint64) w * 3 / 2;
  }
  for (guint i = 0; i < t->n_ops; i++) {
    const M2iOp *op = &t->ops[i];
    switch (op->kind) {
      case M2I_OP_CSC:
        compute += (guint64) src_rows * src_cols / DEVICE_M2I_CSC_PIXELS_PER_CYCLE;
        break;
      case M2I_OP_RESIZE: {
        M2iResizePlan *rp = m2i_resize_plan_new (&op->u.resize, w, h, NULL);
        if (rp) {
          guint64 ow = op->u.resize.out_width, oh = op->u.resize.out_height;
          gint rows = t->fused ? src_rows : h;
          guint64 macs = (guint64) rows * ow * ch * rp->x.taps + ow * oh * ch * rp->y.taps;
          compute += macs / DEVICE_M2I_RESIZE_MACS_PER_CYCLE;
          m2i_resize_plan_free (rp);
        }
        w = op->u.resize.out_width;
        h = op->u.resize.out_height;
        break;
      }
      default:
        /* Inside a fused task convert, permute and norm are pipeline stages
         * (address generation, a multiplier on the way out): free. */
        if (!t->fused && !t->chan)
          compute += (guint64) w * h * ch / DEVICE_M2I_VALUES_PER_CYCLE;
        break;
    }
  }
  guint64 dma = (t->bytes_read + t->bytes_written + DEVICE_DMA_BYTES_PER_CYCLE - 1)
      / DEVICE_DMA_BYTES_PER_CYCLE;
  t->cycles = t->target == M2I_TASK_DEVICE
      ? DEVICE_M2I_TASK_SETUP_CYCLES + MAX (dma, compute) : 0;
}

/* ---- planning ------------------------------------------------------------- */

void
m2i_plan_free (M2iPlan *plan)
{
  if (!plan)
    return;
  m2i_device_cancel_plan (m2i_device_get_default (), plan);
  g_mutex_lock (&plan->lock);      /* wait for a run in progress */
  g_mutex_unlock (&plan->lock);
  for (guint i = 0; i < plan->n_tasks; i++) {
    m2i_fused_free (plan->tasks[i].fused);
    m2i_chan_fused_free (plan->tasks[i].chan);
    m2i_ops_exec_free (plan->tasks[i].exec);
    g_free (plan->inter_buf[i]);
  }
  g_mutex_clear (&plan->lock);
  g_free (plan);
}

static gboolean
prepare_task (M2iPlan *plan, Task *t, GError **error)
{
  if (m2i_fused_supported (&t->in, t->ops, t->n_ops, &t->out)) {
    t->fused = m2i_fused_new (&t->in, t->ops, t->n_ops, &t->out, plan->n_threads, error);
    if (!t->fused)
      return FALSE;
  } else if (m2i_chan_fused_supported (&t->in, t->ops, t->n_ops, &t->out)) {
    t->chan = m2i_chan_fused_new (&t->in, t->ops, t->n_ops, &t->out, plan->n_threads, error);
    if (!t->chan)
      return FALSE;
  } else {
    t->exec = m2i_ops_exec_new (&t->in, t->ops, t->n_ops, &t->out, TRUE, error);
    if (!t->exec)
      return FALSE;
  }
  task_cost (t);
  return TRUE;
}

M2iPlan *
m2i_plan_new (const M2iImage *in, const M2iOpList *ops, const M2iImage *out,
    const M2iPlanOptions *opts, GError **error)
{
  ChainShapes sh;
  if (!ops || !in || !out) {
    g_set_error (error, M2I_ERROR, M2I_ERROR_INVALID_ARGUMENT, "no input, output or op list");
    return NULL;
  }
  if (!m2i_chain_validate (in, ops->ops, ops->n_ops, out, &sh, error))
    return NULL;
  M2iPlanOptions o;
  if (opts)
    o = *opts;
  else
    m2i_plan_options_init (&o);
  if (o.profile != M2I_PROFILE_DEFAULT && o.profile != M2I_PROFILE_EXTENDED) {
    g_set_error (error, M2I_ERROR, M2I_ERROR_INVALID_ARGUMENT, "unknown profile %d",
        (int) o.profile);
    return NULL;
  }
  M2iPlan *plan = g_new0 (M2iPlan, 1);
  g_mutex_init (&plan->lock);
  plan->ops = *ops;
  plan->profile = o.profile;
  plan->n_threads = o.n_threads > 0 ? MIN (o.n_threads, 64) : m2i_parallel_n_cores ();
  plan->in = *in;
  plan->out = *out;
  for (int p = 0; p < M2I_MAX_PLANES; p++) {
    plan->in.data[p] = plan->out.data[p] = NULL;
    plan->in.size[p] = plan->out.size[p] = 0;
  }
  canonicalize (ops, &plan->canon);
  if (!m2i_chain_validate (in, plan->canon.ops, plan->canon.n_ops, out, &sh, error)) {
    m2i_plan_free (plan);
    return NULL;
  }

  const M2iOp *cops = plan->canon.ops;
  guint n = plan->canon.n_ops;
  guint i = 0;
  M2iImage cur = plan->in;
  while (i < n) {
    Task *t = &plan->tasks[plan->n_tasks];
    guint len = pattern_len (plan->profile, cops, i, n, cur.format);
    if (len == 0 && single_ok (plan->profile, &cops[i], cur.format))
      len = 1;
    if (len > 0) {
      t->target = M2I_TASK_DEVICE;
    } else {
      t->target = M2I_TASK_CPU;
      M2iFormat f = cur.format;
      len = 0;
      while (i + len < n && pattern_len (plan->profile, cops, i + len, n, f) == 0
          && !single_ok (plan->profile, &cops[i + len], f)) {
        f = sh.format[i + len];
        len++;
      }
    }
    t->n_ops = len;
    memcpy (t->ops, &cops[i], len * sizeof (M2iOp));
    t->in = cur;
    guint last = i + len - 1;
    if (last == n - 1) {
      t->out = plan->out;
    } else {
      gsize sz = m2i_image_wrap_size (sh.format[last], sh.width[last], sh.height[last], 0);
      plan->inter_buf[plan->n_tasks] = m2i_try_alloc0 (sz, "an intermediate image", error);
      if (!plan->inter_buf[plan->n_tasks]) {
        m2i_plan_free (plan);
        return NULL;
      }
      m2i_image_wrap (&t->out, sh.format[last], sh.width[last], sh.height[last],
          plan->inter_buf[plan->n_tasks], sz, 0, NULL);
    }
    plan->n_tasks++;
    if (!prepare_task (plan, t, error)) {
      m2i_plan_free (plan);
      return NULL;
    }
    plan->sum_read += t->bytes_read;
    plan->sum_written += t->bytes_written;
    plan->sum_cycles += t->cycles;
    if (t->target == M2I_TASK_DEVICE)
      plan->n_device++;
    else
      plan->n_cpu++;
    cur = t->out;
    i += len;
  }
  return plan;
}

guint
m2i_plan_n_tasks (const M2iPlan *plan)
{
  return plan->n_tasks;
}

void
m2i_plan_get_task (const M2iPlan *plan, guint i, M2iTaskInfo *info)
{
  g_return_if_fail (i < plan->n_tasks);
  const Task *t = &plan->tasks[i];
  info->target = t->target;
  info->n_ops = t->n_ops;
  info->ops = t->ops;
  info->in_format = t->in.format;
  info->out_format = t->out.format;
  info->in_width = t->in.width;
  info->in_height = t->in.height;
  info->out_width = t->out.width;
  info->out_height = t->out.height;
  info->fused_kernel = t->fused || t->chan;
  info->bytes_read = t->bytes_read;
  info->bytes_written = t->bytes_written;
  info->cycles = t->cycles;
}

M2iProfile
m2i_plan_get_profile (const M2iPlan *plan)
{
  return plan->profile;
}

const M2iOpList *
m2i_plan_get_ops (const M2iPlan *plan)
{
  return &plan->ops;
}

gchar *
m2i_plan_to_string (const M2iPlan *plan)
{
  GString *s = g_string_new (NULL);
  for (guint i = 0; i < plan->n_tasks; i++) {
    const Task *t = &plan->tasks[i];
    M2iOpList l;
    m2i_op_list_init (&l);
    memcpy (l.ops, t->ops, t->n_ops * sizeof (M2iOp));
    l.n_ops = t->n_ops;
    gchar *d = m2i_op_list_to_string (&l);
    g_string_append_printf (s, "%stask %u/%u %s %s: %s  %s %dx%d -> %s %dx%d  [%"
        G_GUINT64_FORMAT " B in, %" G_GUINT64_FORMAT " B out, %" G_GUINT64_FORMAT " cycles]",
        i ? "\n" : "", i + 1, plan->n_tasks,
        t->target == M2I_TASK_DEVICE ? "DEVICE" : "CPU",
        t->fused || t->chan ? "fused" : "op-by-op", d,
        m2i_format_to_string (t->in.format), t->in.width, t->in.height,
        m2i_format_to_string (t->out.format), t->out.width, t->out.height,
        t->bytes_read, t->bytes_written, t->cycles);
    g_free (d);
  }
  return g_string_free (s, FALSE);
}

/* ---- running ------------------------------------------------------------- */

gboolean
m2i_plan_check_images (M2iPlan *plan, const M2iImage *in, const M2iImage *out,
    GError **error)
{
  if (!in || !out) {
    g_set_error (error, M2I_ERROR, M2I_ERROR_INVALID_ARGUMENT, "no input or output image");
    return FALSE;
  }
  if (!m2i_image_same_geometry (in, &plan->in)
      || !m2i_image_same_geometry (out, &plan->out)) {
    g_set_error (error, M2I_ERROR, M2I_ERROR_INVALID_ARGUMENT,
        "the images (%s %dx%d -> %s %dx%d) differ in format, size or stride from "
        "the ones the plan was made for (%s %dx%d -> %s %dx%d); make a new plan",
        m2i_format_to_string (in->format), in->width, in->height,
        m2i_format_to_string (out->format), out->width, out->height,
        m2i_format_to_string (plan->in.format), plan->in.width, plan->in.height,
        m2i_format_to_string (plan->out.format), plan->out.width, plan->out.height);
    return FALSE;
  }
  return m2i_image_check (in, "input", TRUE, error)
      && m2i_image_check (out, "output", TRUE, error);
}

GMutex *
m2i_plan_lock (M2iPlan *plan)
{
  return &plan->lock;
}

void
m2i_plan_execute (M2iPlan *plan, const M2iImage *in, M2iImage *out)
{
  const M2iImage *src = in;
  for (guint i = 0; i < plan->n_tasks; i++) {
    Task *t = &plan->tasks[i];
    M2iImage *dst = i + 1 == plan->n_tasks ? out : &t->out;
    if (t->fused)
      m2i_fused_run (t->fused, src, dst);
    else if (t->chan)
      m2i_chan_fused_run (t->chan, src, dst);
    else
      m2i_ops_exec_run (t->exec, src, dst);
    src = dst;
  }
}

void
m2i_plan_account (M2iPlan *plan)
{
  m2i_device_account (plan->n_device, plan->n_cpu, plan->sum_read, plan->sum_written,
      plan->sum_cycles, FALSE);
}

gboolean
m2i_plan_run (M2iPlan *plan, const M2iImage *in, M2iImage *out, GError **error)
{
  if (!m2i_plan_check_images (plan, in, out, error)) {
    m2i_device_account (0, 0, 0, 0, 0, TRUE);
    return FALSE;
  }
  g_mutex_lock (&plan->lock);
  m2i_plan_execute (plan, in, out);
  g_mutex_unlock (&plan->lock);
  m2i_plan_account (plan);
  return TRUE;
}
