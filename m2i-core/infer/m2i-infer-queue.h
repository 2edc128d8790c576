/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* m2i-infer-queue.h — many streams on one model: shared model instances,
 * asynchronous inference on the process-wide device, frames of several
 * streams gathered into batches. No GStreamer: m2iinfer's model-instance-id,
 * nireq and batch-size are this, and an application uses it directly.
 *
 *   M2iInferModel *m = m2i_infer_model_acquire ("det", "model.xml", &mo, &error);
 *   M2iInferQueueOptions qo;
 *   m2i_infer_queue_options_init (&qo);
 *   qo.n_requests = 2;
 *   M2iInferQueue *q = m2i_infer_queue_new (m, &qo, on_done, app, &error);
 *   m2i_infer_model_unref (m);                        // the queue holds it
 *   for each frame:
 *     m2i_infer_queue_submit (q, &frame, NULL, NULL, NULL, frame_ctx, TRUE, &error);
 *   m2i_infer_queue_drain (q);                        // every on_done called
 *   m2i_infer_queue_free (q);
 *
 *   static void on_done (M2iInferSession *s, const GError *error, gpointer frame_ctx,
 *       gpointer app) { read m2i_infer_session_get_result (s); release frame_ctx; }
 *
 * A model instance is loaded once per id and shared by reference; each
 * queue on it has its own frames in flight (each with a session: plan,
 * decoder, result) and the instance owns the heavy part, the runtime's
 * requests (activations), one per inference running at a time, so memory
 * grows with the frames in flight, not with the number of streams.
 *
 * Submitting hands the frame to the instance's gatherer: a model of batch
 * 1 runs each frame as a job of the device (m2i-device.h) at once; a model
 * whose input takes N frames waits until N frames (of any queues on the
 * instance) are there or the oldest waited its queue's batch timeout, then
 * runs them as one inference: each frame's pre-processing plan writes its
 * slice of the input, the model runs once, each frame's decoder reads its
 * item of the outputs. Results come back to each queue in the order its
 * frames were submitted.
 */
#pragma once

#include <glib.h>
#include <m2i-core/base/m2i-export.h>
#include <m2i-core/infer/m2i-infer.h>

G_BEGIN_DECLS

/* ---- shared model instances ----------------------------------------------- */

/*
 * The model instance @instance_id: the model loaded under that id (a new
 * reference) when @xml_path and @opts agree with what it was loaded with,
 * else loaded now (m2i_infer_model_load()) and registered under the id
 * until its last reference is dropped. @instance_id NULL or "" loads a
 * model of its own. What must agree: the model file (compared by its real
 * path), device, labels file, n_threads, split_dir, batch and the decoder's
 * type and max_detections. Thread-safe.
 * Returns the model (m2i_infer_model_unref()), or NULL with @error: the
 * load's errors, or M2I_ERROR_INVALID_ARGUMENT when the id is in use with
 * other settings — the message names the first setting that differs by
 * m2iinfer's property name and gives both values.
 */
M2I_API M2iInferModel *m2i_infer_model_acquire (const char *instance_id, const char *xml_path,
    const M2iInferModelOptions *opts, GError **error);

/* The id @model was acquired under, or NULL. Owned by the model. */
M2I_API const char *m2i_infer_model_get_instance_id (const M2iInferModel *model);

/* How many models this process has loaded (successful
 * m2i_infer_model_load() calls, including those of acquire), for tests and
 * statistics. */
M2I_API guint m2i_infer_model_get_n_loaded (void);

/* ---- one frame through the device queue ------------------------------------ */

/*
 * m2i_infer_session_run() as a job of the process-wide device queue
 * (m2i-device.h): queued behind the other pipelines' work, run on an engine
 * thread, waited for; the same results and errors. What m2iinfer does for
 * each frame when it runs synchronously, so that every pipeline's
 * inference goes through one queue. Must not be called from an engine
 * thread (a device job or fence callback): it would wait for itself.
 */
M2I_API gboolean m2i_infer_session_run_queued (M2iInferSession *s, const M2iImage *source,
    const M2iOpList *queued, const M2iLetterbox *letterbox, GError **error);

/* ---- asynchronous queues -------------------------------------------------- */

typedef struct _M2iInferQueue M2iInferQueue;

typedef struct {
  /* Frames of this queue in flight at once (submitted, not yet handed back
   * through the done callback), >= 1: DL Streamer's nireq. */
  guint n_requests;
  /* Batched models: the longest a frame of this queue waits for the batch
   * to fill (microseconds, >= 0) before the batch runs with fewer frames. */
  gint64 batch_timeout_us;
} M2iInferQueueOptions;

