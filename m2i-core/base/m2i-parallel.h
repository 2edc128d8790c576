/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* m2i-parallel.h — the process-wide worker pool that splits loops over cores.
 *
 * One pool serves the M2I engine's row slices and the IR runtime's kernels,
 * so two pipelines in one process share the cores instead of each spawning
 * its own threads. Calls never allocate after the pool has grown to the
 * largest thread count asked for (the call that grows it returns only once
 * the new workers have started, so their start-up allocations are over).
 */
#pragma once

#include <glib.h>
#include <m2i-core/base/m2i-export.h>

G_BEGIN_DECLS

/* Work on the half-open range [begin, end). @slice is the index of the slice
 * (0 .. n_slices-1), handy for per-thread scratch buffers. */
typedef void (*M2iParallelFunc) (gint begin, gint end, gint slice, gpointer user_data);

/* Returns the number of online CPUs (at least 1). */
M2I_API gint m2i_parallel_n_cores (void);

/*
 * Runs @func over [0, @n) cut into at most @n_slices contiguous slices of
 * nearly equal size (each at least @min_grain items when possible). The
 * caller runs one slice itself and waits for the rest; returns when all are
 * done. @n_slices <= 0 means one per core. A call made from inside a pool
 * worker runs its slices on the calling thread (no deadlock, no oversubscribe).
 * Thread-safe: any number of threads may call it at once.
 */
M2I_API void m2i_parallel_for (gint n, gint n_slices, gint min_grain,
    M2iParallelFunc func, gpointer user_data);

G_END_DECLS
