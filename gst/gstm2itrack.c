/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* gstm2itrack.c — m2itrack: stable object ids on region metas across
 * frames, thin over the core's tracker (m2i-core/analytics/m2i-track.h).
 *
 * Every GstVideoRegionOfInterestMeta with a "detection" structure is an
 * object. On a frame the detector ran on, the objects go to
 * m2i_tracker_update(); each object that belongs to a confirmed track gets
 * an "object_id" structure with the track's id (int "id", as DL Streamer's
 * gvatrack writes it, and "predicted" = FALSE). On a frame the detector
 * skipped, the tracks are predicted (m2i_tracker_predict) and, with
 * tracking-type=short-term, each confirmed track that was seen on the last
 * detection frame gets a new region meta at its predicted box ("detection"
 * with the last confidence, label and label_id; "object_id" with
 * predicted = TRUE), so the stream keeps its objects between inferences.
 *
 * Which frames the detector ran on (inference-interval):
 *  - N > 0: frames 0, N, 2N, ... counted from PAUSED and from each flush —
 *    m2iinfer's own rule, so the same N on both elements agrees;
 *  - 0 (auto): a frame that carries m2iinfer's tensor meta
 *    (GstM2iTensorMeta: m2iinfer ran on it) or at least one detection region;
 *    other frames were skipped. A detector other than m2iinfer that finds
 *    nothing on a frame looks like a skipped frame to this rule: set N.
 * With tracking-type=zero-term every frame is a detection frame.
 *
 * The buffer's pixels are never touched: only metas are added or changed.
 * Nothing is allocated per frame but the metas and structures themselves.
 */
#include "gstm2ianalytics.h"
#include "gstm2ienums.h"
#include "gstm2iregions.h"
#include "gstm2itensormeta.h"

#include <m2i-core/analytics/m2i-track.h>
#include <gst/base/gstbasetransform.h>
#include <gst/video/video.h>
#include <math.h>

GST_DEBUG_CATEGORY_STATIC (gst_m2i_track_debug);
#define GST_CAT_DEFAULT gst_m2i_track_debug

#define DEFAULT_TRACKING_TYPE GST_M2I_TRACKING_SHORT_TERM
#define DEFAULT_MAX_AGE 30
#define DEFAULT_MIN_HITS 1
#define DEFAULT_IOU_THRESHOLD 0.3
#define DEFAULT_TRACKING_PER_CLASS TRUE
#define DEFAULT_MAX_TRACKS 256
#define DEFAULT_INFERENCE_INTERVAL 0

enum {
  PROP_0,
  PROP_TRACKING_TYPE,
  PROP_MAX_AGE,
  PROP_MIN_HITS,
  PROP_IOU_THRESHOLD,
  PROP_TRACKING_PER_CLASS,
  PROP_MAX_TRACKS,
  PROP_INFERENCE_INTERVAL,
};

typedef struct {
  GstBaseTransform parent;

  /* properties (object lock) */
  GstM2iTrackingType tracking_type;
  guint max_age, min_hits, max_tracks, interval;
  gdouble iou_threshold;
  gboolean per_class;

  /* from start to stop (streaming thread) */
  M2iTracker *tracker;
  M2iTrackBox *dets;                      /* max_tracks */
  GstVideoRegionOfInterestMeta **rois;    /* max_tracks: the region of each detection */
  gint *slots;                            /* max_tracks */
  GQuark *slot_label;                     /* per track slot: the label it was last seen with */
  gint width, height;
  guint64 since_flush;                    /* frames since PAUSED or the last flush */
} GstM2iTrack;

typedef struct {
  GstBaseTransformClass parent_class;
} GstM2iTrackClass;

GType gst_m2i_track_get_type (void);
G_DEFINE_TYPE (GstM2iTrack, gst_m2i_track, GST_TYPE_BASE_TRANSFORM);
GST_ELEMENT_REGISTER_DEFINE (m2itrack, "m2itrack", GST_RANK_NONE, gst_m2i_track_get_type ());

static GstStaticPadTemplate sink_template = GST_STATIC_PAD_TEMPLATE ("sink", GST_PAD_SINK,
    GST_PAD_ALWAYS, GST_STATIC_CAPS ("video/x-raw(ANY)"));
