/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* gstm2iinferroi.c — m2iinfer inference-region=roi-list: the regions of a
 * frame through the core's M2iInferRoi, results onto the regions, tracked
 * objects' classifications carried between re-runs; see gstm2iinferroi.h.
 *
 * The structures are DL Streamer's (gvaclassify on regions): the
 * classification structure a full-frame classifier puts on its frame-sized
 * region goes onto the object's region; a detector run on a region adds
 * regions with "detection" structures whose parent_id is the object's id.
 */
#include "gstm2iinferroi.h"
#include "gstm2iregions.h"

#include <m2i-core/base/m2i-error.h>
#include <string.h>

GST_DEBUG_CATEGORY_EXTERN (gst_m2i_infer_debug);
#define GST_CAT_DEFAULT gst_m2i_infer_debug

#define DEFAULT_REGION GST_M2I_INFER_REGION_FULL_FRAME
#define DEFAULT_OBJECT_CLASS NULL
#define DEFAULT_RECLASSIFY_INTERVAL 1

/* Regions taken per frame (the first ones in meta order). */
#define MAX_REGIONS 1024
/* Tracked objects whose classification is carried (m2itrack's most
 * tracks); past it the object seen longest ago is forgotten. */
#define MAX_OBJECTS 1024
/* Structures carried per object. */
#define MAX_CARRIED 8
#define NEVER G_MAXUINT64

enum { PROP_REGION_OFFSET, PROP_OBJECT_CLASS_OFFSET, PROP_RECLASSIFY_OFFSET };

GType
gst_m2i_infer_region_get_type (void)
{
  static gsize id = 0;
  static const GEnumValue values[] = {
    { GST_M2I_INFER_REGION_FULL_FRAME, "The whole frame", "full-frame" },
    { GST_M2I_INFER_REGION_ROI_LIST, "Each region of interest (region meta) of the frame",
        "roi-list" },
    { 0, NULL, NULL },
  };
  if (g_once_init_enter (&id))
    g_once_init_leave (&id, g_enum_register_static ("GstM2iInferRegion", values));
  return (GType) id;
}

/* ---- properties ------------------------------------------------------------- */

void
gst_m2i_infer_roi_props_init (GstM2iInferRoiProps *p)
{
  p->region = DEFAULT_REGION;
  p->object_class = g_strdup (DEFAULT_OBJECT_CLASS);
  p->reclassify_interval = DEFAULT_RECLASSIFY_INTERVAL;
}

void
gst_m2i_infer_roi_props_clear (GstM2iInferRoiProps *p)
{
  g_clear_pointer (&p->object_class, g_free);
}

static GParamSpec *pspecs[3];

void
gst_m2i_infer_roi_install_properties (GObjectClass *klass, guint prop_region)
{
  GParamFlags ready = G_PARAM_READWRITE | G_PARAM_STATIC_STRINGS | GST_PARAM_MUTABLE_READY;
  pspecs[PROP_REGION_OFFSET] = g_param_spec_enum ("inference-region", "Inference region",
      "What the model runs on (DL Streamer's property): full-frame, the whole frame; "
      "roi-list, every region of interest (GstVideoRegionOfInterestMeta, e.g. an upstream "
      "detector's objects) of the frame, each cropped from the frame and pre-processed by "
      "its own fused M2I plan (all regions of a frame in one device submission), its "
      "results attached to that region: classes as a classification structure, detections "
      "as new regions whose parent_id is the region's id. roi-list takes plain video only "
      "(NV12, I420, RGB, BGR, RGBP, BGRP: the frame the regions' pixels refer to; an m2i "
      "chain upstream computes its frames) and output=meta", GST_TYPE_M2I_INFER_REGION,
      DEFAULT_REGION, ready);
  pspecs[PROP_OBJECT_CLASS_OFFSET] = g_param_spec_string ("object-class", "Object class",
      "inference-region=roi-list: the region labels (roi_type, e.g. the detector's "
      "\"person\") to run the model on, comma-separated (\"person,face\"); empty or unset: "
      "every region", DEFAULT_OBJECT_CLASS, ready);
  pspecs[PROP_RECLASSIFY_OFFSET] = g_param_spec_uint ("reclassify-interval",
      "Reclassify interval", "inference-region=roi-list with tracked objects (an "
      "object_id structure on the region, as m2itrack writes): run the model on an object "
      "again only every N frames and copy its last classification onto its region on the "
      "frames between (DL Streamer's gvaclassify property): 1 = on every frame, N = every "
      "N-th frame since its last run, 0 = once per object. Frames count from PAUSED; an "
      "object absent from a frame is forgotten (its next appearance runs the model). "
      "Regions without an id run on every frame", 0, G_MAXUINT,
      DEFAULT_RECLASSIFY_INTERVAL, ready);
  for (guint i = 0; i < G_N_ELEMENTS (pspecs); i++)
    g_object_class_install_property (klass, prop_region + i, pspecs[i]);
  gst_type_mark_as_plugin_api (GST_TYPE_M2I_INFER_REGION, 0);
}

