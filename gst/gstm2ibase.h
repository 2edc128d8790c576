/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* gstm2ibase.h — GstM2iBase, the abstract base of m2icolorconvert,
 * m2iresize and m2inorm (private to the plugin).
 *
 * The base does everything that is the same for the three elements: caps
 * (transform_caps from the subclass's format map, fixation, deferred-frame
 * features), negotiation checks, buffer pools, fusion (deferring to an m2i
 * neighbour or running the chain received so far plus the element's own ops
 * as one M2I plan), and the common properties profile, n-threads, fusion and
 * fused. A subclass says which formats it turns into which, how output size
 * relates to input size, and which ops it appends for one frame.
 */
#pragma once

#include <gst/gst.h>
#include <gst/base/gstbasetransform.h>
#include "gstm2icaps.h"
#include "gstm2ideferred.h"

G_BEGIN_DECLS

#define GST_TYPE_M2I_BASE (gst_m2i_base_get_type ())
G_DECLARE_DERIVABLE_TYPE (GstM2iBase, gst_m2i_base, GST, M2I_BASE, GstBaseTransform)

/* One side of the element for one frame: the format with its real channel
 * order and the size. */
typedef struct {
  M2iFormat format;
  gint width, height;
} GstM2iStage;

typedef enum {
  GST_M2I_SIZE_SAME,      /* output size = input size */
  GST_M2I_SIZE_ANY,       /* any output size (resize) */
} GstM2iSizeRule;

struct _GstM2iBaseClass {
  GstBaseTransformClass parent_class;

  GstM2iSizeRule size_rule;
  /* Caps formats the sink pad takes. */
  guint input_formats;
  /* Whether the sink pad takes deferred frames (memory:M2I). */
  gboolean takes_deferred;
  /* Whether the element's ops only change values (convert, permute, norm),
   * so they may follow letterbox padding inside one chain. */
  gboolean value_wise;
  /* Most ops the element appends for one frame. */
  guint max_ops;

  /* The output formats for input @in (or the input formats for output @out),
   * most preferred first, into @list; returns how many. */
  guint (*outputs_for_input) (GstM2iBase *self, GstM2iCapsFormat in, GstM2iCapsFormat *list);
  guint (*inputs_for_output) (GstM2iBase *self, GstM2iCapsFormat out, GstM2iCapsFormat *list);
  /* Channel order of the output for input channel order @in (only matters
   * for tensors, whose caps do not say it). Default: @in. */
  M2iChannelOrder (*output_order) (GstM2iBase *self, M2iChannelOrder in);
  /* Element-specific check of a negotiated pair; FALSE with a message a user
   * can act on. May be NULL. */
  gboolean (*check_caps) (GstM2iBase *self, const GstM2iCapsInfo *in,
      const GstM2iCapsInfo *out, GError **error);
  /* TRUE when turning @in into @out needs no op (passthrough on equal caps). */
  gboolean (*is_noop) (GstM2iBase *self, const GstM2iCapsInfo *in, const GstM2iCapsInfo *out);
  /* Appends the ops that turn @in into @out to @frame (and sets its
   * letterbox). FALSE with @error when it cannot. */
  gboolean (*append_ops) (GstM2iBase *self, const GstM2iStage *in, const GstM2iStage *out,
      GstM2iDeferredFrame *frame, GError **error);
  /* GST_M2I_SIZE_ANY only: chooses the output size for input @in in @s
   * (whose width/height or dimensions may be ranges or fixed). */
  void (*fixate_size) (GstM2iBase *self, const GstM2iCapsInfo *in, const GstStructure *s,
      GstM2iCapsFormat cf, gint *width, gint *height);
};

/* The element's hardware profile and plan options (under the object lock). */
void gst_m2i_base_get_plan_options (GstM2iBase *self, M2iPlanOptions *opts);

/* For subclasses whose properties change the caps: renegotiate both sides. */
void gst_m2i_base_reconfigure (GstM2iBase *self);

G_END_DECLS
