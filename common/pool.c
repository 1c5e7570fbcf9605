/* Pooled frame storage: released buffers wait on a free list (bounded) and
 * are handed out again for requests of about the same size. */
#include "common/pool.h"

#include "common/memstat.h"

#include <pthread.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

struct pbuf {
	struct vc_pool *pool;
	size_t cap;
	struct pbuf *next;
	/* data follows, aligned for any type */
	max_align_t data[];
};

struct vc_pool {
	pthread_mutex_t mu;
	struct pbuf *idle;  /* most recently released first */
	size_t n_idle, max_idle, out;
	int owner_gone;
	uint64_t allocs, reuses;
};

/* Capture storage, counted (common/memstat.h). */
static void pbuf_free(struct pbuf *b)
{
	if (b)
		vc_mem_count(VC_MEM_COPIES, -(long long)b->cap);
	free(b);
}

static void destroy(struct vc_pool *p)
{
	while (p->idle) {
		struct pbuf *b = p->idle;
		p->idle = b->next;
		pbuf_free(b);
	}
	pthread_mutex_destroy(&p->mu);
	free(p);
}

struct vc_pool *vc_pool_new(size_t max_idle)
{
	struct vc_pool *p = calloc(1, sizeof(*p));

	if (!p)
		return NULL;
	pthread_mutex_init(&p->mu, NULL);
	p->max_idle = max_idle ? max_idle : 4;
	return p;
}

void vc_pool_drop_idle(struct vc_pool *p)
{
	pthread_mutex_lock(&p->mu);
	struct pbuf *idle = p->idle;
	p->idle = NULL;
	p->n_idle = 0;
	pthread_mutex_unlock(&p->mu);
	while (idle) {
		struct pbuf *b = idle;
		idle = b->next;
		pbuf_free(b);
	}
}

void vc_pool_free(struct vc_pool *p)
{
	struct pbuf *idle;
	int last;

	if (!p)
		return;
	pthread_mutex_lock(&p->mu);
	p->owner_gone = 1;
	idle = p->idle;
	p->idle = NULL;
	p->n_idle = 0;
	last = p->out == 0;
	pthread_mutex_unlock(&p->mu);
	while (idle) {
		struct pbuf *b = idle;
		idle = b->next;
		pbuf_free(b);
	}
	if (last)
		destroy(p);
}

static void release(struct vc_frame *f, void *opaque)
{
	struct pbuf *b = opaque;
	struct vc_pool *p = b->pool;
	int last = 0;

	(void)f;
	pthread_mutex_lock(&p->mu);
	p->out--;
	if (!p->owner_gone && p->n_idle < p->max_idle) {
		b->next = p->idle;
		p->idle = b;
		p->n_idle++;
		b = NULL;
	}
	last = p->owner_gone && p->out == 0;
	pthread_mutex_unlock(&p->mu);
	pbuf_free(b);
	if (last)
		destroy(p);
}

/* A buffer of at least size bytes: an idle one no more than twice as big,
 * else a new one (evicting the oldest idle buffer when the list is full, so
 * a size change does not keep stale buffers forever). */
static struct pbuf *take(struct vc_pool *p, size_t size)
{
	struct pbuf *b, **pp, *evict = NULL;

	pthread_mutex_lock(&p->mu);
	for (pp = &p->idle; (b = *pp); pp = &b->next)
		if (b->cap >= size && b->cap / 2 <= size)
			break;
	if (b) {
		*pp = b->next;
		p->n_idle--;
		p->reuses++;
	} else {
		if (p->n_idle && p->n_idle >= p->max_idle) {
			for (pp = &p->idle; (*pp)->next; pp = &(*pp)->next)
				;
			evict = *pp;
			*pp = NULL;
			p->n_idle--;
		}
		p->allocs++;
	}
	p->out++;
	pthread_mutex_unlock(&p->mu);
	pbuf_free(evict);
	if (!b) {
		b = malloc(sizeof(*b) + (size ? size : 1));
		if (!b) {
			pthread_mutex_lock(&p->mu);
			p->out--;
			p->allocs--;
			pthread_mutex_unlock(&p->mu);
			return NULL;
		}
		b->pool = p;
		b->cap = size;
		vc_mem_count(VC_MEM_COPIES, (long long)size);
	}
	b->next = NULL;
	return b;
}

struct vc_frame *vc_pool_get(struct vc_pool *p, size_t size, uint8_t **data)
{
	struct pbuf *b = take(p, size);

	if (!b)
		return NULL;
	struct vc_geom g = { .mem_planes = 1, .mem_size = { size }, .sizeimage = size };
	uint8_t *mem[3] = { (uint8_t *)b->data, NULL, NULL };
	size_t used[3] = { size, 0, 0 };
	struct vc_frame *f = vc_frame_wrap(NULL, &g, mem, used, release, b);
	if (!f) {
		release(NULL, b);
		return NULL;
	}
	if (data)
		*data = mem[0];
	return f;
}

struct vc_frame *vc_pool_copy(struct vc_pool *p, const struct vc_frame *src)
{
	uint8_t *data;
	struct vc_frame *f = vc_pool_get(p, vc_frame_copy_size(src), &data);

	if (!f)
		return NULL;
	vc_frame_copy_to(f, src, data);
	return f;
}

void vc_pool_get_stats(struct vc_pool *p, struct vc_pool_stats *st)
{
	pthread_mutex_lock(&p->mu);
	st->allocs = p->allocs;
	st->reuses = p->reuses;
	st->idle = p->n_idle;
	st->out = p->out;
	pthread_mutex_unlock(&p->mu);
}
