/* infer-private.h — what the files of m2i-core/infer/ share (not installed).
 *
 *   infer-model.c       M2iInferModel: loading for a device, input analysis
 *   infer-labels.c      the labels file
 *   infer-session.c     M2iInferSession: request, run, decode, outputs
 *   infer-roi.c         M2iInferRoi: the regions of a frame through a session
 *   infer-preprocess.c  the M2I plan into the model's input, its geometry
 *   infer-result.c      M2iInferResult, M2iInferGeometry
 *   decode*.c           decoders (decode-private.h)
 */
#pragma once

#include <infer/m2i-infer.h>

G_BEGIN_DECLS

struct _M2iInferModel {
  gint ref_count;
  M2iIrModel *ir;
  /* CPU: the compiled model (requests are the sessions') */
  M2iIrCompiledModel *cm;
  /* M2I / HETERO: the split plan (runners are the sessions') */
  M2iSplitPlan *plan;
  gboolean has_head;
  M2iSplitHead head;
  gint n_threads;
  gchar *device;
  gchar *description;
  M2iInferInputKind input_kind;
  gint width, height;
  gchar **labels;
  guint n_labels;
  M2iDecoderOptions decoder;      /* labels point into @labels */
  /* The request made at load (proof that the model runs), handed to the
   * first session: exactly one of them is set until then. */
  M2iIrInferRequest *spare_req;
  M2iSplitRunner *spare_runner;
};

/* A request to run @m: the one made at load the first time, then new ones.
 * Exactly one of *@req (CPU) and *@runner (split) is set on TRUE. */
gboolean infer_model_take_request (M2iInferModel *m, M2iIrInferRequest **req,
    M2iSplitRunner **runner, GError **error);

/* ---- what infer-roi.c uses of a session (infer-session.c) ------------------- */

/* The session's pre-processing settings and its normalisation (NULL: none). */
void infer_session_get_preprocess (const M2iInferSession *s, M2iInferPreprocess *pp,
    const M2iNormParams **norm);

/* The planar image the pre-processing fills: the model's input 0, or the
 * head's output buffer of a split plan. FALSE with @error. */
gboolean infer_session_model_image (M2iInferSession *s, M2iImage *img, GError **error);

/* Runs the model (@after_head: the image path of a split plan with a head,
 * whose output the pre-processing wrote) and decodes its outputs for
 * @geometry into the session's result. FALSE with @error. */
gboolean infer_session_infer_and_decode (M2iInferSession *s, gboolean after_head,
    const M2iInferGeometry *geometry, GError **error);

/* ---- pre-processing (infer-preprocess.c) ------------------------------------ */

/* What a session's pre-processing needs to know, filled by
 * infer_preprocess_build(). */
typedef struct {
  M2iOpList ops;                  /* queued + the model's */
  M2iFormat format;               /* what the ops (and the letterbox) produce */
  gboolean direct;                /* the plan writes the model's input itself */
  gboolean swap;                  /* planes to swap into the model's channel order */
  M2iChannelOrder order;          /* the model's channel order */
  M2iInferGeometry geometry;      /* model input -> source pixels */
} InferPreprocessPlan;

/*
 * The ops that turn @source (with @queued ops and @letterbox) into the
 * input image of @m (IMAGE kind), whose planar type is @target_dtype, under
 * @pp and its normalisation @norm (NULL: none), into @out. FALSE with
 * @error when they do not fit into one plan or do not end in the planar
 * float tensor the model takes.
 */
gboolean infer_preprocess_build (const M2iInferModel *m, const M2iInferPreprocess *pp,
    const M2iNormParams *norm, M2iDataType target_dtype, const M2iImage *source,
    const M2iOpList *queued, const M2iLetterbox *letterbox, InferPreprocessPlan *out,
    GError **error);

/* Converts the planar image @src into @dst (same size and channel order,
 * fp16 <-> fp32), plane by plane, row by row. */
void infer_convert_planes (const M2iImage *src, const M2iImage *dst);

/* Swaps planes 0 and 2 of @img (the channel order of a planar image). */
void infer_swap_planes (M2iImage *img);

G_END_DECLS
