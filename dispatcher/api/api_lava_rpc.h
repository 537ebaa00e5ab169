/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * api_lava_rpc.h -- what the files of LAVA's XML-RPC API share: methods and values
 *
 * api_lava_rpc.c owns /RPC2 (the transport, the registry, multicalls) and
 * the methods of jobs and results; api_lava_rpc_lab.c the lab's (devices,
 * device types, workers, tags, aliases: what lavacli's devices,
 * device-types, workers, tags and system commands read, and the few changes
 * an admin makes through them); api_lava_rpc_jobs.c the job lists and
 * resubmissions.  Each file gives its methods as a table the registry adds.
 *
 * A method runs after the role check of its table entry, returns a new
 * reference or NULL with a fault set in @env (LAVA's codes: 400 bad data,
 * 401, 403, 404 no such object).  Private to api_lava_rpc*.c.
 */
#ifndef LABD_API_LAVA_RPC_H
#define LABD_API_LAVA_RPC_H

#include <stddef.h>
#include <stdint.h>

#include <xmlrpc-c/base.h>

#include "api/api_lava.h"

struct rpc_method {
	const char *name;
	enum user_role role;
	const char *what;	/* for "may not ..." */
	xmlrpc_value *(*fn)(xmlrpc_env *env, xmlrpc_value *params, struct api_request *r);
};

/* The tables of api_lava_rpc_lab.c and api_lava_rpc_jobs.c, and their lengths. */
extern const struct rpc_method api_rpc_lab_methods[];
extern const size_t api_rpc_lab_n_methods;
extern const struct rpc_method api_rpc_jobs_methods[];
extern const size_t api_rpc_jobs_n_methods;

/* ---- values ---- */

/** rpc_str() - a string as XML 1.0 allows it (others become U+FFFD); NULL is nil. */
xmlrpc_value *rpc_str(xmlrpc_env *env, const char *s);

/** rpc_time() - realtime usec as a dateTime (whole seconds, UTC); 0 is nil. */
xmlrpc_value *rpc_time(xmlrpc_env *env, uint64_t usec);

/** rpc_put() - @st[@key] = @v, the reference to @v given up (also on a fault). */
void rpc_put(xmlrpc_env *env, xmlrpc_value *st, const char *key, xmlrpc_value *v);

/** rpc_done() - @v, or NULL (@v dropped) when a fault occurred: what methods return. */
xmlrpc_value *rpc_done(xmlrpc_env *env, xmlrpc_value *v);

/** rpc_append() - append @v to array @a, the reference to @v given up. */
void rpc_append(xmlrpc_env *env, xmlrpc_value *a, xmlrpc_value *v);

/* ---- parameters ---- */

/** rpc_param() - parameter @i: a new reference, or NULL when absent or nil. */
xmlrpc_value *rpc_param(xmlrpc_env *env, xmlrpc_value *params, int i);

/** rpc_param_int() - parameter @i as an integer (or its text): 1, 0 when absent, -EINVAL. */
int rpc_param_int(xmlrpc_env *env, xmlrpc_value *params, int i, int64_t *ret);

/** rpc_param_str() - parameter @i as a string (caller frees): 0, or a fault 400. */
int rpc_param_str(xmlrpc_env *env, xmlrpc_value *params, int i, const char *name,
		  char **ret, size_t *ret_len);

/**
 * rpc_param_opt_str() - parameter @i as a string when given (caller frees),
 * NULL when absent or nil: 0, or a fault 400 when it is not a string.
 */
int rpc_param_opt_str(xmlrpc_env *env, xmlrpc_value *params, int i, const char *name,
		      char **ret);

/** rpc_param_bool() - parameter @i as a boolean (absent or nil: false). */
bool rpc_param_bool(xmlrpc_env *env, xmlrpc_value *params, int i);

/** rpc_param_job() - the job named by parameter @i: 0, or a fault (400, 404). */
int rpc_param_job(xmlrpc_env *env, xmlrpc_value *params, int i, struct api_request *r,
		  struct job_record *rec);

#endif
