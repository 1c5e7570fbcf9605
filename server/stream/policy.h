/* Private to server/stream/: the device-mode policy's live state per hub
 * (policy.c), kept apart from the hub's own fields. */
#ifndef VC_STREAM_POLICY_H
#define VC_STREAM_POLICY_H

#include <stdint.h>

#include "common/negotiate.h"
#include "server/stream/poller.h"

struct event;
struct hub;

struct hub_policy {
	enum vc_mode_why why;    /* why the target mode was picked */
	unsigned n_streams;      /* requests the last choice was made for */
	unsigned n_oneshots;
	uint64_t switches;       /* modes asked of the camera */
	int64_t last_switch_us;  /* 0 = never */
	int64_t choose_at_us;    /* the timer's due time, 0 = not armed */
	struct event *ev;        /* chooses again: after a leave, at the end of a hold */
	void (*choose)(struct hub *h); /* what ev runs: hub_choose (set with the
				  * hub; policy.c is below hub.c, so it calls
				  * up through this pointer) */
	int hold_oneshots;       /* a switch for one-shot requests waits for the hold:
				  * their outputs get no frame of the old mode */
	char last[160];          /* the last switch as logged */
	int switch_hold;         /* the hub acquired the camera for a switch nobody
				  * uses it for (policy_switch_begin) */
	struct pollers pollers;  /* one-shot pollers still counted (poller.h) */
	struct event *lapse_ev;  /* chooses again when the next poller stops counting */
	int64_t lapse_at_us;     /* its due time, 0 = not armed */
};

#endif
