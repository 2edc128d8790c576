/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* gstm2ianalytics.h — the analytics elements of the m2i plugin: m2itrack,
 * m2ioverlay, m2imetapublish (docs/analytics.md). */
#pragma once

#include <gst/gst.h>

G_BEGIN_DECLS

GST_ELEMENT_REGISTER_DECLARE (m2itrack);
GST_ELEMENT_REGISTER_DECLARE (m2ioverlay);
GST_ELEMENT_REGISTER_DECLARE (m2imetapublish);

G_END_DECLS
