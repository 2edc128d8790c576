/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* m2i-plan.h — hardware profiles and the planner.
 *
 * A plan turns (input image geometry, op list, output image geometry) into
 * ordered tasks, each run on the M2I device or on the CPU, with every kernel
 * choice, filter table, intermediate buffer and per-thread scratch prepared.
 * Plan once per caps; run per frame with new data pointers (m2i_plan_run, or
 * m2i_plan_submit in m2i-device.h). Running a plan allocates nothing.
 */
#pragma once

#include <glib.h>
#include <m2i-core/base/m2i-export.h>
#include <m2i-core/m2i/m2i-format.h>
#include <m2i-core/m2i/m2i-ops.h>

G_BEGIN_DECLS

typedef enum {
  /* The seed's M2I block: fuses exactly csc->convertU8F16->resize->permute,
   * csc->resize->permute, csc->resize, csc->permute, csc->convertU8F16->permute;
   * no interleaved fp output, no fp32; norm only on planar fp16, never fused. */
  M2I_PROFILE_DEFAULT,
  /* The default block plus: norm fused after permute in the fp patterns,
   * convertU8F32 wherever convertU8F16 is allowed (planar fp32 output), norm
   * and resize on planar fp32. See docs/m2i-engine.md. */
  M2I_PROFILE_EXTENDED,
} M2iProfile;

typedef enum {
  M2I_TASK_DEVICE,
  M2I_TASK_CPU,
} M2iTaskTarget;

typedef struct {
  M2iProfile profile;
  gint n_threads;          /* row slices per task; <= 0: one per core */
} M2iPlanOptions;

typedef struct M2iPlan M2iPlan;

/* Describes one task of a plan (all fields owned by the plan). */
typedef struct {
  M2iTaskTarget target;
  guint n_ops;
  const M2iOp *ops;        /* the task's ops, in the order they run */
  M2iFormat in_format, out_format;
  gint in_width, in_height, out_width, out_height;
  gboolean fused_kernel;   /* one pass (TRUE) or op by op on full images */
  guint64 bytes_read, bytes_written;   /* per run, from the cost model */
  guint64 cycles;                      /* simulated device cycles per run */
} M2iTaskInfo;

/* Fills @opts with the default profile and one slice per core. */
M2I_API void m2i_plan_options_init (M2iPlanOptions *opts);

/* "default" / "extended"; static string. */
M2I_API const char *m2i_profile_to_string (M2iProfile p);
/* Parses "default" or "extended"; FALSE (and *out untouched) otherwise. */
M2I_API gboolean m2i_profile_from_string (const char *s, M2iProfile *out);

/*
 * Plans @ops from @in to @out. Only the formats, sizes and strides of @in and
 * @out are used (data pointers may be NULL); every run must pass images with
 * the same geometry. @opts may be NULL (defaults). Returns a new plan, or NULL
 * with @error set (M2I_ERROR_INVALID_ARGUMENT or M2I_ERROR_UNSUPPORTED) when
 * the request is impossible: the message names the reason (odd NV12/I420
 * size, zero size, stride too small, an op in the wrong place such as resize
 * before csc, norm on u8 data, permute twice, an output format that does not
 * match the chain, ...). Free with m2i_plan_free().
 */
M2I_API M2iPlan *m2i_plan_new (const M2iImage *in, const M2iOpList *ops,
    const M2iImage *out, const M2iPlanOptions *opts, GError **error);

/* Frees @plan (NULL is ignored): cancels its queued device runs (their
 * callbacks see M2I_ERROR_CANCELLED) and waits for one in progress first. The
 * caller must not be running it synchronously on another thread. */
M2I_API void m2i_plan_free (M2iPlan *plan);

/* Number of tasks (>= 1) and their descriptions (@i < n_tasks). */
M2I_API guint m2i_plan_n_tasks (const M2iPlan *plan);
M2I_API void m2i_plan_get_task (const M2iPlan *plan, guint i, M2iTaskInfo *info);
M2I_API M2iProfile m2i_plan_get_profile (const M2iPlan *plan);
/* The op list as given to m2i_plan_new (owned by the plan). */
M2I_API const M2iOpList *m2i_plan_get_ops (const M2iPlan *plan);

/* One line per task, e.g.
 * "task 1/1 DEVICE fused: csc(RGB) -> resize(...) -> permute  SP_NV12_8 1920x1080 -> PL_RGB24 224x224"
 * joined with '\n' (no trailing newline). Free with g_free. */
M2I_API gchar *m2i_plan_to_string (const M2iPlan *plan);

/*
 * Runs the plan on one frame, synchronously, on the calling thread (slices on
 * the worker pool); the work is accounted to the default device's counters.
 * @in and @out must have the plan's geometry, non-NULL data and big enough
 * sizes; otherwise returns FALSE with @error and writes nothing. Runs of one
 * plan are serialised (the plan owns its scratch); different plans run
 * concurrently. Allocates nothing.
 */
M2I_API gboolean m2i_plan_run (M2iPlan *plan, const M2iImage *in, M2iImage *out,
    GError **error);

/*
 * Runs @n plans, plan i on @in[i] -> @out[i] (each image with its plan's
 * geometry, as for m2i_plan_run()), as one submission to the device: the
 * regions of one frame, each cropped, converted and resized by its own
 * plan (plans depend on the input size, so regions of different sizes need
 * different plans). The plans run concurrently on the worker pool, one
 * plan per slice (plans made with n_threads 1 suit this best; a plan with
 * more slices runs them on the thread that runs it), and count as one run
 * of all their tasks in the device's counters. A plan may appear more than
 * once (its runs are then serialised). Synchronous; allocates nothing.
 * Returns FALSE with @error, having run nothing, when a plan is NULL or an
 * image does not fit its plan (the message names the plan's index); @n 0
 * does nothing and returns TRUE.
 */
M2I_API gboolean m2i_plan_run_batch (M2iPlan *const *plans, const M2iImage *in, M2iImage *out,
    guint n, GError **error);

/*
 * The reference path: runs @ops on @in into @out one op at a time, on full
 * intermediate images, in plain C written for clarity (no plan, no device,
 * allocates its intermediates). Validates like m2i_plan_new() and returns
 * FALSE with @error on an impossible request. Used by tests to check the
 * fused path and by tools to compare.
 */
M2I_API gboolean m2i_reference_run (const M2iImage *in, const M2iOpList *ops,
    M2iImage *out, GError **error);

G_END_DECLS