static GstStaticPadTemplate src_template = GST_STATIC_PAD_TEMPLATE ("src", GST_PAD_SRC,
    GST_PAD_ALWAYS, GST_STATIC_CAPS ("video/x-raw(ANY)"));

/* ---- streaming ----------------------------------------------------------------- */

static gboolean
gst_m2i_track_start (GstBaseTransform *trans)
{
  GstM2iTrack *self = (GstM2iTrack *) trans;
  M2iTrackerParams p;
  m2i_tracker_params_init (&p);
  GST_OBJECT_LOCK (self);
  p.max_tracks = self->max_tracks;
  p.min_hits = self->min_hits;
  p.max_age = self->max_age;
  p.iou_threshold = (float) self->iou_threshold;
  p.per_class = self->per_class;
  GST_OBJECT_UNLOCK (self);
  GError *error = NULL;
  self->tracker = m2i_tracker_new (&p, &error);
  if (!self->tracker) {
    GST_ELEMENT_ERROR (self, LIBRARY, SETTINGS, ("%s", error->message),
        ("check the properties max-tracks, min-hits, max-age and iou-threshold"));
    g_error_free (error);
    return FALSE;
  }
  self->dets = g_new (M2iTrackBox, p.max_tracks);
  self->rois = g_new (GstVideoRegionOfInterestMeta *, p.max_tracks);
  self->slots = g_new (gint, p.max_tracks);
  self->slot_label = g_new0 (GQuark, p.max_tracks);
  self->since_flush = 0;
  self->width = self->height = 0;
  return TRUE;
}

static gboolean
gst_m2i_track_stop (GstBaseTransform *trans)
{
  GstM2iTrack *self = (GstM2iTrack *) trans;
  g_clear_pointer (&self->tracker, m2i_tracker_free);
  g_clear_pointer (&self->dets, g_free);
  g_clear_pointer (&self->rois, g_free);
  g_clear_pointer (&self->slots, g_free);
  g_clear_pointer (&self->slot_label, g_free);
  return TRUE;
}

static gboolean
gst_m2i_track_set_caps (GstBaseTransform *trans, GstCaps *incaps, GstCaps *outcaps)
{
  GstM2iTrack *self = (GstM2iTrack *) trans;
  return gst_m2i_caps_frame_size (GST_ELEMENT (self), incaps, &self->width, &self->height);
}

static gboolean
gst_m2i_track_sink_event (GstBaseTransform *trans, GstEvent *event)
{
  GstM2iTrack *self = (GstM2iTrack *) trans;
  if (GST_EVENT_TYPE (event) == GST_EVENT_FLUSH_STOP && self->tracker) {
    /* a seek: the scene jumps, the tracks mean nothing any more (ids keep
     * counting: never given twice) */
    m2i_tracker_reset (self->tracker);
    self->since_flush = 0;
  }
  return GST_BASE_TRANSFORM_CLASS (gst_m2i_track_parent_class)->sink_event (trans, event);
}

/* The detection regions of @buf into self->dets / self->rois; their number. */
static guint
collect_detections (GstM2iTrack *self, GstBuffer *buf)
{
  guint n = 0, cap = m2i_tracker_get_capacity (self->tracker);
  gpointer state = NULL;
  GstMeta *m;
  while (n < cap && (m = gst_buffer_iterate_meta_filtered (buf, &state,
              GST_VIDEO_REGION_OF_INTEREST_META_API_TYPE))) {
    GstVideoRegionOfInterestMeta *roi = (GstVideoRegionOfInterestMeta *) m;
    GstStructure *det = gst_m2i_region_detection (roi);
    if (!det)
      continue;
    double b[4];
    gst_m2i_region_box (roi, self->width, self->height, b);
    gint label_id;
    gdouble conf = 1.0;
    if (!gst_structure_get_int (det, "label_id", &label_id))
      label_id = -1 - (gint) roi->roi_type;   /* no id: the label tells classes apart */
    gst_structure_get_double (det, "confidence", &conf);
    self->dets[n] = (M2iTrackBox) { .x = (float) b[0], .y = (float) b[1],
      .w = (float) (b[2] - b[0]), .h = (float) (b[3] - b[1]), .class_id = label_id,
      .confidence = (float) conf };
    self->rois[n++] = roi;
  }
  return n;
}

