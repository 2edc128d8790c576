/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* infer-queue.c — asynchronous inference: queues of frames in flight, the
 * instance's gatherer that runs them as (batched) jobs on the device, and
 * the hand-back in submission order. See m2i-infer-queue.h.
 *
 * A queue owns n_requests frames, each with a session that has no request
 * of its own (plan cache, staging, decoder, result). Submitting moves a free
 * frame to the queue's in-flight list (submission order) and into the
 * model's gatherer, which collects frames of every queue on the model into
 * the open batch; a full batch (or, for batched models, one whose oldest
 * frame waited its timeout: the gatherer's timer thread) becomes one device
 * job. The job takes a request from the gatherer's pool (made on first
 * need), binds each frame's session to its slot, pre-processes each frame
 * into its slice, runs the model once and decodes each frame's item. The
 * job's completion marks its frames done; whichever thread finds the head
 * of a queue's in-flight list done hands frames back from the head while
 * they are done (one deliverer per queue at a time), so each queue sees its
 * frames in order even when batches finish out of order. A frame's outputs
 * are views of its batch's request, so the batch keeps the request until
 * its last frame has been handed back; then the request and the batch go
 * back to the gatherer. Requests are as many as batches between their run
 * and their last hand-back: the engines' count, a few more when batches
 * finish out of order.
 *
 * Locks: queue->lock (its frames, lists, flags), gatherer->lock (open
 * batch, free batches and requests); never both at once. Done callbacks
 * run with neither held.
 */
#include "infer-private.h"
#include "m2i-infer-queue.h"

#include <base/m2i-error.h>
#include <m2i/m2i-device.h>
#include <string.h>

#define DEFAULT_TIMEOUT_US 30000

typedef struct _Frame Frame;
typedef struct _Batch Batch;

struct _Frame {
  M2iInferQueue *q;
  Frame *next;                    /* free list or in-flight list */
  Batch *batch;                   /* the batch it ran in (its outputs are its request's) */
  M2iInferSession *s;
  guint pp_serial;                /* the queue's settings the session has */
  M2iImage source;
  M2iOpList ops;
  M2iLetterbox lb;
  gboolean has_ops, has_lb;
  gpointer data;
  GError *error;                  /* why it has no result */
  gboolean done;                  /* ran or was cancelled; queue->lock */
  gint cancelled;                 /* atomic: the queue was set flushing before it ran */
};

struct _M2iInferQueue {
  M2iInferModel *model;
  struct _InferGatherer *g;
  M2iInferQueueOptions opts;
  M2iInferDoneFunc done;
  gpointer user_data;
  GMutex lock;
  GCond cond;                     /* a frame came back, or flushing */
  Frame *frames;
  Frame *free_list;
  Frame *head, *tail;             /* in flight, in submission order */
  guint n_in_flight;
  gboolean delivering;            /* a thread hands frames back */
  gboolean flushing;
  M2iInferPreprocess pp;
  guint pp_serial;
  M2iInferSession *template;      /* never runs: checks settings, describes frames */
};

struct _Batch {
  struct _InferGatherer *g;
  Batch *next;
  gint n;
  gint64 deadline;                /* monotonic us: run by then */
  M2iIrInferRequest *req;         /* the request it ran on, held until */
  M2iSplitRunner *runner;
  gint pending;                   /* frames not yet handed back (gatherer->lock) */
  Frame *frames[];                /* g->batch */
};

typedef struct _InferGatherer {
  M2iInferModel *model;           /* the gatherer is the model's: not referenced */
  gint batch;
  GMutex lock;
  GCond cond;                     /* the open batch changed, or stop */
  Batch *open;                    /* frames gathering, or NULL */
  Batch *free_batches;
  GThread *timer;                 /* batched models */
  gboolean stop;
  GPtrArray *free_req, *free_runner;   /* requests not running (pairs, one NULL) */
} InferGatherer;

/* ---- requests ------------------------------------------------------------------- */

static gboolean
take_request (InferGatherer *g, M2iIrInferRequest **req, M2iSplitRunner **runner,
    GError **error)
{
  g_mutex_lock (&g->lock);
  guint n = g->free_req->len;
  if (n) {
    *req = g_ptr_array_index (g->free_req, n - 1);
    *runner = g_ptr_array_index (g->free_runner, n - 1);
    g_ptr_array_set_size (g->free_req, n - 1);
    g_ptr_array_set_size (g->free_runner, n - 1);
  }
  g_mutex_unlock (&g->lock);
  /* the first ones: made while frames wait (no more than jobs running) */
  return n || infer_model_take_request (g->model, req, runner, error);
}