gboolean
gst_m2i_infer_roi_props_set (GstM2iInferRoiProps *p, GParamSpec *pspec, const GValue *value)
{
  if (pspec == pspecs[PROP_REGION_OFFSET])
    p->region = g_value_get_enum (value);
  else if (pspec == pspecs[PROP_OBJECT_CLASS_OFFSET]) {
    g_free (p->object_class);
    p->object_class = g_value_dup_string (value);
  } else if (pspec == pspecs[PROP_RECLASSIFY_OFFSET])
    p->reclassify_interval = g_value_get_uint (value);
  else
    return FALSE;
  return TRUE;
}

gboolean
gst_m2i_infer_roi_props_get (const GstM2iInferRoiProps *p, GParamSpec *pspec, GValue *value)
{
  if (pspec == pspecs[PROP_REGION_OFFSET])
    g_value_set_enum (value, p->region);
  else if (pspec == pspecs[PROP_OBJECT_CLASS_OFFSET])
    g_value_set_string (value, p->object_class);
  else if (pspec == pspecs[PROP_RECLASSIFY_OFFSET])
    g_value_set_uint (value, p->reclassify_interval);
  else
    return FALSE;
  return TRUE;
}

/* ---- state ------------------------------------------------------------------------ */

/* A tracked object's carried classification. */
typedef struct {
  gint id;                        /* object id; 0: a free slot */
  guint64 classified;             /* frame of the last run; NEVER: none yet */
  guint64 seen;                   /* frame it was last seen on */
  GstStructure *params[MAX_CARRIED];
  guint n_params;
} Carried;

struct _GstM2iInferRoi {
  M2iInferRoi *core;
  GQuark *classes;                /* object-class as quarks, 0-terminated; NULL: all */
  guint interval;                 /* reclassify-interval */
  /* this frame's regions to run, the meta and carried entry of each */
  M2iInferRegion *regions;
  GstVideoRegionOfInterestMeta **metas;
  Carried **objects;
  Carried *carried;               /* MAX_OBJECTS */
  /* during a frame's run */
  GstBuffer *buf;
  const GstM2iResultContext *ctx;
  guint64 frame;
  gint next_id;
  GValue *message;                /* a list of structures, or NULL */
};

static void
carried_clear (Carried *c)
{
  for (guint i = 0; i < c->n_params; i++)
    gst_structure_free (c->params[i]);
  memset (c, 0, sizeof *c);
}

GstM2iInferRoi *
gst_m2i_infer_roi_new (M2iInferSession *session, const GstM2iInferRoiProps *props,
    GError **error)
{
  M2iInferRoi *core = m2i_infer_roi_new (session, error);
  if (!core)
    return NULL;
  GstM2iInferRoi *r = g_new0 (GstM2iInferRoi, 1);
  r->core = core;
  r->interval = props->reclassify_interval;
  gchar **names = props->object_class ? g_strsplit (props->object_class, ",", -1) : NULL;
  guint n = 0;
  for (gchar **s = names; s && *s; s++)
    if (*g_strstrip (*s))
      n++;
  if (n > 0) {
    r->classes = g_new0 (GQuark, n + 1);
    n = 0;
    for (gchar **s = names; *s; s++)
      if (**s)
        r->classes[n++] = g_quark_from_string (*s);
  }
  g_strfreev (names);
  r->regions = g_new (M2iInferRegion, MAX_REGIONS);
  r->metas = g_new (GstVideoRegionOfInterestMeta *, MAX_REGIONS);
  r->objects = g_new (Carried *, MAX_REGIONS);
  r->carried = g_new0 (Carried, MAX_OBJECTS);
  return r;
}