static double
clamp01 (double v)
{
  return v < 0.0 ? 0.0 : v > 1.0 ? 1.0 : v;
}

/* A region meta at the predicted box of @tr (slot @slot); nothing when the
 * box leaves no pixel of the frame. */
static void
add_predicted_region (GstM2iTrack *self, GstBuffer *buf, guint slot, const M2iTrack *tr)
{
  double W = self->width, H = self->height;
  double n[4] = { clamp01 (tr->box.x / W), clamp01 (tr->box.y / H),
    clamp01 ((tr->box.x + tr->box.w) / W), clamp01 ((tr->box.y + tr->box.h) / H) };
  double x0 = floor (n[0] * W + 0.5), y0 = floor (n[1] * H + 0.5);
  double x1 = floor (n[2] * W + 0.5), y1 = floor (n[3] * H + 0.5);
  if (x1 <= x0 || y1 <= y0)
    return;
  GQuark label = self->slot_label[slot];
  GstVideoRegionOfInterestMeta *roi = gst_buffer_add_video_region_of_interest_meta_id (buf,
      label, (guint) x0, (guint) y0, (guint) (x1 - x0), (guint) (y1 - y0));
  GstStructure *det = gst_structure_new ("detection",
      "x_min", G_TYPE_DOUBLE, n[0], "x_max", G_TYPE_DOUBLE, n[2],
      "y_min", G_TYPE_DOUBLE, n[1], "y_max", G_TYPE_DOUBLE, n[3],
      "confidence", G_TYPE_DOUBLE, (double) tr->box.confidence, NULL);
  if (tr->box.class_id >= 0)
    gst_structure_set (det, "label_id", G_TYPE_INT, tr->box.class_id, NULL);
  if (label)
    gst_structure_set (det, "label", G_TYPE_STRING, g_quark_to_string (label), NULL);
  gst_video_region_of_interest_meta_add_param (roi, det);
  gst_m2i_region_set_object_id (roi, (gint) MIN (tr->id, (guint64) G_MAXINT), TRUE);
}

static GstFlowReturn
gst_m2i_track_transform_ip (GstBaseTransform *trans, GstBuffer *buf)
{
  GstM2iTrack *self = (GstM2iTrack *) trans;
  if (self->width <= 0 || self->height <= 0) {
    GST_ELEMENT_ERROR (self, CORE, NEGOTIATION, ("m2itrack got a buffer before its caps"),
        (NULL));
    return GST_FLOW_NOT_NEGOTIATED;
  }
  GST_OBJECT_LOCK (self);
  GstM2iTrackingType type = self->tracking_type;
  guint interval = self->interval;
  GST_OBJECT_UNLOCK (self);

  guint n = collect_detections (self, buf);
  gboolean detected;
  if (type == GST_M2I_TRACKING_ZERO_TERM)
    detected = TRUE;
  else if (interval > 0)
    detected = self->since_flush % interval == 0;
  else
    detected = n > 0 || gst_buffer_get_m2i_tensor_meta (buf) != NULL;
  self->since_flush++;

  if (detected) {
    m2i_tracker_update (self->tracker, self->dets, n, self->slots);
    for (guint i = 0; i < n; i++) {
      if (self->slots[i] < 0)
        continue;
      const M2iTrack *tr = m2i_tracker_get_track (self->tracker, (guint) self->slots[i]);
      self->slot_label[self->slots[i]] = self->rois[i]->roi_type;
      if (tr->confirmed)
        gst_m2i_region_set_object_id (self->rois[i], (gint) MIN (tr->id, (guint64) G_MAXINT),
            FALSE);
    }
    GST_LOG_OBJECT (self, "detection frame: %u objects, %u tracks", n,
        m2i_tracker_n_tracks (self->tracker));
    return GST_FLOW_OK;
  }

  /* short-term (zero-term has no skipped frames) */
  m2i_tracker_predict (self->tracker);
  guint added = 0;
  for (guint s = 0; s < m2i_tracker_get_capacity (self->tracker); s++) {
    const M2iTrack *tr = m2i_tracker_get_track (self->tracker, s);
    if (tr && tr->confirmed && !tr->lost) {
      add_predicted_region (self, buf, s, tr);
      added++;
    }
  }
  GST_LOG_OBJECT (self, "skipped frame: %u predicted regions, %u tracks", added,
      m2i_tracker_n_tracks (self->tracker));
  return GST_FLOW_OK;
}

