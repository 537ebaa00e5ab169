// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * pg_event_seqs.c -- the number of a job's next event, which an event
 * written behind must know at once (kept for the jobs this host writes
 * events for)
 */
#include "store/pg_internal.h"

static struct pg_seq_slot *seq_slot(struct pg_store *ps, int64_t job_id)
{
	return &ps->event_seqs[(uint64_t)job_id % PG_EVENT_SEQS];
}

int64_t pg_event_seq_next(struct pg_store *ps, int64_t job_id)
{
	struct pg_seq_slot *s = seq_slot(ps, job_id);

	return s->job_id == job_id ? s->seq + 1 : 0;
}

void pg_event_seq_note(struct pg_store *ps, int64_t job_id, int64_t seq)
{
	struct pg_seq_slot *s = seq_slot(ps, job_id);

	if (s->job_id != job_id || seq > s->seq) {
		s->job_id = job_id;
		s->seq = seq;
	}
}