void
gst_m2i_infer_roi_reset (GstM2iInferRoi *r)
{
  for (guint i = 0; i < MAX_OBJECTS; i++)
    carried_clear (&r->carried[i]);
}

void
gst_m2i_infer_roi_free (GstM2iInferRoi *r)
{
  if (!r)
    return;
  gst_m2i_infer_roi_reset (r);
  m2i_infer_roi_free (r->core);
  g_free (r->classes);
  g_free (r->regions);
  g_free (r->metas);
  g_free (r->objects);
  g_free (r->carried);
  g_free (r);
}

const char *
gst_m2i_infer_roi_describe (const GstM2iInferRoi *r, guint *serial)
{
  return m2i_infer_roi_describe (r->core, serial);
}

GstCaps *
gst_m2i_infer_roi_restrict_caps (GstCaps *caps)
{
  GstCaps *video = gst_caps_from_string ("video/x-raw, format=(string){ NV12, I420, RGB, BGR, "
      "RGBP, BGRP }");
  GstCaps *out = gst_caps_intersect_full (caps, video, GST_CAPS_INTERSECT_FIRST);
  gst_caps_unref (video);
  gst_caps_unref (caps);
  return out;
}

/* ---- one frame ----------------------------------------------------------------- */

static gboolean
takes_class (const GstM2iInferRoi *r, GQuark label)
{
  if (!r->classes)
    return TRUE;
  for (const GQuark *q = r->classes; *q; q++)
    if (*q == label)
      return TRUE;
  return FALSE;
}

/* The carried entry of object @id, made when missing (in a free slot, or
 * the one seen longest ago); marked seen on @frame. */
static Carried *
object_entry (GstM2iInferRoi *r, gint id, guint64 frame)
{
  Carried *free_slot = NULL, *oldest = &r->carried[0];
  for (guint i = 0; i < MAX_OBJECTS; i++) {
    Carried *c = &r->carried[i];
    if (c->id == id) {
      c->seen = frame;
      return c;
    }
    if (!c->id && !free_slot)
      free_slot = c;
    if (c->seen < oldest->seen)
      oldest = c;
  }
  Carried *c = free_slot ? free_slot : oldest;
  carried_clear (c);
  c->id = id;
  c->classified = NEVER;
  c->seen = frame;
  return c;
}

/* Whether object @c runs the model on @frame (else its classification is
 * carried). */
static gboolean
due (const GstM2iInferRoi *r, const Carried *c, guint64 frame)
{
  if (!c || c->classified == NEVER || r->interval == 1)
    return TRUE;
  return r->interval > 1 && frame - c->classified >= r->interval;
}

static void
carry (Carried *c, GstVideoRegionOfInterestMeta *roi)
{
  for (guint i = 0; i < c->n_params; i++)
    gst_video_region_of_interest_meta_add_param (roi, gst_structure_copy (c->params[i]));
}

/* The classification structures of @roi from the one at @first on, kept
 * for its object @c. */
static void
remember (Carried *c, GstVideoRegionOfInterestMeta *roi, GList *first, guint64 frame)
{
  for (guint i = 0; i < c->n_params; i++)
    gst_structure_free (c->params[i]);
  c->n_params = 0;
  for (GList *l = first; l && c->n_params < MAX_CARRIED; l = l->next)
    c->params[c->n_params++] = gst_structure_copy (l->data);
  c->classified = frame;
}

static void
add_to_message (GstM2iInferRoi *r, GstVideoRegionOfInterestMeta *roi, GList *first)
{
  for (GList *l = first; l; l = l->next) {
    GstStructure *s = gst_structure_copy (l->data);
    gst_structure_set (s, "region_id", G_TYPE_INT, roi->id, "x", G_TYPE_UINT, roi->x,
        "y", G_TYPE_UINT, roi->y, "width", G_TYPE_UINT, roi->w, "height", G_TYPE_UINT, roi->h,
        NULL);
    GValue v = G_VALUE_INIT;
    g_value_init (&v, GST_TYPE_STRUCTURE);
    g_value_take_boxed (&v, s);
    gst_value_list_append_and_take_value (r->message, &v);
  }
}