/* One more frame of @b handed back: the last gives the request and the
 * batch back to the gatherer. */
static void
batch_release (Batch *b)
{
  InferGatherer *g = b->g;
  g_mutex_lock (&g->lock);
  gboolean last = --b->pending == 0;
  if (last) {
    if (b->req || b->runner) {
      g_ptr_array_add (g->free_req, b->req);
      g_ptr_array_add (g->free_runner, b->runner);
    }
    b->req = NULL;
    b->runner = NULL;
    b->next = g->free_batches;
    g->free_batches = b;
  }
  g_mutex_unlock (&g->lock);
}

/* ---- handing frames back --------------------------------------------------------- */

/* Marks @f done and hands back, in order, what is done at the head of its
 * queue (unless another thread already does). Touches nothing of the queue
 * after the lock is released for the last time: a drain may be waiting to
 * free it. */
static void
frame_done (Frame *f)
{
  M2iInferQueue *q = f->q;
  g_mutex_lock (&q->lock);
  f->done = TRUE;
  if (q->delivering) {
    g_mutex_unlock (&q->lock);
    return;
  }
  q->delivering = TRUE;
  while (q->head && q->head->done) {
    Frame *h = q->head;
    q->head = h->next;
    if (!q->head)
      q->tail = NULL;
    g_mutex_unlock (&q->lock);
    q->done (h->s, h->error, h->data, q->user_data);
    g_clear_error (&h->error);
    h->data = NULL;
    /* before the frame counts as back: a drain may then free the queue,
     * and with it the model and its gatherer */
    if (h->batch)
      batch_release (g_steal_pointer (&h->batch));
    g_mutex_lock (&q->lock);
    h->next = q->free_list;
    q->free_list = h;
    q->n_in_flight--;
  }
  q->delivering = FALSE;
  g_cond_broadcast (&q->cond);
  g_mutex_unlock (&q->lock);
}

static void
set_cancelled (Frame *f)
{
  if (!f->error)
    f->error = g_error_new (M2I_ERROR, M2I_ERROR_CANCELLED,
        "the frame's inference was cancelled (flushing) before it ran");
}

/* ---- batches as device jobs -------------------------------------------------------- */

static gboolean
batch_job (gpointer data, GError **error)
{
  Batch *b = data;
  InferGatherer *g = b->g;
  M2iIrInferRequest *req = NULL;
  M2iSplitRunner *runner = NULL;
  GError *e = NULL;
  gint live = 0;
  for (gint k = 0; k < b->n; k++)
    live += !g_atomic_int_get (&b->frames[k]->cancelled);
  if (!live) {
    for (gint k = 0; k < b->n; k++)
      set_cancelled (b->frames[k]);
    return TRUE;
  }
  if (!take_request (g, &req, &runner, &e)) {
    for (gint k = 0; k < b->n; k++)
      b->frames[k]->error = g_error_copy (e);
    g_error_free (e);
    return TRUE;
  }
  b->req = req;
  b->runner = runner;
  gint ready = 0;
  for (gint k = 0; k < b->n; k++) {
    Frame *f = b->frames[k];
    if (g_atomic_int_get (&f->cancelled)) {
      set_cancelled (f);
      continue;
    }
    infer_session_bind (f->s, req, runner, k);
    ready += infer_session_preprocess (f->s, &f->source, f->has_ops ? &f->ops : NULL,
        f->has_lb ? &f->lb : NULL, &f->error);
  }
  if (ready && !infer_request_run (req, runner, g->model->has_head, &e)) {
    for (gint k = 0; k < b->n; k++)
      if (!b->frames[k]->error)
        b->frames[k]->error = g_error_copy (e);
    g_clear_error (&e);
  } else if (ready) {
    for (gint k = 0; k < b->n; k++)
      if (!b->frames[k]->error)
        infer_session_decode (b->frames[k]->s, &b->frames[k]->error);
  }
  return TRUE;
}

/* After the job: its frames are handed back (the batch stays until the
 * last of them is). */
static void
batch_done (M2iFence *fence, const GError *error, gpointer data)
{
  Batch *b = data;
  Frame *frames[INFER_MAX_BATCH];
  gint n = b->n;
  memcpy (frames, b->frames, n * sizeof (Frame *));
  for (gint k = 0; k < n; k++) {
    if (error && !frames[k]->error)
      frames[k]->error = g_error_copy (error);
    frame_done (frames[k]);
  }
}

