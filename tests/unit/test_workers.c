/* The worker pool on a real event_base: work runs on workers (in parallel),
 * done runs on the loop thread once per job, free cancels what never ran. */
#include <errno.h>
#include <event2/event.h>
#include <event2/thread.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <time.h>

#include "check.h"
#include "server/workers.h"

#define N_JOBS 200

struct job_arg {
	int in, out;
	int done_calls, status;
	pthread_t work_thread, done_thread;
	unsigned worker;
	int sleep_ms;
};

static pthread_t loop_thread;
static atomic_int running, max_running;

static void work(void *p, unsigned worker)
{
	struct job_arg *a = p;
	int now = atomic_fetch_add(&running, 1) + 1;
	int m = atomic_load(&max_running);

	while (now > m && !atomic_compare_exchange_weak(&max_running, &m, now))
		;
	a->work_thread = pthread_self();
	a->worker = worker;
	if (a->sleep_ms) {
		struct timespec ts = { 0, a->sleep_ms * 1000000L };
		nanosleep(&ts, NULL);
	}
	a->out = a->in * a->in;
	atomic_fetch_sub(&running, 1);
}

static int n_done;
static struct event_base *cur_base;

static void done(void *p, int status)
{
	struct job_arg *a = p;

	a->done_calls++;
	a->status = status;
	a->done_thread = pthread_self();
	if (++n_done == N_JOBS && cur_base)
		event_base_loopbreak(cur_base);
}

static int64_t mono_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static void all_jobs_done_on_loop(void)
{
	struct event_base *b = event_base_new();
	struct vc_workers *w;
	static struct job_arg a[N_JOBS];

	memset(a, 0, sizeof(a));
	n_done = 0;
	cur_base = b;
	CHECK(vc_workers_new(b, 3, &w) == 0 && vc_workers_count(w) == 3, "new");
	for (int i = 0; i < N_JOBS; i++) {
		a[i].in = i;
		CHECK(vc_workers_submit(w, work, done, &a[i]) == 0, "submit %d", i);
	}
	CHECK(vc_workers_pending(w) == N_JOBS, "pending %zu", vc_workers_pending(w));
	struct timeval tv = { 5, 0 };
	event_base_loopexit(b, &tv);
	event_base_dispatch(b);
	CHECK(n_done == N_JOBS, "%d of %d done", n_done, N_JOBS);
	CHECK(vc_workers_pending(w) == 0, "pending %zu", vc_workers_pending(w));
	int bad = 0;
	for (int i = 0; i < N_JOBS; i++)
		bad += a[i].out != i * i || a[i].done_calls != 1 || a[i].status != 0 ||
		       !pthread_equal(a[i].done_thread, loop_thread) ||
		       pthread_equal(a[i].work_thread, loop_thread) || a[i].worker >= 3;
	CHECK(bad == 0, "%d jobs wrong", bad);
	vc_workers_free(w);
	cur_base = NULL;
	event_base_free(b);
}

/* 8 jobs of 100 ms on 4 workers: ~200 ms, 4 at once. */
static void parallel(void)
{
	struct event_base *b = event_base_new();
	struct vc_workers *w;
	struct job_arg a[8];

	memset(a, 0, sizeof(a));
	n_done = N_JOBS - 8;
	cur_base = b;
	atomic_store(&max_running, 0);
	CHECK(vc_workers_new(b, 4, &w) == 0, "new");
	int64_t t0 = mono_ms();
	for (int i = 0; i < 8; i++) {
		a[i].sleep_ms = 100;
		vc_workers_submit(w, work, done, &a[i]);
	}
	struct timeval tv = { 5, 0 };
	event_base_loopexit(b, &tv);
	event_base_dispatch(b);
	int64_t dt = mono_ms() - t0;
	CHECK(n_done == N_JOBS, "not all done");
	CHECK(dt >= 190 && dt < 700, "8 x 100 ms on 4 workers took %lld ms", (long long)dt);
	CHECK(atomic_load(&max_running) == 4, "max %d at once", atomic_load(&max_running));
	vc_workers_free(w);
	cur_base = NULL;
	event_base_free(b);
}

/* Free with a backlog: running jobs finish, queued ones are cancelled, every
 * done runs exactly once, before free returns. */
static void free_cancels(void)
{
	struct event_base *b = event_base_new();
	struct vc_workers *w;
	struct job_arg a[20];

	memset(a, 0, sizeof(a));
	n_done = 0;
	CHECK(vc_workers_new(b, 2, &w) == 0, "new");
	for (int i = 0; i < 20; i++) {
		a[i].sleep_ms = 30;
		a[i].in = i;
		vc_workers_submit(w, work, done, &a[i]);
	}
	struct timespec ts = { 0, 10 * 1000000L };
	nanosleep(&ts, NULL);
	vc_workers_free(w); /* the loop never ran */
	int ran = 0, cancelled = 0, wrong = 0;
	for (int i = 0; i < 20; i++) {
		wrong += a[i].done_calls != 1 || !pthread_equal(a[i].done_thread, loop_thread);
		if (a[i].status == 0)
			ran += a[i].out == i * i;
		else
			cancelled += a[i].status == -ECANCELED && a[i].out == 0;
	}
	CHECK(wrong == 0, "%d jobs with a wrong done", wrong);
	CHECK(ran + cancelled == 20 && ran <= 6, "ran %d cancelled %d", ran,
	      cancelled);
	event_base_free(b);
}

static void default_size(void)
{
	struct event_base *b = event_base_new();
	struct vc_workers *w;

	CHECK(vc_workers_new(b, 0, &w) == 0 && vc_workers_count(w) >= 1, "new");
	vc_workers_free(w);
	vc_workers_free(NULL);
	event_base_free(b);
}

int main(void)
{
	evthread_use_pthreads();
	loop_thread = pthread_self();
	RUN("workers", all_jobs_done_on_loop);
	RUN("workers", parallel);
	RUN("workers", free_cancels);
	RUN("workers", default_size);
	CHECK_EXIT();
}