/* Defaults: 1 request, a batch timeout of 30 ms. */
M2I_API void m2i_infer_queue_options_init (M2iInferQueueOptions *opts);

/*
 * Called once for every submitted frame, in the order the frames were
 * submitted to the queue, on a device engine thread (or on the thread that
 * made the frame's fate known: drain, flushing): @session holds the frame's
 * result, outputs and description — read them here, the session serves
 * another frame once this returns; @error is NULL on success, else why the
 * frame has no result (its pre-processing or the inference failed; or
 * M2I_ERROR_CANCELLED: the queue was set flushing before it ran).
 * @frame_data is the submit's. Must not block for long, submit to or drain
 * this queue.
 */
typedef void (*M2iInferDoneFunc) (M2iInferSession *session, const GError *error,
    gpointer frame_data, gpointer user_data);

/*
 * A queue on @model (referenced) whose frames are handed back to @done with
 * @user_data. Makes the queue's sessions (one per request: the plan cache,
 * decoder and result of a frame) now. NULL with @error when the model takes
 * no images (TENSORS), n_requests is 0, the timeout is negative, or a
 * session cannot be made (the decoder does not fit). Free with
 * m2i_infer_queue_free().
 */
M2I_API M2iInferQueue *m2i_infer_queue_new (M2iInferModel *model,
    const M2iInferQueueOptions *opts, M2iInferDoneFunc done, gpointer user_data,
    GError **error);

/* Sets flushing (cancelling what has not run), drains, frees. */
M2I_API void m2i_infer_queue_free (M2iInferQueue *queue);

M2I_API M2iInferModel *m2i_infer_queue_get_model (const M2iInferQueue *queue);

/* A session of the queue that never runs, to read what is the same for
 * every frame: the model, the decoder (type, description) and the result's
 * capacities. Owned by the queue; do not run it or change its settings. */
M2I_API M2iInferSession *m2i_infer_queue_get_template (M2iInferQueue *queue);

/* The pre-processing of frames submitted from now on (see
 * m2i_infer_session_set_preprocess()); FALSE with @error, the previous
 * settings kept, when refused. */
M2I_API gboolean m2i_infer_queue_set_preprocess (M2iInferQueue *queue,
    const M2iInferPreprocess *pp, GError **error);

typedef enum {
  M2I_INFER_SUBMITTED,    /* the frame will come back through the done callback */
  M2I_INFER_BUSY,         /* no request free and @block FALSE: nothing done */
  M2I_INFER_FLUSHING,     /* the queue is flushing: nothing done */
} M2iInferSubmitResult;

/*
 * Hands one frame over and returns: @source (real pixels, any strides;
 * they must stay valid and unchanged until the frame's done callback),
 * @queued and @letterbox (copied; NULL: none), as for
 * m2i_infer_session_run(); @decoder (copied; NULL: as before) the
 * thresholds and top-k to decode it with; @frame_data handed to the done
 * callback. When all n_requests are in flight, waits for one to come back
 * (@block) or returns M2I_INFER_BUSY at once (a live source's "drop the
 * inference, not the frame"). Errors of the frame itself (a format the
 * model cannot take, ...) come back through the done callback.
 * Thread-safe with respect to the queue's other calls; frames of one queue
 * are submitted from one thread at a time for their order to mean anything.
 * Allocates nothing in steady state.
 */
M2I_API M2iInferSubmitResult m2i_infer_queue_submit (M2iInferQueue *queue,
    const M2iImage *source, const M2iOpList *queued, const M2iLetterbox *letterbox,
    const M2iDecoderOptions *decoder, gpointer frame_data, gboolean block);

/* Runs now the frames of this queue waiting for a batch to fill, then waits
 * until every frame submitted has been handed back. */
M2I_API void m2i_infer_queue_drain (M2iInferQueue *queue);

/*
 * @flushing TRUE: frames of this queue that have not started running are
 * handed back with M2I_ERROR_CANCELLED (those running finish), a submit
 * waiting for a request and later submits return M2I_INFER_FLUSHING. Does
 * not wait: m2i_infer_queue_drain() does. FALSE: frames are taken again.
 */
M2I_API void m2i_infer_queue_set_flushing (M2iInferQueue *queue, gboolean flushing);

/* Frames submitted and not yet handed back. */
M2I_API guint m2i_infer_queue_get_n_in_flight (M2iInferQueue *queue);

G_END_DECLS