static void
run_batch (Batch *b)
{
  b->pending = b->n;
  for (gint k = 0; k < b->n; k++)
    b->frames[k]->batch = b;
  m2i_fence_unref (m2i_device_submit_job (NULL, batch_job, b, batch_done, b));
}

/* Takes the open batch when @q has a frame in it (any queue if NULL);
 * gatherer->lock held. */
static Batch *
take_open_locked (InferGatherer *g, M2iInferQueue *q)
{
  Batch *b = g->open;
  if (!b)
    return NULL;
  gboolean mine = !q;
  for (gint k = 0; k < b->n && !mine; k++)
    mine = b->frames[k]->q == q;
  if (!mine)
    return NULL;
  g->open = NULL;
  return b;
}

static gpointer
timer_main (gpointer data)
{
  InferGatherer *g = data;
  g_mutex_lock (&g->lock);
  while (!g->stop) {
    if (!g->open) {
      g_cond_wait (&g->cond, &g->lock);
    } else if (g_get_monotonic_time () >= g->open->deadline) {
      Batch *b = take_open_locked (g, NULL);
      g_mutex_unlock (&g->lock);
      run_batch (b);
      g_mutex_lock (&g->lock);
    } else {
      g_cond_wait_until (&g->cond, &g->lock, g->open->deadline);
    }
  }
  g_mutex_unlock (&g->lock);
  return NULL;
}

static void
gather (InferGatherer *g, Frame *f, gint64 timeout_us)
{
  g_mutex_lock (&g->lock);
  Batch *b = g->open;
  if (!b) {
    b = g->free_batches;
    if (b)
      g->free_batches = b->next;
    else {
      b = g_malloc (sizeof (Batch) + (gsize) g->batch * sizeof (Frame *));
      b->g = g;
    }
    b->n = 0;
    b->deadline = G_MAXINT64;
    b->req = NULL;
    b->runner = NULL;
    g->open = b;
  }
  b->frames[b->n++] = f;
  if (g->batch > 1)
    b->deadline = MIN (b->deadline, g_get_monotonic_time () + timeout_us);
  /* decided under the lock: once it is released, another submitter or the
   * timer may take the batch */
  gboolean full = b->n == g->batch;
  if (full)
    g->open = NULL;
  else
    g_cond_signal (&g->cond);
  g_mutex_unlock (&g->lock);
  if (full)
    run_batch (b);
}

static InferGatherer *
gatherer_get (M2iInferModel *m)
{
  g_mutex_lock (&m->queue_lock);
  InferGatherer *g = m->gatherer;
  if (!g) {
    g = g_new0 (InferGatherer, 1);
    g->model = m;
    g->batch = m->batch;
    g_mutex_init (&g->lock);
    g_cond_init (&g->cond);
    g->free_req = g_ptr_array_new ();
    g->free_runner = g_ptr_array_new ();
    if (g->batch > 1)
      g->timer = g_thread_new ("m2i-batch", timer_main, g);
    m->gatherer = g;
  }
  g_mutex_unlock (&m->queue_lock);
  return g;
}

void
infer_queue_model_cleanup (M2iInferModel *m)
{
  InferGatherer *g = m->gatherer;
  if (!g)
    return;
  if (g->timer) {
    g_mutex_lock (&g->lock);
    g->stop = TRUE;
    g_cond_signal (&g->cond);
    g_mutex_unlock (&g->lock);
    g_thread_join (g->timer);
  }
  g_assert (!g->open);            /* every queue drained before it let the model go */
  while (g->free_batches) {
    Batch *b = g->free_batches;
    g->free_batches = b->next;
    g_free (b);
  }
  for (guint i = 0; i < g->free_req->len; i++) {
    if (g_ptr_array_index (g->free_req, i))
      m2i_ir_infer_request_free (g_ptr_array_index (g->free_req, i));
    if (g_ptr_array_index (g->free_runner, i))
      m2i_split_runner_free (g_ptr_array_index (g->free_runner, i));
  }
  g_ptr_array_free (g->free_req, TRUE);
  g_ptr_array_free (g->free_runner, TRUE);
  g_mutex_clear (&g->lock);
  g_cond_clear (&g->cond);
  g_free (g);
  m->gatherer = NULL;
}

/* ---- queues ---------------------------------------------------------------------- */

void
m2i_infer_queue_options_init (M2iInferQueueOptions *opts)
{
  memset (opts, 0, sizeof *opts);
  opts->n_requests = 1;
  opts->batch_timeout_us = DEFAULT_TIMEOUT_US;
}

