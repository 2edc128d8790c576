/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* split-cost.c — the cost model the partitioner weighs device islands with
 * (docs/split.md, "Cost"). Times are ns; the device's cycles count at its
 * nominal 1 GHz, so one cycle is one ns.
 *
 * The CPU side models the target's application cores (an edge SoC), not
 * the machine the tests run on: the point is to decide where a layer
 * belongs on the product, and the simulated device's figures are for that
 * product too.
 */
#include "split-private.h"
#include <base/m2i-align.h>
#include <m2i/device-model.h>

#include <math.h>
#include <string.h>

/* the host CPU */
#define CPU_MACS_PER_NS 4.0       /* fp32 multiply-adds (two cores, 4-wide FMA at ~1 GHz) */
#define CPU_ELEMS_PER_NS 1.0      /* elements read + written by other layers */
#define CPU_LAYER_NS 500          /* per layer: dispatch and waking the threads */
#define HOST_CONVERT_ELEMS_PER_NS 1.0   /* the host converts type and layout */
/* the device (m2i/device-model.h); its cycles are counted as ns */
G_STATIC_ASSERT (DEVICE_CYCLES_PER_NS == 1);
#define DMA_BYTES_PER_NS DEVICE_DMA_BYTES_PER_CYCLE
#define DEVICE_SETUP_NS DEVICE_NPU_LAYER_SETUP_CYCLES

static const M2iTensor *
value (const SplitAnalysis *a, gint node, gint port)
{
  return split_analysis_value (a, node, port);
}

static gint64
numel (const M2iTensor *t)
{
  return MAX (m2i_shape_numel (&t->shape), 0);
}

guint64
split_cost_cpu_node (const SplitAnalysis *a, gint node)
{
  const M2iIrNode *n = m2i_ir_model_get_node (a->model, node);
  const char *type = m2i_ir_node_get_type (n);
  double ns = CPU_LAYER_NS;
  gint64 out = numel (value (a, node, 0));
  if (!strcmp (type, "Convolution") || !strcmp (type, "GroupConvolution")) {
    const M2iTensor *w;
    if (split_analysis_const_input (a, node, 1, &w)) {
      /* MACs per output: weights per output channel */
      gint64 per = numel (w) / MAX (value (a, node, 0)->shape.dims[1], 1);
      ns += (double) out * per / CPU_MACS_PER_NS;
    }
  } else if (!strcmp (type, "MatMul")) {
    M2iIrNode *s;
    gint port;
    if (m2i_ir_node_get_input_source (n, 0, &s, &port)) {
      const M2iTensor *x = value (a, m2i_ir_node_get_index (s), port);
      gint64 k = x->shape.rank ? x->shape.dims[x->shape.rank - 1] : 1;
      ns += (double) out * k / CPU_MACS_PER_NS;
    }
  } else {
    gint64 elems = 0;
    for (gint p = 0; p < m2i_ir_node_get_n_outputs (n); p++)
      elems += numel (value (a, node, p));
    for (gint i = 0; i < m2i_ir_node_get_n_inputs (n); i++) {
      M2iIrNode *s;
      gint port;
      if (m2i_ir_node_get_input_source (n, i, &s, &port)) {
        const M2iTensor *x = value (a, m2i_ir_node_get_index (s), port);
        if (!x->data)
          elems += numel (x);
      }
    }
    ns += elems / CPU_ELEMS_PER_NS;
  }
  return (guint64) ns;
}

/* The engine's own cost model for a convolution of this geometry: the
 * layer is compiled with zero weights just to ask it. */
static guint64
npu_conv_cycles (const M2iNpuConvGeometry *g, gint batch, gboolean int8)
{
  gint ig = g->in_channels / g->groups;
  gsize count = m2i_npu_weights_blocked_count (g->out_channels, ig, g->kernel_h, g->kernel_w);
  gpointer w = g_malloc0 (count * (int8 ? 1 : 2));
  M2iNpuConv *conv;
  if (int8) {
    gint8 shift = 0;
    M2iNpuRequant rq = { M2I_NPU_REQUANT_SHIFT, 1, NULL, &shift, M2I_MLI_ROUND_HALF_UP, 0, -128, 127 };
    conv = m2i_npu_conv_new_int8 (g, w, NULL, 0, &rq, NULL);
  } else {
    conv = m2i_npu_conv_new_fp16 (g, w, NULL, -INFINITY, INFINITY, NULL);
  }
  g_free (w);
  if (!conv)
    return G_MAXUINT32;
  M2iNpuCost c;
  m2i_npu_conv_get_cost (conv, batch, &c);
  m2i_npu_conv_free (conv);
  return c.cycles;
}

/* Bytes of a blocked tensor (channels padded to 8). */
static guint64
blocked_bytes (const gint d[4], gboolean int8)
{
  return (guint64) d[0] * m2i_align_up (d[1], 8) * d[2] * d[3] * (int8 ? 1 : 2);
}

/* Pooling and element-wise layers: the MAC array's lanes (64 int8 / 32
 * fp16 values per cycle) against the DMA, plus the setup. */
static guint64
npu_stream_cycles (guint64 lane_ops, guint64 bytes, gboolean int8)
{
  guint64 compute = lane_ops / (int8 ? DEVICE_NPU_INT8_LANES : DEVICE_NPU_FP16_LANES);
  guint64 dma = bytes / DMA_BYTES_PER_NS;
  return MAX (compute, dma) + DEVICE_SETUP_NS;
}

