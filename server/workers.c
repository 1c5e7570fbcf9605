/* The worker pool: a FIFO of jobs under one mutex and condition variable,
 * N threads taking jobs from it, and a list of finished jobs that one
 * libevent event (activated from the workers) hands back to the loop. */
#define LOG_PREFIX "workers: "
#include "server/workers.h"

#include <errno.h>
#include <event2/event.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/log.h"

#define MAX_THREADS 64

struct job {
	vc_work_fn work;
	vc_done_fn done;
	void *arg;
	int status;
	struct job *next;
};

struct jlist {
	struct job *head, *tail;
};

struct thr {
	struct vc_workers *w;
	unsigned index;
	pthread_t tid;
};

struct vc_workers {
	struct event_base *base;
	struct event *done_ev;
	pthread_mutex_t mu;
	pthread_cond_t cv;
	struct jlist todo, finished; /* under mu */
	int stopping;                /* under mu */
	size_t pending;              /* loop thread only */
	unsigned n;
	struct thr thr[MAX_THREADS];
};

static void push(struct jlist *l, struct job *j)
{
	j->next = NULL;
	if (l->tail)
		l->tail->next = j;
	else
		l->head = j;
	l->tail = j;
}

static struct job *take_all(struct jlist *l)
{
	struct job *j = l->head;

	l->head = l->tail = NULL;
	return j;
}

static void *worker_main(void *p)
{
	struct thr *t = p;
	struct vc_workers *w = t->w;

	pthread_mutex_lock(&w->mu);
	for (;;) {
		while (!w->todo.head && !w->stopping)
			pthread_cond_wait(&w->cv, &w->mu);
		if (w->stopping)
			break;
		struct job *j = w->todo.head;
		w->todo.head = j->next;
		if (!w->todo.head)
			w->todo.tail = NULL;
		pthread_mutex_unlock(&w->mu);
		if (j->work)
			j->work(j->arg, t->index);
		j->status = 0;
		pthread_mutex_lock(&w->mu);
		push(&w->finished, j);
		event_active(w->done_ev, EV_READ, 0);
	}
	pthread_mutex_unlock(&w->mu);
	return NULL;
}

static void deliver(struct vc_workers *w, struct job *j)
{
	while (j) {
		struct job *next = j->next;
		w->pending--;
		if (j->done)
			j->done(j->arg, j->status);
		free(j);
		j = next;
	}
}

static void on_done(evutil_socket_t fd, short what, void *arg)
{
	struct vc_workers *w = arg;
	struct job *j;

	(void)fd;
	(void)what;
	pthread_mutex_lock(&w->mu);
	j = take_all(&w->finished);
	pthread_mutex_unlock(&w->mu);
	deliver(w, j);
}

static unsigned cpu_count(void)
{
	long n = sysconf(_SC_NPROCESSORS_ONLN);

	return n < 1 ? 1 : n > MAX_THREADS ? MAX_THREADS : (unsigned)n;
}

int vc_workers_new(struct event_base *base, unsigned n_threads, struct vc_workers **out)
{
	struct vc_workers *w = calloc(1, sizeof(*w));
	int ret;

	if (!w)
		return -ENOMEM;
	w->base = base;
	w->n = n_threads ? (n_threads > MAX_THREADS ? MAX_THREADS : n_threads) : cpu_count();
	w->done_ev = event_new(base, -1, 0, on_done, w);
	if (!w->done_ev) {
		free(w);
		return -ENOMEM;
	}
	pthread_mutex_init(&w->mu, NULL);
	pthread_cond_init(&w->cv, NULL);
	for (unsigned i = 0; i < w->n; i++) {
		w->thr[i].w = w;
		w->thr[i].index = i;
		ret = pthread_create(&w->thr[i].tid, NULL, worker_main, &w->thr[i]);
		if (ret) {
			log_error("starting worker %u: %s", i, strerror(ret));
			w->n = i;
			vc_workers_free(w);
			return -ret;
		}
	}
	*out = w;
	return 0;
}

void vc_workers_free(struct vc_workers *w)
{
	struct job *done, *cancelled;

	if (!w)
		return;
	pthread_mutex_lock(&w->mu);
	w->stopping = 1;
	pthread_cond_broadcast(&w->cv);
	pthread_mutex_unlock(&w->mu);
	for (unsigned i = 0; i < w->n; i++)
		pthread_join(w->thr[i].tid, NULL);
	/* Threads are gone: no lock needed from here. */
	done = take_all(&w->finished);
	cancelled = take_all(&w->todo);
	for (struct job *j = cancelled; j; j = j->next)
		j->status = -ECANCELED;
	deliver(w, done);
	deliver(w, cancelled);
	event_free(w->done_ev);
	pthread_cond_destroy(&w->cv);
	pthread_mutex_destroy(&w->mu);
	free(w);
}

int vc_workers_submit(struct vc_workers *w, vc_work_fn work, vc_done_fn done, void *arg)
{
	struct job *j = calloc(1, sizeof(*j));

	if (!j)
		return -ENOMEM;
	j->work = work;
	j->done = done;
	j->arg = arg;
	w->pending++;
	pthread_mutex_lock(&w->mu);
	push(&w->todo, j);
	pthread_cond_signal(&w->cv);
	pthread_mutex_unlock(&w->mu);
	return 0;
}

unsigned vc_workers_count(const struct vc_workers *w)
{
	return w->n;
}

size_t vc_workers_pending(const struct vc_workers *w)
{
	return w->pending;
}
