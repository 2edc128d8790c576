/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* gstm2itensors.h — other/tensors buffers (NNStreamer's static layout: one
 * memory per tensor) into and out of an inference session (private to the
 * plugin). */
#pragma once

#include <gst/gst.h>
#include <m2i-core/infer/m2i-infer.h>
#include "gstm2iinfercaps.h"

G_BEGIN_DECLS

/* Copies the @n tensors of @buf — one memory per tensor, or all of them one
 * after another — of caps types @types and @bytes bytes each into
 * @session's inputs (fp16 widened for f32 inputs). FALSE with @error when
 * @buf cannot be mapped or holds less than the caps describe. */
gboolean gst_m2i_tensors_to_session (GstBuffer *buf, guint n, const M2iElementType *types,
    const gsize *bytes, M2iInferSession *session, GError **error);

/* A buffer of @session's last outputs, one memory each, from *@pool (made
 * for @caps on the first call, then reused: no allocation in steady state;
 * the caller deactivates and unrefs it). GST_FLOW_ERROR with @error when
 * the pool cannot be made, GST_FLOW_FLUSHING when it is flushing. */
GstFlowReturn gst_m2i_tensors_from_session (M2iInferSession *session, GstCaps *caps,
    GstBufferPool **pool, GstBuffer **out, GError **error);

G_END_DECLS
