/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* gstm2icaps.h — caps of the m2i elements (private to the plugin).
 *
 * Every caps structure an m2i pad deals with is one of a fixed set of "caps
 * formats": NV12 and I420 video in, RGB/BGR/RGBP/BGRP video (and for
 * m2iinfer GRAY8 and the 4-byte RGBx, BGRx, xRGB, xBGR, RGBA, BGRA, ARGB,
 * ABGR), and planar or
 * interleaved fp16/fp32 tensors in NNStreamer's convention
 * (other/tensors,format=static,num_tensors=1,types=float16,dimensions=...,
 * dimensions innermost first: planar CHW is "W:H:3:1", interleaved HWC is
 * "3:W:H:1"). Each may carry the caps feature memory:M2I (a deferred frame,
 * see gstm2ideferred.h). These helpers map structures to caps formats and
 * back, so that the elements' transform_caps only say which format becomes
 * which.
 */
#pragma once

#include <gst/gst.h>
#include <gst/video/video.h>
#include <m2i-core/m2i/m2i.h>
#include <m2i-core/ir/m2i-ir-types.h>

G_BEGIN_DECLS

typedef enum {
  GST_M2I_CF_NV12,
  GST_M2I_CF_I420,
  GST_M2I_CF_RGB,
  GST_M2I_CF_BGR,
  GST_M2I_CF_RGBP,
  GST_M2I_CF_BGRP,
  GST_M2I_CF_F16_PLANAR,
  GST_M2I_CF_F32_PLANAR,
  GST_M2I_CF_F16_INTERLEAVED,
  GST_M2I_CF_F32_INTERLEAVED,
  /* m2iinfer's other video inputs: gray and 4-byte pixels (the X byte
   * being padding or alpha) */
  GST_M2I_CF_GRAY8,
  GST_M2I_CF_RGBx,
  GST_M2I_CF_BGRx,
  GST_M2I_CF_xRGB,
  GST_M2I_CF_xBGR,
  GST_M2I_CF_RGBA,
  GST_M2I_CF_BGRA,
  GST_M2I_CF_ARGB,
  GST_M2I_CF_ABGR,
  GST_M2I_CF_COUNT
} GstM2iCapsFormat;

#define GST_M2I_CF_BIT(cf) (1u << (cf))
#define GST_M2I_CF_YUV_MASK (GST_M2I_CF_BIT (GST_M2I_CF_NV12) | GST_M2I_CF_BIT (GST_M2I_CF_I420))
#define GST_M2I_CF_RGB8_MASK (GST_M2I_CF_BIT (GST_M2I_CF_RGB) | GST_M2I_CF_BIT (GST_M2I_CF_BGR) \
    | GST_M2I_CF_BIT (GST_M2I_CF_RGBP) | GST_M2I_CF_BIT (GST_M2I_CF_BGRP))
#define GST_M2I_CF_TENSOR_MASK (GST_M2I_CF_BIT (GST_M2I_CF_F16_PLANAR) \
    | GST_M2I_CF_BIT (GST_M2I_CF_F32_PLANAR) | GST_M2I_CF_BIT (GST_M2I_CF_F16_INTERLEAVED) \
    | GST_M2I_CF_BIT (GST_M2I_CF_F32_INTERLEAVED))

/* Largest width or height any m2i pad accepts (the engine's resize limit). */
#define GST_M2I_MAX_SIZE 65536

/* Pad-template caps strings. */
#define GST_M2I_VIDEO_CAPS(features, formats) \
  "video/x-raw" features ", format=(string)" formats ", width=(int)[1, 65536], " \
  "height=(int)[1, 65536], framerate=(fraction)[0/1, 2147483647/1]"
#define GST_M2I_TENSOR_CAPS(features) \
  "other/tensors" features ", format=(string)static, num_tensors=(int)1, " \
  "types=(string){ float16, float32 }, framerate=(fraction)[0/1, 2147483647/1]"

/* ---- NNStreamer's tensor spellings ------------------------------------------ */

/* Most dimensions a tensor's "dimensions" names (NNStreamer's rank limit). */
#define GST_M2I_MAX_DIMS 16

/* Parses NNStreamer dimensions @str ("d0:d1:...", innermost first) into
 * @dims; returns their count, 0 for anything else (more than
 * GST_M2I_MAX_DIMS, an empty part, not a number, a value below 1 or above
 * @max). */
guint gst_m2i_tensor_dims_parse (const char *str, gint64 max, gint64 dims[GST_M2I_MAX_DIMS]);

/* Appends @shape's dimensions (outermost first in @shape) in NNStreamer's
 * spelling, innermost first, ':'-separated ("10:1" for [1,10]; "1" for a
 * scalar) to @out. */
void gst_m2i_tensor_dims_append (GString *out, const M2iShape *shape);

/* NNStreamer's name of an element type ("float32", "uint8", ...); NULL when
 * it has none. gst_m2i_tensor_type_from_name() the reverse
 * (M2I_ET_UNDEFINED for an unknown name). */
const char *gst_m2i_tensor_type_name (M2iElementType t);
M2iElementType gst_m2i_tensor_type_from_name (const char *name);

/* What a caps format is: its media ("video/x-raw" or "other/tensors"), the
 * name used in the caps (video format or tensor type), the engine format
 * (RGB order for tensors, which do not say their channel order). */