/* M2iInferRoiFunc: region @index's results onto its meta. */
static void
on_region (guint index, const M2iInferResult *result, gpointer data)
{
  GstM2iInferRoi *r = data;
  GstVideoRegionOfInterestMeta *roi = r->metas[index];
  if (!result)
    return;                       /* nothing of it inside the frame */
  GList *last = g_list_last (roi->params);
  gst_m2i_results_classify_region (roi, r->ctx, result);
  GList *added = last ? last->next : roi->params;
  if (r->objects[index])
    remember (r->objects[index], roi, added, r->frame);
  if (r->message)
    add_to_message (r, roi, added);
  /* a detector on the region: its objects in frame pixels, children of it */
  gst_m2i_results_add_detections (r->buf, r->ctx, result, r->next_id, roi->id);
  r->next_id += (gint) result->n_detections;
}

/* Collects the objects of @buf: the regions to run into r->regions (their
 * count into *@n), the carried classifications copied onto the others.
 * Returns the largest region id present. */
static gint
collect (GstM2iInferRoi *r, GstBuffer *buf, guint64 frame, gboolean infer, guint *n)
{
  gint max_id = -1;
  gboolean warned = FALSE;
  gpointer state = NULL;
  GstMeta *m;
  *n = 0;
  while ((m = gst_buffer_iterate_meta_filtered (buf, &state,
              GST_VIDEO_REGION_OF_INTEREST_META_API_TYPE))) {
    GstVideoRegionOfInterestMeta *roi = (GstVideoRegionOfInterestMeta *) m;
    max_id = MAX (max_id, roi->id);
    if (!takes_class (r, roi->roi_type))
      continue;
    gint id;
    Carried *c = gst_m2i_region_get_object_id (roi, &id) ? object_entry (r, id, frame) : NULL;
    if (!infer || !due (r, c, frame)) {
      if (c)
        carry (c, roi);
      continue;
    }
    if (*n == MAX_REGIONS) {
      if (!warned)
        GST_WARNING ("more than %d regions on frame %" G_GUINT64_FORMAT ": the rest are not "
            "inferred", MAX_REGIONS, frame);
      warned = TRUE;
      continue;
    }
    r->regions[*n] = (M2iInferRegion) { (gint) MIN (roi->x, G_MAXINT), (gint) MIN (roi->y,
        G_MAXINT), (gint) MIN (roi->w, G_MAXINT), (gint) MIN (roi->h, G_MAXINT) };
    r->metas[*n] = roi;
    r->objects[*n] = c;
    (*n)++;
  }
  return max_id;
}

gboolean
gst_m2i_infer_roi_frame (GstM2iInferRoi *r, GstElement *element, GstBuffer *buf,
    const GstM2iCapsInfo *info, const GstM2iResultContext *ctx, guint64 frame,
    gboolean infer, gboolean post, GError **error)
{
  guint n;
  gint max_id = collect (r, buf, frame, infer, &n);
  gboolean ok = TRUE;
  GValue list = G_VALUE_INIT;
  if (infer) {
    GstMapInfo map;
    M2iImage img;
    gsize offset[M2I_MAX_PLANES];
    if (!gst_buffer_map (buf, &map, GST_MAP_READ)) {
      g_set_error (error, M2I_ERROR, M2I_ERROR_INVALID_ARGUMENT, "cannot map the frame");
      return FALSE;
    }
    ok = gst_m2i_image_from_buffer (info, buf, &map, M2I_ORDER_RGB, &img, offset, error);
    r->buf = buf;
    r->ctx = ctx;
    r->frame = frame;
    r->next_id = max_id + 1;
    r->message = NULL;
    if (post) {
      gst_value_list_init (&list, n);
      r->message = &list;
    }
    ok = ok && m2i_infer_roi_run (r->core, &img, r->regions, n, on_region, r, error);
    gst_buffer_unmap (buf, &map);
  }
  /* objects gone from this frame are forgotten */
  for (guint i = 0; i < MAX_OBJECTS; i++)
    if (r->carried[i].id && r->carried[i].seen != frame)
      carried_clear (&r->carried[i]);
  if (ok && post && infer) {
    GstStructure *s = gst_structure_new ("m2iinfer", "frame", G_TYPE_UINT64, frame,
        "timestamp", G_TYPE_UINT64, (guint64) GST_BUFFER_PTS (buf),
        "model", G_TYPE_STRING, ctx->model_name, "n_regions", G_TYPE_UINT, n, NULL);
    gst_structure_take_value (s, "regions", &list);
    gst_element_post_message (element, gst_message_new_element (GST_OBJECT (element), s));
  } else if (G_IS_VALUE (&list)) {
    g_value_unset (&list);
  }
  return ok;
}
