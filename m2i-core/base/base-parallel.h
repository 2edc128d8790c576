/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* base-parallel.h — what the worker pool needs to know from the rest of
 * m2i-core (private, not installed; see m2i-parallel.c). */
#pragma once

#include <glib.h>

G_BEGIN_DECLS

/* The calling thread starts / ends a device job (an inference of its own):
 * while as many threads as cores do, m2i_parallel_for() runs loops on the
 * calling thread instead of slicing them (frames side by side, not the
 * slices of one). */
void base_parallel_stream_enter (void);
void base_parallel_stream_leave (void);

G_END_DECLS