M2iInferQueue *
m2i_infer_queue_new (M2iInferModel *model, const M2iInferQueueOptions *opts,
    M2iInferDoneFunc done, gpointer user_data, GError **error)
{
  M2iInferQueueOptions defaults;
  if (!opts) {
    m2i_infer_queue_options_init (&defaults);
    opts = &defaults;
  }
  gint n_inputs = m2i_ir_model_get_n_inputs (model->ir);
  if (model->input_kind == M2I_INFER_INPUT_TENSORS) {
    g_set_error (error, M2I_ERROR, M2I_ERROR_INVALID_ARGUMENT, "the model takes no image "
        "(%d inputs, none an image input [N,C,H,W] or [N,H,W,C], no NV12/I420 head)%s%s: "
        "asynchronous inference takes frames; run tensors with "
        "m2i_infer_session_run_inputs()", n_inputs, model->input_note ? ": " : "",
        model->input_note ? model->input_note : "");
    return NULL;
  }
  if (model->input_kind == M2I_INFER_INPUT_IMAGE && n_inputs > 1 && !model->has_head) {
    /* the requests are the instance's, taken per frame: nothing would keep
     * the values of the other inputs */
    g_autofree gchar *inputs = m2i_infer_model_describe_inputs (model);
    g_set_error (error, M2I_ERROR, M2I_ERROR_UNSUPPORTED, "the model has inputs other than "
        "the image (%s): asynchronous, batched and shared inference fill only the image "
        "input; run it with a session of its own (m2iinfer: unset nireq, batch-size, "
        "no-block and model-instance-id, and give the others with extra-inputs)", inputs);
    return NULL;
  }
  if (opts->n_requests < 1 || opts->n_requests > 1024 || opts->batch_timeout_us < 0) {
    g_set_error (error, M2I_ERROR, M2I_ERROR_INVALID_ARGUMENT, "nireq must be 1 to 1024 (is "
        "%u) and the batch timeout not negative (is %" G_GINT64_FORMAT " us)",
        opts->n_requests, opts->batch_timeout_us);
    return NULL;
  }
  M2iInferQueue *q = g_new0 (M2iInferQueue, 1);
  q->model = m2i_infer_model_ref (model);
  q->opts = *opts;
  q->done = done;
  q->user_data = user_data;
  g_mutex_init (&q->lock);
  g_cond_init (&q->cond);
  m2i_infer_preprocess_init (&q->pp);
  q->frames = g_new0 (Frame, opts->n_requests);
  if (!(q->template = infer_session_new_unbound (model, error))) {
    m2i_infer_queue_free (q);
    return NULL;
  }
  for (guint i = 0; i < opts->n_requests; i++) {
    Frame *f = &q->frames[i];
    f->q = q;
    if (!(f->s = infer_session_new_unbound (model, error))) {
      m2i_infer_queue_free (q);
      return NULL;
    }
    f->next = q->free_list;
    q->free_list = f;
  }
  q->g = gatherer_get (model);
  return q;
}

void
m2i_infer_queue_free (M2iInferQueue *q)
{
  if (!q)
    return;
  if (q->g) {
    m2i_infer_queue_set_flushing (q, TRUE);
    m2i_infer_queue_drain (q);
  }
  for (guint i = 0; i < q->opts.n_requests; i++)
    m2i_infer_session_free (q->frames[i].s);
  m2i_infer_session_free (q->template);
  g_free (q->frames);
  g_mutex_clear (&q->lock);
  g_cond_clear (&q->cond);
  m2i_infer_model_unref (q->model);
  g_free (q);
}

M2iInferModel *
m2i_infer_queue_get_model (const M2iInferQueue *q)
{
  return q->model;
}

M2iInferSession *
m2i_infer_queue_get_template (M2iInferQueue *q)
{
  return q->template;
}

gboolean
m2i_infer_queue_set_preprocess (M2iInferQueue *q, const M2iInferPreprocess *pp, GError **error)
{
  /* checked on the template: the frames' own sessions take the settings
   * when they are next submitted */
  g_mutex_lock (&q->lock);
  gboolean ok = m2i_infer_session_set_preprocess (q->template, pp, error);
  if (ok) {
    q->pp = *pp;
    q->pp_serial++;
  }
  g_mutex_unlock (&q->lock);
  return ok;
}

