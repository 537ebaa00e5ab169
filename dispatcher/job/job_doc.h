/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * job_doc.h -- a job document under validation: one JSON tree, source lines, diagnostics
 *
 * Private to the job parser (job.c, job_yaml.c, job_json.c and the action
 * walkers).  Both front ends turn their input into the same thing: a jansson
 * tree (@root) plus a map from every value's path ("actions[1].boot.prompts[0]")
 * to its source line.  The schema walkers then read only the tree, so YAML
 * and JSON accept exactly the same documents and report the same lines.
 *
 * Paths: keys are joined with '.', list items get "[N]"; the root is "".
 * @lines maps a path to its line (an integer); @aliases maps the path where a
 * YAML alias or merge key placed a value to the path of the original, so the
 * lines of aliased values are found without copying them.  A path that has
 * no line of its own takes its parent's.
 *
 * Diagnostics are collected with their line and handed to a struct diag in
 * document order by job_doc_finish(), whatever order the walkers found them in.
 * The walkers keep the path of the value they are checking in @path and name
 * it in every message: "actions[1].boot: unsupported boot method 'fastboot'".
 *
 * Typed getters share one convention: they return 1 when the key is present
 * and valid (the output written), 0 when it is absent (output untouched; an
 * error was reported if it was required), or -EINVAL after reporting why the
 * value is wrong.  Allocation failures are remembered in @err and reported as
 * -ENOMEM by job_doc_finish().
 */
#ifndef LABD_JOB_DOC_H
#define LABD_JOB_DOC_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <jansson.h>

#include "core/diag.h"
#include "core/strbuf.h"

#ifndef PCRE2_CODE_UNIT_WIDTH
#define PCRE2_CODE_UNIT_WIDTH 8
#endif
#include <pcre2.h>

/* Limits on the shape of a document, whatever its size in bytes. */
#define JOB_DOC_MAX_DEPTH 64		/* nested mappings and lists */
#define JOB_DOC_MAX_NODES 100000	/* values, counting every use of an alias */
#define JOB_DOC_MAX_HOPS 16		/* aliases followed to find a line */
#define JOB_DOC_MAX_ITEMS 1000		/* entries of any list or mapping the schema reads */
#define JOB_DOC_MAX_URL 4096		/* bytes of a URL */
#define JOB_DOC_MAX_MSGS 100		/* diagnostics handed over; then a count of the rest */

/* What a message is: errors refuse the job; warnings and notes do not. */
enum job_doc_level {
	JOB_DOC_ERROR,
	JOB_DOC_WARNING,	/* probably not meant (a duplicate key): `labctl check
				 * --strict` refuses the job */
	JOB_DOC_NOTE,		/* something labd ignores on purpose, and why */
};

struct job_doc_msg {
	int line;
	size_t seq;		/* discovery order among messages of one line */
	enum job_doc_level level;
	char *text;		/* "PATH: cause" */
};

struct job_doc {
	const char *file;	/* borrowed */
	json_t *root;		/* the document; NULL until a front end loaded it */
	json_t *lines;		/* path -> line */
	json_t *aliases;	/* path -> path of the aliased original */
	json_t *spans;		/* YAML only, when not NULL: path of a scalar -> [first byte,
				 * byte after it] in the text (job_redact.c) */
	struct strbuf path;	/* path of the value being checked */
	struct job_doc_msg *msgs;
	size_t n_msgs;
	size_t alloc_msgs;
	size_t n_errors;	/* of @msgs */
	size_t n_warnings;	/* of @msgs; kept by job_doc_finish() */
	struct diag *notices;	/* where job_doc_finish() puts warnings and notes when
				 * there is no error, or NULL: dropped */
	int err;		/* -ENOMEM once an allocation failed */
};

/** How a key of a mapping is treated (see job_doc_check_keys()). */
enum job_key_status {
	JOB_KEY_KNOWN,		/* read by the walker */
	JOB_KEY_IGNORED,	/* accepted, no effect in labd: @reason says why */
	JOB_KEY_UNSUPPORTED,	/* rejected with @reason */
};

struct job_doc_key {
	const char *name;
	enum job_key_status status;
	const char *reason;
};

/* Front ends (job_yaml.c, job_json.c) */

/**
 * job_yaml_load() - build @doc's tree and lines from YAML text
 * @lines_only: only record lines (values become null) and report nothing:
 *	used on JSON text, which is YAML too, to find the lines jansson lacks
 *
 * Returns 0, -EINVAL after reporting a syntax or structure error, or -ENOMEM.
 */
int job_yaml_load(struct job_doc *doc, const char *text, size_t len, bool lines_only);

/** job_json_load() - build @doc's tree (jansson) and lines (libyaml) from JSON text. */
int job_json_load(struct job_doc *doc, const char *text, size_t len);

/* Life cycle */

/** job_doc_init() - an empty document; @file (borrowed) names it in messages. */
int job_doc_init(struct job_doc *doc, const char *file);

/** job_doc_check_shape() - reject a tree nested deeper than JOB_DOC_MAX_DEPTH or holding
 * more than JOB_DOC_MAX_NODES values once aliases are expanded. Returns 0 or -EINVAL. */
int job_doc_check_shape(struct job_doc *doc);

/**
 * job_doc_finish() - hand the collected messages to @diag in document order
 *
 * When an error was reported, every message goes to @diag, warnings and
 * notes as "FILE:LINE: warning: PATH: cause" ("note: ..."); else warnings and
 * notes go to @doc->notices in that form (dropped when it is NULL).  Returns
 * 0 when no error was reported, -ENOMEM if an allocation failed, else
 * -EINVAL.  Releases the document (take references to @lines and @aliases
 * first to keep them); n_warnings stays.
 */
