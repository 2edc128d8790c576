/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* engine-private.h — internals of the M2I engine (not installed).
 *
 * Op kernels: the plain-C one-op-at-a-time implementations shared by the
 * reference path and by tasks that run op by op. Fused kernels: one pass from
 * NV12/I420 to the task's output, over the csc kernels of csc-private.h.
 */
#pragma once

#include <m2i/m2i-format.h>
#include <m2i/m2i-ops.h>
#include <m2i/m2i-plan.h>
#include <m2i/resize-private.h>
#include <m2i/csc-private.h>

G_BEGIN_DECLS

/* Zeroed memory for a whole image or intermediate; NULL with
 * M2I_ERROR_FAILED ("cannot allocate ...") instead of aborting when a huge
 * request cannot be met. Free with g_free. */
gpointer m2i_try_alloc0 (gsize size, const char *what, GError **error);

/* ---- op-by-op kernels (reference) --------------------------------------- */

/* What each op of a chain produces: the format and size after op i. */
typedef struct {
  M2iFormat format[M2I_MAX_OPS];
  gint width[M2I_MAX_OPS], height[M2I_MAX_OPS];
} ChainShapes;

/* Checks @ops applied to @in and, when @out is non-NULL, that the result is
 * @out's format and size. Fills @shapes. FALSE with a user-facing error. */
gboolean m2i_chain_validate (const M2iImage *in, const M2iOp *ops, guint n_ops,
    const M2iImage *out, ChainShapes *shapes, GError **error);

typedef struct OpsExec OpsExec;

/* Prepares running @ops one at a time from @in's geometry to @out's:
 * allocates the intermediate images and resize tables. @fast: convert,
 * permute and norm run a row at a time with bulk conversions (norm within one
 * fp16 ulp of the reference formula) instead of the per-sample reference. */
OpsExec *m2i_ops_exec_new (const M2iImage *in, const M2iOp *ops, guint n_ops,
    const M2iImage *out, gboolean fast, GError **error);
void m2i_ops_exec_run (OpsExec *ex, const M2iImage *in, M2iImage *out);
void m2i_ops_exec_free (OpsExec *ex);

/* ---- fused kernels ------------------------------------------------------ */

typedef struct Fused Fused;

/* Whether the one-pass kernel can run @ops (csc first, then optionally
 * convert, resize, permute, norm in the order docs/m2i-engine.md lists). */
gboolean m2i_fused_supported (const M2iImage *in, const M2iOp *ops, guint n_ops,
    const M2iImage *out);
Fused *m2i_fused_new (const M2iImage *in, const M2iOp *ops, guint n_ops,
    const M2iImage *out, gint n_threads, GError **error);
void m2i_fused_run (Fused *f, const M2iImage *in, M2iImage *out);
void m2i_fused_free (Fused *f);
/* Source rows and columns the fused kernel reads (for the cost model). */
void m2i_fused_source_extent (const Fused *f, gint *rows, gint *cols);

/* Norm in the fast paths: (x - B) * (A / C) + D in fp32, within one fp16 ulp
 * of the reference formula. */
static inline void
m2i_norm_fast_coeffs (const M2iNormParams *n, int c, float *sub, float *mul, float *add)
{
  *sub = m2i_f16_to_f32 (n->b[c]);
  *mul = m2i_f16_to_f32 (n->a[c]) / m2i_f16_to_f32 (n->c[c]);
  *add = m2i_f16_to_f32 (n->d[c]);
}

/* ---- device accounting (m2i-device.c) ----------------------------------- */

void m2i_device_account (guint n_device, guint n_cpu, guint64 bytes_read,
    guint64 bytes_written, guint64 cycles, gboolean failed);

/* Runs the plan's tasks (plan lock held by the caller). */
void m2i_plan_execute (M2iPlan *plan, const M2iImage *in, M2iImage *out);
/* Checks run-time images against the plan's geometry. */
gboolean m2i_plan_check_images (M2iPlan *plan, const M2iImage *in,
    const M2iImage *out, GError **error);
GMutex *m2i_plan_lock (M2iPlan *plan);
void m2i_plan_account (M2iPlan *plan);

G_END_DECLS