gboolean gst_m2i_caps_format_is_tensor (GstM2iCapsFormat cf);
const char *gst_m2i_caps_format_name (GstM2iCapsFormat cf);
M2iFormat gst_m2i_caps_format_to_m2i (GstM2iCapsFormat cf, M2iChannelOrder order);
/* Short description for messages: "NV12", "RGBP", "planar fp16 tensor". */
const char *gst_m2i_caps_format_describe (GstM2iCapsFormat cf);
/* The caps format of engine format @f (the inverse of
 * gst_m2i_caps_format_to_m2i, channel order dropped for tensors);
 * GST_M2I_CF_COUNT for a format no m2i pad carries. */
GstM2iCapsFormat gst_m2i_caps_format_from_m2i (M2iFormat f);

/* Caps formats that @s (any caps structure, fixed or not) can stand for,
 * as a bit mask; 0 for a structure no m2i pad deals with. */
guint gst_m2i_structure_formats (const GstStructure *s);

/* Width and height @s gives for caps format @cf (ints or ranges; ranges
 * [1, GST_M2I_MAX_SIZE] when it says nothing). Unset GValues are
 * initialised here; the caller unsets them. FALSE if @s is not @cf. */
gboolean gst_m2i_structure_size (const GstStructure *s, GstM2iCapsFormat cf,
    GValue *width, GValue *height);

/* A new structure for @cf with the given size (ints or ranges) and, when
 * non-NULL, framerate and pixel-aspect-ratio (the latter video only).
 * Tensors get "dimensions" (gst_m2i_tensor_dims_value) only when both sizes
 * are fixed. */
GstStructure *gst_m2i_structure_new (GstM2iCapsFormat cf, const GValue *width,
    const GValue *height, const GValue *framerate, const GValue *par);

/* As gst_m2i_structure_new for a @width x @height frame (0: any width or
 * height), any framerate, no pixel-aspect-ratio. */
GstStructure *gst_m2i_structure_new_sized (GstM2iCapsFormat cf, gint width, gint height);

/* The tensor "dimensions" string for @cf of @width x @height ("W:H:3:1"
 * planar, "3:W:H:1" interleaved): @buf (@buf_size bytes) is filled and
 * returned. */
const char *gst_m2i_tensor_dims (GstM2iCapsFormat cf, gint width, gint height,
    char *buf, gsize buf_size);
/* The spellings of those dimensions that m2i pads accept, as a list (with
 * and without the trailing ":1", which newer NNStreamer leaves out), in the
 * uninitialised @value. */
void gst_m2i_tensor_dims_value (GstM2iCapsFormat cf, gint width, gint height, GValue *value);

/* Everything the elements need to know about one side of a negotiated
 * link. */
typedef struct {
  GstM2iCapsFormat cf;
  gboolean deferred;             /* caps feature memory:M2I */
  gint width, height;
  gint fps_n, fps_d;
  GstVideoInfo vinfo;            /* video caps only */
  /* The default buffer layout of these caps (GStreamer's video layout, or a
   * tight tensor): engine geometry with NULL data, plane offsets, size. */
  M2iImage layout;
  gsize offset[M2I_MAX_PLANES];
  gsize size;
} GstM2iCapsInfo;

/* Parses fixed @caps into @info. FALSE with @error (M2I_ERROR_INVALID_ARGUMENT)
 * naming what is wrong for caps that are not one of the m2i caps formats. */
gboolean gst_m2i_caps_info_from_caps (GstM2iCapsInfo *info, const GstCaps *caps,
    GError **error);

/* FALSE with @error (M2I_ERROR_INVALID_ARGUMENT) when @info is NV12 or I420
 * of an odd width or height, which the M2I block cannot read; the message
 * names the @side ("input", "output") and what to do. */
gboolean gst_m2i_caps_info_check_even (const GstM2iCapsInfo *info, const char *side,
    GError **error);

/* Points @img's planes into @map: plane p starts @offset[p] bytes in and
 * holds what the mapping has from there on (0 bytes when the offset lies
 * beyond it, so the engine's checks catch short buffers). Planes the format
 * does not have get NULL. */
void gst_m2i_image_set_planes (M2iImage *img, const GstMapInfo *map,
    const gsize offset[M2I_MAX_PLANES]);

/* The engine image of @buf, which has @info's caps, mapped in @map (already
 * mapped by the caller). Strides and plane offsets come from the buffer's
 * GstVideoMeta when it has one, else from the caps. @order: channel order of
 * tensors. Plane sizes are what the mapping holds from each plane on, so the
 * engine's own checks catch short buffers. FALSE with @error if the video
 * meta does not describe @info's frame. */
gboolean gst_m2i_image_from_buffer (const GstM2iCapsInfo *info, GstBuffer *buf,
    const GstMapInfo *map, M2iChannelOrder order, M2iImage *img,
    gsize offset[M2I_MAX_PLANES], GError **error);

/* Whether hardware profile @profile can take or produce @cf at all; when it
 * cannot, *why (static string) says why and what to do instead. */
gboolean gst_m2i_profile_accepts (M2iProfile profile, GstM2iCapsFormat cf,
    const char **why);

/* TRUE if @caps's structure @i carries the memory:M2I feature. */
gboolean gst_m2i_caps_is_deferred (const GstCaps *caps, guint i);

/* @caps (taken) as it is when @deferred, else without its memory:M2I
 * structures (an element with fusion off). */
GstCaps *gst_m2i_caps_keep_deferred (GstCaps *caps, gboolean deferred);

/* Posts @text as @element's negotiation error (with @debug, or none),
 * unless it is *@last_posted — upstream retries refused caps at every
 * reconfiguration, and one message says it all — and keeps a copy there.
 * The caller frees *@last_posted, and clears it when caps are accepted and
 * when the element stops. Returns FALSE (set_caps' answer). */
gboolean gst_m2i_caps_refuse_once (GstElement *element, gchar **last_posted, const char *text,
    const char *debug);

G_END_DECLS
