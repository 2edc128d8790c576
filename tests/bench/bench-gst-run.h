/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* bench-gst-run.h — one timed run of a pipeline fed by appsrc, shared by the
 * element benchmarks (bench-gst, bench-infer).
 *
 * The pipeline is "appsrc name=src ... ! <chain> ! fakesink name=sink
 * sync=false signal-handoffs=true". Pre-made frames are pushed wrapped,
 * without copies, all at once before PLAYING; the rate is measured between
 * the first and the last buffer reaching the sink, so start-up, planning and
 * pool allocation are not counted. CPU time (every thread, bench-cpu.h) is
 * read at the first and the last buffer only: reading it costs microseconds.
 */
#pragma once

#include "bench-cpu.h"
#include <gst/app/gstappsrc.h>
#include <gst/gst.h>
#include <stdio.h>
#include <test-support.h>

/* @n NV12 frames of @w x @h one after another (g_free), with a gradient,
 * moving bars and noise, so that no frame is trivially uniform; the size
 * of one in *@frame_size. */
static inline guint8 *
bench_nv12_frames (gint w, gint h, guint n, gsize *frame_size)
{
  gsize ysz = (gsize) w * h, sz = ysz * 3 / 2;
  guint8 *mem = g_malloc (sz * n);
  guint32 x = 12345;
  for (guint f = 0; f < n; f++) {
    guint8 *p = mem + sz * f;
    for (gsize i = 0; i < sz; i++) {
      test_xorshift32 (&x);
      gsize px = i < ysz ? i % w : (i - ysz) % w;
      gsize row = i < ysz ? i / w : (i - ysz) / w;
      int v = (int) ((px + row + (gsize) f * 40) % 256) / 2 + (((px / 64 + f) % 2) ? 60 : 0)
          + (int) (x >> 28);
      p[i] = (guint8) CLAMP (v, 0, 255);
    }
  }
  *frame_size = sz;
  return mem;
}

typedef struct {
  /* set by the caller */
  guint expected;                /* buffers that will reach the sink */
  void (*on_buffer) (GstBuffer *buf, gpointer data);   /* each buffer; may be NULL */
  gpointer data;
  /* measured */
  gint64 first, last;            /* wall clock, us */
  double cpu_first, cpu_last;    /* CPU time of all threads, us */
  guint count;
} BenchTiming;

static inline void
bench_on_handoff (GstElement *sink, GstBuffer *buf, GstPad *pad, gpointer data)
{
  BenchTiming *t = data;
  gint64 now = g_get_monotonic_time ();
  /* atomic: several sinks may count into one (bench-streams) */
  guint i = (guint) g_atomic_int_add ((gint *) &t->count, 1);
  if (i == 0) {
    t->first = now;
    t->cpu_first = bench_cpu_us ();
  } else if (i + 1 == t->expected) {
    t->last = now;
    t->cpu_last = bench_cpu_us ();
  }
  if (t->on_buffer)
    t->on_buffer (buf, t->data);
}

/* Runs launch line @desc (see above; @name for messages) on @t->expected
 * buffers: frame i is @frames + (i % @n_source) * @frame_size, timestamped
 * at @fps frames per second, offset i. Returns frames per second (0 when
 * the pipeline failed or lost buffers, with a message on stderr) and the
 * CPU milliseconds per frame in *@cpu_ms. */
static inline double
bench_gst_run (const char *name, const char *desc, guint8 *frames, gsize frame_size,
    guint n_source, gint fps, BenchTiming *t, double *cpu_ms)
{
  GError *err = NULL;
  GstElement *pipe = gst_parse_launch (desc, &err);
  if (!pipe) {
    fprintf (stderr, "%s: %s\n", name, err->message);
    g_clear_error (&err);
    return 0;
  }
  t->count = 0;
  GstElement *src = gst_bin_get_by_name (GST_BIN (pipe), "src");
  GstElement *sink = gst_bin_get_by_name (GST_BIN (pipe), "sink");
  g_signal_connect (sink, "handoff", G_CALLBACK (bench_on_handoff), t);
  for (guint i = 0; i < t->expected; i++) {
    guint8 *data = frames + frame_size * (i % n_source);
    GstBuffer *b = gst_buffer_new_wrapped_full (GST_MEMORY_FLAG_READONLY, data, frame_size, 0,
        frame_size, NULL, NULL);
    GST_BUFFER_PTS (b) = gst_util_uint64_scale (i, GST_SECOND, fps);
    GST_BUFFER_DURATION (b) = gst_util_uint64_scale (1, GST_SECOND, fps);
    GST_BUFFER_OFFSET (b) = i;
    gst_app_src_push_buffer (GST_APP_SRC (src), b);
  }
  gst_app_src_end_of_stream (GST_APP_SRC (src));
  gst_element_set_state (pipe, GST_STATE_PLAYING);
  GstBus *bus = gst_element_get_bus (pipe);
  GstMessage *m = gst_bus_timed_pop_filtered (bus, GST_CLOCK_TIME_NONE,
      GST_MESSAGE_EOS | GST_MESSAGE_ERROR);
  gboolean ok = FALSE;
  if (GST_MESSAGE_TYPE (m) == GST_MESSAGE_ERROR) {
    gchar *dbg = NULL;
    gst_message_parse_error (m, &err, &dbg);
    fprintf (stderr, "%s: %s (%s)\n", name, err->message, dbg ? dbg : "");
    g_clear_error (&err);
    g_free (dbg);
  } else {
    ok = t->count == t->expected;
  }
  gst_message_unref (m);
  gst_object_unref (bus);
  gst_element_set_state (pipe, GST_STATE_NULL);
  gst_object_unref (src);
  gst_object_unref (sink);
  gst_object_unref (pipe);
  if (!ok || t->last <= t->first)
    return 0;
  *cpu_ms = (t->cpu_last - t->cpu_first) * 1e-3 / (t->count - 1);
  return (t->count - 1) * 1e6 / (double) (t->last - t->first);
}
