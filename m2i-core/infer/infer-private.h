/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* infer-private.h — what the files of m2i-core/infer/ share (not installed).
 *
 *   infer-model.c       M2iInferModel: loading for a device, input analysis
 *   infer-labels.c      the labels file
 *   infer-session.c     M2iInferSession: request, run, decode, outputs
 *   infer-batch.c       a session's slot of a batched request: its input
 *                       slice, its item of the outputs
 *   infer-registry.c    shared model instances (model-instance-id)
 *   infer-queue.c       M2iInferQueue: asynchronous requests on the device,
 *                       frames gathered into batches, results in order
 *   infer-roi.c         M2iInferRoi: the regions of a frame through a session
 *   infer-preprocess.c  the M2I plan into the model's input, its geometry
 *   infer-input.c       the image input (layout, channels, type), writing
 *                       it, the model's other inputs
 *   infer-result.c      M2iInferResult, M2iInferGeometry
 *   decode*.c           decoders (decode-private.h)
 */
#pragma once

#include <infer/m2i-infer.h>

G_BEGIN_DECLS

/* The most frames one inference takes (a model's input batch). */
#define INFER_MAX_BATCH 256

/* How output @i of a batched model holds one frame's result. */
typedef enum {
  INFER_OUT_WHOLE,        /* batch 1: the output as it is */
  INFER_OUT_SLICE,        /* dims[0] is the batch: item k is slice k */
  INFER_OUT_DETECTIONS,   /* DetectionOutput [1,1,R,7]: the rows whose image_id is k */
} InferOutputKind;

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
  guint64 max_memory;            /* M2iInferModelOptions.max_memory */
  gchar *device;
  gchar *description;
  M2iInferInputKind input_kind;
  gint width, height;
  gint batch;                     /* frames per inference (the input's dims[0]) */
  InferOutputKind *out_kind;      /* per output */
  gchar *instance_id;             /* registered (infer-registry.c), else NULL */
  gchar *key;                     /* what it was loaded with, for the registry */
  /* what the asynchronous queues on it share (infer-queue.c), made with
   * the first queue; under queue_lock */
  GMutex queue_lock;
  struct _InferGatherer *gatherer;
  M2iInferImageInput image;       /* IMAGE without a head: which input, how */
  gchar *input_note;              /* TENSORS: why no input takes images */
  M2iModelInfo *info;             /* the <rt_info> metadata */
  gchar **labels;
  guint n_labels;
  gboolean labels_given;          /* from the options (else the model's own) */
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

/* Fills m->out_kind for m->batch; FALSE with @error naming an output that
 * has no per-frame part. */
gboolean infer_model_check_batch (M2iInferModel *m, GError **error);

/* Registry (infer-registry.c): counts a successful load; drops a
 * registered model's reference under the registry's lock, TRUE when it was
 * the last (the model is no longer registered). */
void infer_registry_count_load (void);
gboolean infer_registry_release (M2iInferModel *m);

/* Frees what the queues on @m shared (infer-queue.c); its last unref. */
void infer_queue_model_cleanup (M2iInferModel *m);

/* ---- the image input (infer-input.c) ---------------------------------------- */

/* The first input of @ir that takes an image (rank 4, 1 or 3 channels
 * first or last, f32/f16/u8/i8, a batch of @want_batch frames — 0: any up
 * to INFER_MAX_BATCH; the layout from @info when the shape leaves it open)
 * into @img, its size and *@batch; FALSE with *@why (g_free) when there is
 * none. */
gboolean infer_input_find_image (M2iIrModel *ir, const M2iModelInfo *info, guint want_batch,
    M2iInferImageInput *img, gint *width, gint *height, gint *batch, gchar **why);

/* Writes the planar image @src (1 or 3 planes of u8/fp16/fp32 in the
 * model's channel order, the input's size) into the image input tensor @t:
 * its layout and type (u8/i8 rounded to nearest even and saturated), one
 * plane repeated into three channels. @row: room for one row of fp32. */
void infer_input_write (const M2iInferImageInput *img, const M2iImage *src, M2iTensor *t,
    float *row);

/* ---- what infer-roi.c uses of a session (infer-session.c) ------------------- */

