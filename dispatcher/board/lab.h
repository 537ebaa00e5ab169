/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * lab.h -- the lab as it is configured now: for modules that look boards up
 *
 * The daemon owns labd's configuration, its users and one struct board per
 * device, and a reload (SIGHUP) replaces all three.  A module that needs them
 * (the scheduler, the API, the reservations, the telnet ports, the results
 * backends) therefore keeps none of them: it gets this small interface at
 * creation and asks each time.  What it returns is borrowed and stays valid
 * until the caller returns to the loop (reloads run from the loop).
 *
 * An admin may ask for a reload through it too (the API's POST /reload, as
 * SIGHUP does): the answer says what changed, or why the new configuration
 * was refused (the running one stays, and the lab is degraded until a
 * reload succeeds: lab_refused_reload()).
 */
#ifndef LABD_LAB_H
#define LABD_LAB_H

#include <errno.h>
#include <stdbool.h>
#include <stddef.h>

struct board;
struct lab_config;
struct users;

/* What a reload did (borrowed for the callback). */
struct lab_reload_report {
	bool refused;		/* the running configuration stays */
	char *const *errors;	/* why ("file:line: cause"), or what went wrong after (strv) */
	char *const *added;	/* board names (strv) */
	char *const *changed;
	char *const *removed;	/* retired: their jobs finish first */
	size_t boards;		/* of the configuration running now */
	size_t device_types;
};

typedef void (*lab_reload_fn)(const struct lab_reload_report *rep, void *userdata);

struct lab {
	const struct lab_config *(*config)(void *userdata);
	const struct users *(*users)(void *userdata);	/* labd.conf's `users` */
	struct board **(*boards)(void *userdata, size_t *ret_n);
	struct board *(*board)(void *userdata, const char *name);	/* NULL: no such board */
	/* optional: reload; @done once it ran (also when labd stops first): 0 or -errno */
	int (*reload)(void *userdata, lab_reload_fn done, void *done_ud);
	/* optional: why the last reload was refused, or NULL when it was not */
	const char *(*refused_reload)(void *userdata);
	void *userdata;
};

/** lab_current_config() - labd.conf and the board directory as loaded last. */
static inline const struct lab_config *lab_current_config(const struct lab *l)
{
	return l->config(l->userdata);
}

/** lab_users() - the users of the current configuration (session/users.h). */
static inline const struct users *lab_users(const struct lab *l)
{
	return l->users(l->userdata);
}

/** lab_boards() - every board of the current configuration. */
static inline struct board **lab_boards(const struct lab *l, size_t *ret_n)
{
	return l->boards(l->userdata, ret_n);
}

/** lab_board() - the board called @name, or NULL. */
static inline struct board *lab_board(const struct lab *l, const char *name)
{
	return l->board(l->userdata, name);
}

/** lab_reload() - reload labd.conf and the board directory: @done follows; -ENOTSUP, -ENOMEM. */
static inline int lab_reload(const struct lab *l, lab_reload_fn done, void *done_ud)
{
	return l->reload ? l->reload(l->userdata, done, done_ud) : -ENOTSUP;
}

/** lab_refused_reload() - why the last reload was refused (the lab is degraded), or NULL. */
static inline const char *lab_refused_reload(const struct lab *l)
{
	return l->refused_reload ? l->refused_reload(l->userdata) : NULL;
}

/** lab_has_board() - whether a board of device type @type has all of @tags (strv). */
bool lab_has_board(const struct lab *l, const char *type, char *const *tags);

#endif