/* ---- properties ------------------------------------------------------------------ */

static void
gst_m2i_track_set_property (GObject *object, guint prop_id, const GValue *value,
    GParamSpec *pspec)
{
  GstM2iTrack *self = (GstM2iTrack *) object;
  GST_OBJECT_LOCK (self);
  switch (prop_id) {
    case PROP_TRACKING_TYPE:
      self->tracking_type = g_value_get_enum (value);
      break;
    case PROP_MAX_AGE:
      self->max_age = g_value_get_uint (value);
      break;
    case PROP_MIN_HITS:
      self->min_hits = g_value_get_uint (value);
      break;
    case PROP_IOU_THRESHOLD:
      self->iou_threshold = g_value_get_double (value);
      break;
    case PROP_TRACKING_PER_CLASS:
      self->per_class = g_value_get_boolean (value);
      break;
    case PROP_MAX_TRACKS:
      self->max_tracks = g_value_get_uint (value);
      break;
    case PROP_INFERENCE_INTERVAL:
      self->interval = g_value_get_uint (value);
      break;
    default:
      G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec);
      break;
  }
  GST_OBJECT_UNLOCK (self);
}

static void
gst_m2i_track_get_property (GObject *object, guint prop_id, GValue *value, GParamSpec *pspec)
{
  GstM2iTrack *self = (GstM2iTrack *) object;
  GST_OBJECT_LOCK (self);
  switch (prop_id) {
    case PROP_TRACKING_TYPE:
      g_value_set_enum (value, self->tracking_type);
      break;
    case PROP_MAX_AGE:
      g_value_set_uint (value, self->max_age);
      break;
    case PROP_MIN_HITS:
      g_value_set_uint (value, self->min_hits);
      break;
    case PROP_IOU_THRESHOLD:
      g_value_set_double (value, self->iou_threshold);
      break;
    case PROP_TRACKING_PER_CLASS:
      g_value_set_boolean (value, self->per_class);
      break;
    case PROP_MAX_TRACKS:
      g_value_set_uint (value, self->max_tracks);
      break;
    case PROP_INFERENCE_INTERVAL:
      g_value_set_uint (value, self->interval);
      break;
    default:
      G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec);
      break;
  }
  GST_OBJECT_UNLOCK (self);
}

