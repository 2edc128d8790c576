/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* m2i-device.h — the simulated M2I device shared by the whole process.
 *
 * One device object serves every element and pipeline: a FIFO submission
 * queue, engine threads that run what is queued — plan runs, and jobs such
 * as a whole inference request (m2i-infer-queue.h) — completion fences (wait
 * with a timeout, or a callback), cancellation of work still queued, and
 * counters of what ran where, how long the engines were busy and how deep
 * the queue got, for tests, statistics and benchmarks. The device is
 * thread-safe; it lives until the process ends.
 */
#pragma once

#include <glib.h>
#include <m2i-core/base/m2i-export.h>
#include <m2i-core/m2i/m2i-plan.h>

G_BEGIN_DECLS

typedef struct M2iDevice M2iDevice;
typedef struct M2iFence M2iFence;

/* Called once when a submitted run finished, failed or was cancelled.
 * @error is NULL on success (owned by the fence; copy it to keep it). Runs on
 * an engine thread, or on the thread that cancelled the run. Must not block
 * for long, wait on fences or free the run's plan (that waits for the run
 * to end); may submit more work and may unref @fence's other references. */
typedef void (*M2iFenceFunc) (M2iFence *fence, const GError *error, gpointer user_data);

/* The simulated device's nominal clock: M2iDeviceCounters.cycles divided
 * by it is the device's busy time in seconds. */
#define M2I_DEVICE_CLOCK_HZ G_GUINT64_CONSTANT (1000000000)

typedef struct {
  guint64 runs;            /* plan runs completed (sync and async) */
  guint64 tasks_total;     /* tasks executed */
  guint64 tasks_device;    /*   of which on the M2I device */
  guint64 tasks_cpu;       /*   of which on the CPU */
  guint64 bytes_read;      /* by all tasks, per the cost model */
  guint64 bytes_written;
  guint64 cycles;          /* simulated device cycles (device tasks only) */
  guint64 cancelled;       /* submitted runs and jobs cancelled before they ran */
  guint64 failed;          /* runs and jobs that returned an error */
  guint64 jobs;            /* jobs completed (m2i_device_submit_job) */
  guint64 busy_ns;         /* time engine threads spent running runs and jobs, summed */
  guint queue_depth;       /* runs and jobs submitted and not started, now */
  guint max_queue_depth;   /* the most that waited at once (since the last reset) */
} M2iDeviceCounters;

/* The process-wide device (created on first use, never freed). */
M2I_API M2iDevice *m2i_device_get_default (void);

/* Number of engine threads (from env M2I_DEVICE_ENGINES, 1 to 16; default:
 * one per CPU core, so that jobs of several pipelines run side by side). */
M2I_API guint m2i_device_n_engines (M2iDevice *dev);

/* Copies the counters (a consistent snapshot) into @out. */
M2I_API void m2i_device_get_counters (M2iDevice *dev, M2iDeviceCounters *out);

/* Zeroes the counters (tests, benchmarks); queue_depth keeps what waits now. */
M2I_API void m2i_device_reset_counters (M2iDevice *dev);

/* Where accounted work ran: on the device, or on the CPU in its place. */
typedef enum {
  M2I_DEVICE_TARGET_DEVICE = 0,
  M2I_DEVICE_TARGET_CPU,
} M2iDeviceTarget;

/*
 * Adds work that ran outside a plan (for example a compute-engine piece of
 * split execution) to the counters as one completed run of @n_tasks tasks
 * on @target, moving @bytes_read and @bytes_written and taking @cycles
 * simulated device cycles (counted for M2I_DEVICE_TARGET_DEVICE only), as
 * the caller's cost model has them. @dev NULL means the default device.
 * Thread-safe; never fails. Does nothing for an unknown @target.
 */
M2I_API void m2i_device_account_work (M2iDevice *dev, M2iDeviceTarget target, guint n_tasks,
    guint64 bytes_read, guint64 bytes_written, guint64 cycles);

/*
 * Queues one run of @plan on @in -> @out (images copied by value; the pixel
 * buffers stay the caller's and must stay valid until the fence completes).
 * Geometry is checked now: on a mismatch returns NULL with @error and queues
 * nothing. Otherwise returns a fence holding one reference for the caller
 * (m2i_fence_unref). @func (may be NULL) is called once on completion. Runs
 * of one plan execute in submission order. Fences are recycled by the
 * device, so steady-state submission allocates nothing.
 */
M2I_API M2iFence *m2i_plan_submit (M2iPlan *plan, const M2iImage *in, M2iImage *out,
    M2iFenceFunc func, gpointer user_data, GError **error);

/* A job for the device: runs on an engine thread; returns FALSE with
 * @error (which the fence then carries) when it failed. */
typedef gboolean (*M2iDeviceJobFunc) (gpointer data, GError **error);

/*
 * Queues @job (@data for it) on @dev (NULL: the default device) behind what
 * is already queued, and returns a fence holding one reference for the
 * caller (m2i_fence_unref). @func (may be NULL) is called once when the job
 * returned (with its error) or was cancelled before it started. Jobs have
 * no order among themselves beyond the queue's: with several engines, two
 * jobs may run at once and finish in any order. Allocates nothing in steady
 * state (fences are recycled). Never fails.
 */
M2I_API M2iFence *m2i_device_submit_job (M2iDevice *dev, M2iDeviceJobFunc job, gpointer data,
    M2iFenceFunc func, gpointer user_data);

/* Waits until the run completed or @timeout_us (< 0: forever) passed.
 * Returns TRUE when it completed successfully; FALSE with M2I_ERROR_FAILED
 * ("timed out") on timeout, or with the run's error (M2I_ERROR_CANCELLED for a
 * cancelled run). */
M2I_API gboolean m2i_fence_wait (M2iFence *fence, gint64 timeout_us, GError **error);

/* TRUE once the run completed, failed or was cancelled. */
M2I_API gboolean m2i_fence_is_done (M2iFence *fence);

/* Cancels the run if it is still queued: it will not run, its callback is
 * called with M2I_ERROR_CANCELLED on this thread, and TRUE is returned.
 * Returns FALSE if it already started or finished. */
M2I_API gboolean m2i_fence_cancel (M2iFence *fence);

/* Cancels every queued run of @plan (all plans, and every job, if NULL),
 * calling their callbacks with M2I_ERROR_CANCELLED on this thread, then
 * waits until no engine runs @plan (anything, if NULL); returns how many
 * were cancelled. m2i_plan_free() calls it. */
M2I_API guint m2i_device_cancel_plan (M2iDevice *dev, M2iPlan *plan);

/* Adds a reference to @fence; returns it. */
M2I_API M2iFence *m2i_fence_ref (M2iFence *fence);
/* Drops a reference; the last one returns the fence to the device's free
 * list (do not use it afterwards). NULL is ignored. */
M2I_API void m2i_fence_unref (M2iFence *fence);

G_END_DECLS
