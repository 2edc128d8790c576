/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* gstm2ielements.h — the elements of the m2i plugin. */
#pragma once

#include <gst/gst.h>

G_BEGIN_DECLS

#define GST_TYPE_M2I_COLOR_CONVERT (gst_m2i_color_convert_get_type ())
#define GST_TYPE_M2I_RESIZE (gst_m2i_resize_get_type ())
#define GST_TYPE_M2I_NORM (gst_m2i_norm_get_type ())

GType gst_m2i_color_convert_get_type (void);
GType gst_m2i_resize_get_type (void);
GType gst_m2i_norm_get_type (void);

GST_ELEMENT_REGISTER_DECLARE (m2icolorconvert);
GST_ELEMENT_REGISTER_DECLARE (m2iresize);
GST_ELEMENT_REGISTER_DECLARE (m2inorm);

G_END_DECLS