static void
gst_m2i_track_class_init (GstM2iTrackClass *klass)
{
  GObjectClass *gobject_class = G_OBJECT_CLASS (klass);
  GstElementClass *element_class = GST_ELEMENT_CLASS (klass);
  GstBaseTransformClass *trans_class = GST_BASE_TRANSFORM_CLASS (klass);
  GParamFlags flags = G_PARAM_READWRITE | G_PARAM_STATIC_STRINGS;
  GParamFlags ready = flags | GST_PARAM_MUTABLE_READY;

  GST_DEBUG_CATEGORY_INIT (gst_m2i_track_debug, "m2itrack", 0, "m2i object tracker");
  gobject_class->set_property = gst_m2i_track_set_property;
  gobject_class->get_property = gst_m2i_track_get_property;

  g_object_class_install_property (gobject_class, PROP_TRACKING_TYPE,
      g_param_spec_enum ("tracking-type", "Tracking type", "zero-term: the detector runs on "
          "every frame, ids go on the detected regions only. short-term: on frames the "
          "detector skipped (see inference-interval) every confirmed track seen on the last "
          "detection frame gets a region at its predicted box (object_id predicted=true). "
          "Applies at once", GST_TYPE_M2I_TRACKING_TYPE, DEFAULT_TRACKING_TYPE,
          flags | GST_PARAM_MUTABLE_PLAYING));
  g_object_class_install_property (gobject_class, PROP_MAX_AGE,
      g_param_spec_uint ("max-age", "Maximum age", "Frames (skipped ones included) a "
          "confirmed track lives on without a matching detection, e.g. through an "
          "occlusion, before it is deleted; keep it above the detector's "
          "inference-interval. Applies from the next READY->PAUSED", 1, G_MAXINT,
          DEFAULT_MAX_AGE, ready));
  g_object_class_install_property (gobject_class, PROP_MIN_HITS,
      g_param_spec_uint ("min-hits", "Minimum hits", "Detection frames in a row a new object "
          "must be matched on before its track is confirmed and it gets an id (1: at once; "
          "SORT uses 3 to skip flickering false detections). Applies from the next "
          "READY->PAUSED", 1, G_MAXINT, DEFAULT_MIN_HITS, ready));
  g_object_class_install_property (gobject_class, PROP_IOU_THRESHOLD,
      g_param_spec_double ("iou-threshold", "IoU threshold", "Smallest intersection over "
          "union of a track's predicted box and a detection for them to match (the "
          "assignment maximises the total IoU, Hungarian algorithm). Applies from the next "
          "READY->PAUSED", 0.01, 1.0, DEFAULT_IOU_THRESHOLD, ready));
  g_object_class_install_property (gobject_class, PROP_TRACKING_PER_CLASS,
      g_param_spec_boolean ("tracking-per-class", "Tracking per class", "A detection only "
          "matches a track of its class (the detection's label_id, else its label), as "
          "gvatrack's tracking_per_class. Applies from the next READY->PAUSED",
          DEFAULT_TRACKING_PER_CLASS, ready));
  g_object_class_install_property (gobject_class, PROP_MAX_TRACKS,
      g_param_spec_uint ("max-tracks", "Maximum tracks", "Tracks alive at once, and "
          "detections taken per frame (the first ones; detectors give them best first). "
          "Memory grows with its square (the assignment's cost matrix). Applies from the "
          "next READY->PAUSED", 1, M2I_TRACKER_MAX_TRACKS, DEFAULT_MAX_TRACKS, ready));
  g_object_class_install_property (gobject_class, PROP_INFERENCE_INTERVAL,
      g_param_spec_uint ("inference-interval", "Inference interval", "Which frames the "
          "detector ran on, with tracking-type=short-term: N > 0, frames 0, N, 2N, ... counted "
          "from PAUSED and from each flush (set the detector's m2iinfer inference-interval); "
          "0 (auto), frames carrying m2iinfer's tensor meta or a detection region. Applies "
          "at once", 0, G_MAXINT, DEFAULT_INFERENCE_INTERVAL, flags | GST_PARAM_MUTABLE_PLAYING));

  gst_element_class_set_static_metadata (element_class, "M2I object tracker",
      "Filter/Analyzer/Video", "Gives the objects of region-of-interest metas stable ids "
      "across frames (\"object_id\" structure, as DL Streamer's gvatrack): constant-velocity "
      "Kalman prediction, IoU assignment; predicts the objects on frames the detector skipped",
      "m2i");
  gst_element_class_add_static_pad_template (element_class, &sink_template);
  gst_element_class_add_static_pad_template (element_class, &src_template);
  gst_type_mark_as_plugin_api (GST_TYPE_M2I_TRACKING_TYPE, 0);

  trans_class->start = GST_DEBUG_FUNCPTR (gst_m2i_track_start);
  trans_class->stop = GST_DEBUG_FUNCPTR (gst_m2i_track_stop);
  trans_class->set_caps = GST_DEBUG_FUNCPTR (gst_m2i_track_set_caps);
  trans_class->sink_event = GST_DEBUG_FUNCPTR (gst_m2i_track_sink_event);
  trans_class->transform_ip = GST_DEBUG_FUNCPTR (gst_m2i_track_transform_ip);
}

static void
gst_m2i_track_init (GstM2iTrack *self)
{
  self->tracking_type = DEFAULT_TRACKING_TYPE;
  self->max_age = DEFAULT_MAX_AGE;
  self->min_hits = DEFAULT_MIN_HITS;
  self->iou_threshold = DEFAULT_IOU_THRESHOLD;
  self->per_class = DEFAULT_TRACKING_PER_CLASS;
  self->max_tracks = DEFAULT_MAX_TRACKS;
  self->interval = DEFAULT_INFERENCE_INTERVAL;
  gst_base_transform_set_in_place (GST_BASE_TRANSFORM (self), TRUE);
}