M2iInferSubmitResult
m2i_infer_queue_submit (M2iInferQueue *q, const M2iImage *source, const M2iOpList *queued,
    const M2iLetterbox *letterbox, const M2iDecoderOptions *decoder, gpointer frame_data,
    gboolean block)
{
  g_mutex_lock (&q->lock);
  while (!q->free_list && !q->flushing && block)
    g_cond_wait (&q->cond, &q->lock);
  if (q->flushing || !q->free_list) {
    gboolean flushing = q->flushing;
    g_mutex_unlock (&q->lock);
    return flushing ? M2I_INFER_FLUSHING : M2I_INFER_BUSY;
  }
  Frame *f = q->free_list;
  q->free_list = f->next;
  f->next = NULL;
  f->done = FALSE;
  g_atomic_int_set (&f->cancelled, 0);
  if (q->tail)
    q->tail->next = f;
  else
    q->head = f;
  q->tail = f;
  q->n_in_flight++;
  M2iInferPreprocess pp = q->pp;
  guint serial = q->pp_serial;
  g_mutex_unlock (&q->lock);

  f->source = *source;
  f->has_ops = queued != NULL;
  if (queued)
    f->ops = *queued;
  f->has_lb = letterbox != NULL;
  if (letterbox)
    f->lb = *letterbox;
  f->data = frame_data;
  if (f->pp_serial != serial) {
    m2i_infer_session_set_preprocess (f->s, &pp, NULL);   /* checked when set */
    f->pp_serial = serial;
  }
  if (decoder)
    m2i_decoder_set_options (m2i_infer_session_get_decoder (f->s), decoder);
  gather (q->g, f, q->opts.batch_timeout_us);
  return M2I_INFER_SUBMITTED;
}

void
m2i_infer_queue_drain (M2iInferQueue *q)
{
  g_mutex_lock (&q->g->lock);
  Batch *b = take_open_locked (q->g, q);
  g_mutex_unlock (&q->g->lock);
  if (b)
    run_batch (b);
  g_mutex_lock (&q->lock);
  while (q->n_in_flight || q->delivering)
    g_cond_wait (&q->cond, &q->lock);
  g_mutex_unlock (&q->lock);
}

void
m2i_infer_queue_set_flushing (M2iInferQueue *q, gboolean flushing)
{
  g_mutex_lock (&q->lock);
  q->flushing = flushing;
  for (Frame *f = q->head; f && flushing; f = f->next)
    if (!f->done)
      g_atomic_int_set (&f->cancelled, 1);
  g_cond_broadcast (&q->cond);
  g_mutex_unlock (&q->lock);
  if (!flushing)
    return;
  /* this queue's frames still gathering never run: out of the open batch,
   * handed back cancelled here */
  Frame *out[INFER_MAX_BATCH];
  gint n = 0;
  InferGatherer *g = q->g;
  g_mutex_lock (&g->lock);
  Batch *b = g->open;
  if (b) {
    gint kept = 0;
    for (gint k = 0; k < b->n; k++) {
      if (b->frames[k]->q == q)
        out[n++] = b->frames[k];
      else
        b->frames[kept++] = b->frames[k];
    }
    b->n = kept;
    if (!kept) {
      g->open = NULL;
      b->next = g->free_batches;
      g->free_batches = b;
    }
  }
  g_mutex_unlock (&g->lock);
  for (gint k = 0; k < n; k++) {
    set_cancelled (out[k]);
    frame_done (out[k]);
  }
}

guint
m2i_infer_queue_get_n_in_flight (M2iInferQueue *q)
{
  g_mutex_lock (&q->lock);
  guint n = q->n_in_flight;
  g_mutex_unlock (&q->lock);
  return n;
}

/* ---- one frame through the device queue ------------------------------------------ */

typedef struct {
  M2iInferSession *s;
  const M2iImage *source;
  const M2iOpList *queued;
  const M2iLetterbox *letterbox;
} RunOne;

static gboolean
run_one (gpointer data, GError **error)
{
  RunOne *r = data;
  return m2i_infer_session_run (r->s, r->source, r->queued, r->letterbox, error);
}

gboolean
m2i_infer_session_run_queued (M2iInferSession *s, const M2iImage *source,
    const M2iOpList *queued, const M2iLetterbox *letterbox, GError **error)
{
  RunOne r = { s, source, queued, letterbox };
  M2iFence *f = m2i_device_submit_job (NULL, run_one, &r, NULL, NULL);
  gboolean ok = m2i_fence_wait (f, -1, error);
  m2i_fence_unref (f);
  return ok;
}