/* The session's pre-processing settings and its normalisation (NULL: none). */
void infer_session_get_preprocess (const M2iInferSession *s, M2iInferPreprocess *pp,
    const M2iNormParams **norm);

/* The type the session's pre-processing writes (what to build plans for). */
M2iDataType infer_session_target_dtype (M2iInferSession *s);

/* A staging image (planar, in the model's channel order, the model's size)
 * into the model's input: its layout and type. FALSE with @error. */
gboolean infer_session_write_staged (M2iInferSession *s, const M2iImage *staged,
    GError **error);

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
  guint channels;                 /* of format: 1 (gray) or 3 */
  /* The session's own letterbox (pre-processing resize_type), inactive when
   * it has none (an upstream chain's letterbox is the caller's). */
  M2iLetterbox letterbox;
  gboolean direct;                /* the plan writes the model's input itself */
  gboolean swap;                  /* planes to swap into the model's channel order */
  M2iChannelOrder order;          /* the model's channel order */
  M2iInferGeometry geometry;      /* model input -> source pixels */
} InferPreprocessPlan;

/*
 * The ops that turn @source (with @queued ops and @letterbox) into the
 * input image of @m (IMAGE kind) under @pp and its normalisation @norm
 * (NULL: none), into @out: planar, of @target_dtype (u8: no convert, no
 * norm), with the model's channels (a gray source into a 3-channel input
 * stays one channel: out->channels). FALSE with @error when they do not
 * fit into one plan or do not end in a planar image.
 */
gboolean infer_preprocess_build (const M2iInferModel *m, const M2iInferPreprocess *pp,
    const M2iNormParams *norm, M2iDataType target_dtype, const M2iImage *source,
    const M2iOpList *queued, const M2iLetterbox *letterbox, InferPreprocessPlan *out,
    GError **error);

/* Copies the planar image @src into @dst (same size and channel order;
 * fp16 <-> fp32 converted), plane by plane, row by row. */
void infer_convert_planes (const M2iImage *src, const M2iImage *dst);

/* Swaps planes 0 and 2 of @img (the channel order of a planar image). */
void infer_swap_planes (M2iImage *img);

G_END_DECLS

/* ---- slots of a batched request (infer-batch.c) ------------------------------ */

/* A session without a request of its own (m2i_infer_session_new makes one
 * with a request): infer_session_bind() gives it one slot of a request
 * before each run. NULL with @error when the decoder does not fit. */
M2iInferSession *infer_session_new_unbound (M2iInferModel *model, GError **error);

/* Binds @s to item @slot of the request @req (CPU) or @runner (split), one
 * of them NULL: the pre-processing writes that slice of input 0, the
 * outputs read back are that item's. */
void infer_session_bind (M2iInferSession *s, M2iIrInferRequest *req, M2iSplitRunner *runner,
    gint slot);

/* The pre-processing of one frame into the bound slot (see
 * m2i_infer_session_run) without running the model. */
gboolean infer_session_preprocess (M2iInferSession *s, const M2iImage *source,
    const M2iOpList *queued, const M2iLetterbox *letterbox, GError **error);

/* Decodes the bound slot's item of the outputs the request holds (after it
 * ran) into the session's result. */
gboolean infer_session_decode (M2iInferSession *s, GError **error);

/* The slot's part of output @i of the request into *@dst: a view (whole,
 * slice) or the slot's rows copied into @rows (detections: R rows of 7
 * floats, what the decoders made for the model read); after decoding,
 * infer_batch_output_done() makes it the shape of a batch of one (the
 * first R / batch rows). */
void infer_batch_output (const M2iInferModel *m, gint i, const M2iTensor *full, gint slot,
    float *rows, M2iTensor *dst);
void infer_batch_output_done (const M2iInferModel *m, gint i, M2iTensor *t);

/* Slot @slot of input 0 of the request (@t, the whole tensor) as a tensor
 * of one frame. */
void infer_batch_input_slot (const M2iInferModel *m, const M2iTensor *t, gint slot,
    M2iTensor *dst);

/* Runs the model once on what the request's inputs hold. */
gboolean infer_request_run (M2iIrInferRequest *req, M2iSplitRunner *runner, gboolean after_head,
    GError **error);