guint64
split_cost_npu_pool (const M2iNpuPoolParams *p, const gint in[4], gint oh, gint ow, gboolean int8)
{
  gint out[4] = { in[0], in[1], oh, ow };
  guint64 taps = blocked_bytes (out, TRUE) * p->kernel_h * p->kernel_w;
  return npu_stream_cycles (taps, blocked_bytes (in, int8) + blocked_bytes (out, int8), int8);
}

guint64
split_cost_npu_add (const gint out[4], gboolean int8)
{
  return npu_stream_cycles (blocked_bytes (out, TRUE), 3 * blocked_bytes (out, int8), int8);
}

guint64
split_cost_npu_prelu (const gint out[4], gboolean int8)
{
  return npu_stream_cycles (blocked_bytes (out, TRUE), 2 * blocked_bytes (out, int8), int8);
}

guint64
split_cost_npu_concat (const gint out[4], gboolean int8)
{
  return 2 * blocked_bytes (out, int8) / DMA_BYTES_PER_NS + DEVICE_SETUP_NS;
}

guint64
split_cost_device_unit (const SplitAnalysis *a, gint ui, M2iSplitEngine engine,
    M2iProfile profile)
{
  const SplitUnit *u = g_ptr_array_index (a->units, ui);
  gboolean int8 = engine == M2I_SPLIT_ENGINE_NPU_INT8;
  gint node = g_array_index (u->nodes, gint, 0);
  if (engine == M2I_SPLIT_ENGINE_M2I) {
    const SplitHeadInfo *h = a->head;
    M2iImage in, out;
    M2iPlanOptions opts;
    m2i_plan_options_init (&opts);
    opts.profile = profile;
    opts.n_threads = 1;
    if (!h || !m2i_image_init (&in, h->in_format, h->in_width, h->in_height) ||
        !m2i_image_init (&out, h->out_format, h->out_width, h->out_height))
      return G_MAXUINT32;
    M2iPlan *plan = m2i_plan_new (&in, &h->ops, &out, &opts, NULL);
    if (!plan)
      return G_MAXUINT32;
    guint64 cycles = 0;
    for (guint t = 0; t < m2i_plan_n_tasks (plan); t++) {
      M2iTaskInfo ti;
      m2i_plan_get_task (plan, t, &ti);
      cycles += ti.cycles;
    }
    m2i_plan_free (plan);
    return cycles;
  }
  if (u->kind == SPLIT_UNIT_CONV && u->conv) {
    const SplitConvDesc *d = u->conv;
    gint in[4];
    split_analysis_phys (a, d->in_node, d->in_port, in);
    guint64 cycles = npu_conv_cycles (&d->g, in[0], int8);
    gint oh, ow;
    m2i_npu_conv_geometry_check (&d->g, &oh, &ow, NULL);
    gint cur[4] = { in[0], d->g.out_channels, oh, ow };
    for (gint k = 0; k < d->n_pools; k++) {
      gint ph, pw;
      m2i_npu_pool_output_size (&d->pools[k], cur[2], cur[3], &ph, &pw, NULL);
      cycles += split_cost_npu_pool (&d->pools[k], cur, ph, pw, int8);
      cur[2] = ph;
      cur[3] = pw;
    }
    return cycles;
  }
  const char *type = m2i_ir_node_get_type (m2i_ir_model_get_node (a->model, node));
  gint in[4], out[4];
  M2iIrNode *s;
  gint port;
  if (!m2i_ir_node_get_input_source (m2i_ir_model_get_node (a->model, node), 0, &s, &port) ||
      !split_analysis_phys (a, m2i_ir_node_get_index (s), port, in) ||
      !split_analysis_phys (a, node, 0, out))
    return 0;
  if (!strcmp (type, "MaxPool") || !strcmp (type, "AvgPool") || !strcmp (type, "ReduceMean")) {
    M2iNpuPoolParams p;
    const char *why;
    if (!split_pool_params (a, node, &p, &why))
      return G_MAXUINT32;
    return split_cost_npu_pool (&p, in, out[2], out[3], int8);
  }
  if (!strcmp (type, "Add"))
    return split_cost_npu_add (out, int8);
  if (!strcmp (type, "PReLU"))
    return split_cost_npu_prelu (out, int8);
  if (!strcmp (type, "Concat"))
    return split_cost_npu_concat (out, int8);
  return 0;                     /* views: Reshape, a FakeQuantize already on its grid */
}

guint64
split_cost_boundary (gint64 n, gsize elem_bytes, M2iSplitEngine from, M2iSplitEngine to)
{
  gboolean host_from = from == M2I_SPLIT_ENGINE_CPU, host_to = to == M2I_SPLIT_ENGINE_CPU;
  if (host_from && host_to)
    return 0;
  if (!host_from && !host_to)   /* between two engines of the device: a DMA relayout */
    return (guint64) n * 2 / DMA_BYTES_PER_NS + DEVICE_SETUP_NS;
  double ns = DEVICE_HOST_SYNC_NS + (double) n * elem_bytes / DMA_BYTES_PER_NS;
  /* the M2I block reads frames as they are; the compute engine's blocked
   * layout and types are made by the host */
  if (to != M2I_SPLIT_ENGINE_M2I)
    ns += n / HOST_CONVERT_ELEMS_PER_NS;
  return (guint64) ns;
}
