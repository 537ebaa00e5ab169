/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * strv.h -- NULL-terminated string vectors (char **)
 *
 * A NULL strv is a valid empty vector.  Every string is owned by the vector
 * and freed by strv_free().
 */
#ifndef LABD_STRV_H
#define LABD_STRV_H

#include <stdbool.h>
#include <stddef.h>

/** strv_length() - number of strings; 0 for NULL. */
size_t strv_length(char *const *v);

/** strv_push() - append a copy of @s. Returns 0 or -ENOMEM (vector unchanged). */
int strv_push(char ***v, const char *s);

/** strv_consume() - append @s, taking ownership (freed on failure). */
int strv_consume(char ***v, char *s);

/** strv_contains() - whether @s is in @v. */
bool strv_contains(char *const *v, const char *s);

/** strv_copy() - deep copy; NULL on ENOMEM or for an empty vector... check @ret. */
int strv_copy(char *const *v, char ***ret);

/** strv_join() - strings joined with @sep; caller frees; NULL on ENOMEM. */
char *strv_join(char *const *v, const char *sep);

/** strv_free() - free all strings and the vector; accepts NULL; returns NULL. */
char **strv_free(char **v);

#define STRV_FOREACH(s, v) for (char *const *s = (v); s && *s; s++)

#endif
