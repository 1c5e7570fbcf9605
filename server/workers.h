/* A small pool of worker threads for CPU work the event loop must not do
 * itself (JPEG encodes, conversions). A job's work function runs on a
 * worker; its done function then runs on the loop thread, woken by a
 * libevent thread-safe notification (event_active), so results are handed
 * back without locks in the caller and without polling.
 *
 * Requires evthread_use_pthreads() before the event_base was created.
 * vc_workers_new/submit/free are called on the loop thread only. */
#ifndef VC_WORKERS_H
#define VC_WORKERS_H

#include <stddef.h>

struct event_base;
struct vc_workers;

/* Runs on worker `worker` (0 .. count-1; index per-worker contexts such as a
 * struct vc_jpeg with it). Must not touch loop-thread state. */
typedef void (*vc_work_fn)(void *arg, unsigned worker);
/* Runs on the loop thread exactly once per submitted job: status 0 after
 * work ran, -ECANCELED when the pool was freed before the job started (work
 * did not run). */
typedef void (*vc_done_fn)(void *arg, int status);

/* n_threads 0 = one per online CPU. Returns 0 or -errno. */
int vc_workers_new(struct event_base *base, unsigned n_threads, struct vc_workers **out);

/* Joins the threads after the jobs already running finish; calls done for
 * every job not yet delivered (0 for finished ones, -ECANCELED for the
 * rest) before returning. NULL is a no-op. */
void vc_workers_free(struct vc_workers *w);

/* Queues a job (FIFO). work may be NULL (done only). Returns 0, or -ENOMEM
 * (nothing queued, done will not be called). */
int vc_workers_submit(struct vc_workers *w, vc_work_fn work, vc_done_fn done, void *arg);

unsigned vc_workers_count(const struct vc_workers *w);

/* Jobs submitted whose done has not run yet (for back-pressure). */
size_t vc_workers_pending(const struct vc_workers *w);

#endif