int job_doc_finish(struct job_doc *doc, struct diag *diag);

/* Paths and lines */

/** job_doc_enter() / job_doc_enter_index() - descend into @key or item @i; return a mark. */
size_t job_doc_enter(struct job_doc *doc, const char *key);
size_t job_doc_enter_index(struct job_doc *doc, size_t i);

/** job_doc_leave() - go back to the path at @mark. */
void job_doc_leave(struct job_doc *doc, size_t mark);

/** job_doc_line() - line of the current path's child @key (NULL: of the path itself). */
int job_doc_line(const struct job_doc *doc, const char *key);

/** job_doc_path_line() - line of @path in @lines/@aliases (see above); 0 if unknown. */
int job_doc_path_line(const json_t *lines, const json_t *aliases, const char *path);

/**
 * job_doc_path_value() - the value @map holds for @path, following @aliases
 * to the original of an aliased value (no parent fallback); NULL if none.
 */
const json_t *job_doc_path_value(const json_t *map, const json_t *aliases, const char *path);

/** job_doc_set_line() - record the line of @path (front ends). */
void job_doc_set_line(struct job_doc *doc, const char *path, int line);

/** job_doc_set_alias() - record that @path holds a copy of the value at @original. */
void job_doc_set_alias(struct job_doc *doc, const char *path, const char *original);

/* Diagnostics */

/**
 * job_doc_error() - report a problem with the current value or its child @key
 *
 * The message reads "PATH: cause" at the line of @key (or of the current
 * path when @key is NULL or has no line).  Returns -EINVAL.
 */
int job_doc_error(struct job_doc *doc, const char *key, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

/** job_doc_error_at() - report a problem at @line, without a path (syntax errors). */
int job_doc_error_at(struct job_doc *doc, int line, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

/**
 * job_doc_warn() / job_doc_note() - like job_doc_error(), a warning (the job
 * is accepted, `--strict` refuses it) or a note (something ignored on
 * purpose).  Return 0.
 */
int job_doc_warn(struct job_doc *doc, const char *key, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
int job_doc_note(struct job_doc *doc, const char *key, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

/** job_doc_warn_at() - a warning at @line, without a path. Returns 0. */
int job_doc_warn_at(struct job_doc *doc, int line, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

/** job_doc_nomem() - remember an allocation failure; returns -ENOMEM. */
int job_doc_nomem(struct job_doc *doc);

/** job_doc_type_name() - "a string", "an integer", ... for messages. */
const char *job_doc_type_name(const json_t *v);

/* Checks and typed getters (see the return convention above) */

/**
 * job_doc_check_keys() - report every key of @obj that is unknown (in neither
 * @keys nor @more, which may be NULL) or listed as unsupported; note those
 * listed as ignored, with their reason.
 */
int job_doc_check_keys(struct job_doc *doc, const json_t *obj, const struct job_doc_key *keys,
		       const struct job_doc_key *more);

int job_doc_get(struct job_doc *doc, const json_t *obj, const char *key, json_type type,
		bool required, json_t **ret);
int job_doc_get_str(struct job_doc *doc, const json_t *obj, const char *key, bool required,
		    const char **ret);
int job_doc_dup_str(struct job_doc *doc, const json_t *obj, const char *key, bool required,
		    char **ret);
int job_doc_get_int(struct job_doc *doc, const json_t *obj, const char *key, long long min,
		    long long max, long long *ret);
int job_doc_get_bool(struct job_doc *doc, const json_t *obj, const char *key, bool *ret);

/** job_doc_get_strv() - a list of strings; an empty list gives a NULL strv. */
int job_doc_get_strv(struct job_doc *doc, const json_t *obj, const char *key, char ***ret);

/**
 * job_doc_regex() - check that @re compiles (PCRE2, bytes, no UTF: it matches
 * raw console output); report the error and its offset at the current path.
 * @ret: if not NULL, the compiled pattern, freed with pcre2_code_free().
 * Returns 0 or -EINVAL.
 */
int job_doc_regex(struct job_doc *doc, const char *key, const char *re, pcre2_code **ret);

/** job_doc_get_regex() / job_doc_get_regexv() - a regex, or a list of them, as strings. */
int job_doc_get_regex(struct job_doc *doc, const json_t *obj, const char *key, bool required,
		      char **ret);
int job_doc_get_regexv(struct job_doc *doc, const json_t *obj, const char *key, char ***ret);

/**
 * job_doc_get_timeout() - a LAVA duration {days, hours, minutes, seconds} in usec
 *
 * The parts are added up; the total must be above 0 and at most JOB_MAX_TIMEOUT.
 */
int job_doc_get_timeout(struct job_doc *doc, const json_t *obj, const char *key, uint64_t *ret);

/** job_doc_get_timeout_skip() - an action's timeout, and its `skip: true` (LAVA: a
 * timeout of the action does not fail the job, the next action starts). */
int job_doc_get_timeout_skip(struct job_doc *doc, const json_t *obj, const char *key,
			     uint64_t *ret, bool *skip);

/**
 * job_doc_get_url() - a URL labd can download: http://, https:// or file:// with
 * an absolute path, without blanks or control characters.
 */
int job_doc_get_url(struct job_doc *doc, const json_t *obj, const char *key, char **ret);

/** job_doc_is_name() - whether @s is 1 to @max letters, digits and characters of @punct. */
bool job_doc_is_name(const char *s, size_t max, const char *punct);

/** job_doc_scalar_str() - a scalar as text (parameters): "3", "true", "1.5", "" for null. */
char *job_doc_scalar_str(const json_t *v);

#endif
