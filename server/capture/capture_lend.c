/* A camera's open source sessions and their slots (see capture_int.h):
 * a dequeued buffer is lent as a frame whose release, on any thread, puts
 * its slot on a mutex-protected return list and wakes the loop, which
 * re-queues it; a retired session closes when its last slot is back, and
 * a freed camera's returns finish on the releasing thread. */
#define LOG_PREFIX "capture: "
#include "server/capture/capture_int.h"

#include <stdlib.h>
#include <string.h>

#include "common/log.h"

static void session_close(struct session *s)
{
	s->src->ops->close(s->src);
	free(s);
}

void cam_retq_free(struct retq *rq)
{
	pthread_mutex_destroy(&rq->mu);
	free(rq);
}

void cam_slot_release(struct vc_frame *f, void *opaque)
{
	struct slot *sl = opaque;
	struct session *s = sl->sess;
	struct retq *rq = s->rq;
	int close_it = 0, free_rq = 0;

	(void)f;
	pthread_mutex_lock(&rq->mu);
	if (rq->ev) {
		sl->next = rq->head;
		rq->head = sl;
		/* Under the mutex: vc_cam_free cannot free the event meanwhile. */
		event_active(rq->ev, EV_READ, 0);
	} else {
		/* The camera is gone: finish here, whatever thread this is. */
		s->lent--;
		rq->total_lent--;
		close_it = s->lent == 0;
		free_rq = rq->total_lent == 0;
	}
	pthread_mutex_unlock(&rq->mu);
	if (close_it)
		session_close(s);
	if (free_rq)
		cam_retq_free(rq);
}

void cam_retire(struct vc_cam *cam)
{
	struct session *s = cam->sess;
	int close_now;

	if (!s)
		return;
	cam->sess = NULL;
	if (cam->streaming) {
		s->src->ops->stop(s->src);
		cam->streaming = 0;
	}
	pthread_mutex_lock(&cam->rq->mu);
	s->retired = 1;
	close_now = s->lent == 0;
	pthread_mutex_unlock(&cam->rq->mu);
	if (close_now)
		session_close(s);
}

void cam_on_returns(evutil_socket_t fd, short what, void *arg)
{
	struct vc_cam *cam = arg;
	struct slot *list;

	(void)fd;
	(void)what;
	pthread_mutex_lock(&cam->rq->mu);
	list = cam->rq->head;
	cam->rq->head = NULL;
	pthread_mutex_unlock(&cam->rq->mu);
	while (list) {
		struct slot *sl = list;
		struct session *s = sl->sess;
		int retired, last;

		list = sl->next;
		pthread_mutex_lock(&cam->rq->mu);
		s->lent--;
		cam->rq->total_lent--;
		retired = s->retired;
		last = s->lent == 0;
		pthread_mutex_unlock(&cam->rq->mu);
		if (retired) {
			if (last)
				session_close(s);
			continue;
		}
		int ret = s->src->ops->queue(s->src, sl->index);
		if (ret < 0 && s == cam->sess && cam->streaming) {
			if (cam_is_gone(ret)) {
				cam_device_gone(cam, ret);
			} else {
				log_warn("%s: QBUF %u: %s", cam->id, sl->index, strerror(-ret));
			}
		}
	}
	if (cam->sess && !cam->streaming && cam->reopen && cam->sess->lent == 0)
		cam_after_drain(cam);
}
