/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * jobstate.h -- the lifecycle and outcome model of jobs and boards
 *
 * A job is queued, then running (on one board), then finished.  A finished
 * job is complete, incomplete or canceled.  An incomplete job carries an
 * error type and a one-line reason:
 *
 *   infrastructure  the lab failed: console vanished, power control failed,
 *                   a download failed, U-Boot reported a TFTP error ...
 *                   (retried on another board when the job allows it)
 *   job             the job's content is wrong for this board: a prompt never
 *                   came, a kernel panicked, a named command set is missing
 *   test            a test action could not run to its end
 *   bug             labd itself failed
 *
 * A test that fails (a result "fail") does not make the job incomplete: the
 * job is complete and labctl exits 1.
 *
 * Boards are idle, running (a job), reserved (a developer holds it),
 * maintenance (an admin took it out) or bad (labd took it out: its console
 * vanished or its power control failed; it returns when the parts do).
 */
#ifndef LABD_JOBSTATE_H
#define LABD_JOBSTATE_H

enum job_state {
	JOB_STATE_QUEUED,
	JOB_STATE_RUNNING,
	JOB_STATE_CANCELING,
	JOB_STATE_FINISHED,
};

enum job_health {
	JOB_HEALTH_UNKNOWN,	/* not finished */
	JOB_HEALTH_COMPLETE,
	JOB_HEALTH_INCOMPLETE,
	JOB_HEALTH_CANCELED,
};

enum error_type {
	ERROR_NONE,
	ERROR_INFRASTRUCTURE,
	ERROR_JOB,
	ERROR_TEST,
	ERROR_BUG,
};

enum device_state {
	DEVICE_STATE_IDLE,
	DEVICE_STATE_RUNNING,
	DEVICE_STATE_RESERVED,
	DEVICE_STATE_MAINTENANCE,
	DEVICE_STATE_BAD,
};

/* Lowercase names used in the API, the store and the CLI; the parsers return
 * -EINVAL for an unknown name. */
const char *job_state_name(enum job_state s);
int job_state_from_name(const char *name, enum job_state *ret);
const char *job_health_name(enum job_health h);
int job_health_from_name(const char *name, enum job_health *ret);
const char *error_type_name(enum error_type t);
int error_type_from_name(const char *name, enum error_type *ret);
const char *device_state_name(enum device_state s);
int device_state_from_name(const char *name, enum device_state *ret);

#endif
