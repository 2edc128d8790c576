/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* gstm2i.c — the m2i plugin: media-to-inference pre-processing on the M2I
 * block (m2icolorconvert, m2iresize, m2inorm), fused across elements, and
 * inference of OpenVINO IR models (m2iinfer) with that pre-processing fused
 * into the task writing the model's input. */
#include "gstm2ielements.h"
#include "gstm2iinfer.h"
#include "gstm2ianalytics.h"

static gboolean
plugin_init (GstPlugin *plugin)
{
  gboolean ok = FALSE;
  ok |= GST_ELEMENT_REGISTER (m2icolorconvert, plugin);
  ok |= GST_ELEMENT_REGISTER (m2iresize, plugin);
  ok |= GST_ELEMENT_REGISTER (m2inorm, plugin);
  ok |= GST_ELEMENT_REGISTER (m2iinfer, plugin);
  ok |= GST_ELEMENT_REGISTER (m2itrack, plugin);
  ok |= GST_ELEMENT_REGISTER (m2ioverlay, plugin);
  ok |= GST_ELEMENT_REGISTER (m2imetapublish, plugin);
  return ok;
}

GST_PLUGIN_DEFINE (GST_VERSION_MAJOR, GST_VERSION_MINOR, m2i,
    "Colour conversion, resize and normalization for neural networks on the M2I block, "
    "fused across adjacent elements into one device task, and inference of OpenVINO IR "
    "models on the CPU or split between the M2I device and the CPU",
    plugin_init, PACKAGE_VERSION, GST_LICENSE, GST_PACKAGE_NAME, GST_PACKAGE_ORIGIN)
