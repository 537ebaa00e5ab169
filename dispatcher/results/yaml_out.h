/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * yaml_out.h -- writing YAML documents into a strbuf with libyaml's emitter
 *
 * A thin layer over yaml_emitter_t for labd's YAML output (LAVA's log and
 * result documents, lava_log.h and lava_results.h): libyaml does all the
 * quoting and escaping.  Output is ASCII only (yaml_emitter_set_unicode(0):
 * other characters are written as \x, \u or \U escapes, as PyYAML does by
 * default) and never wrapped, so a flow mapping stays on one line.
 *
 * Errors stick: the first failing call records its error in y->err and
 * every later call does nothing, so a writer calls yaml_out_*() in a row and
 * checks the result of yaml_out_end() once.
 *
 *	struct yaml_out y;
 *	yaml_out_begin(&y, &buf);
 *	yaml_out_seq_begin(&y, false);
 *	...
 *	yaml_out_seq_end(&y);
 *	err = yaml_out_end(&y);		// 0, -ENOMEM or -EINVAL
 *
 * The document start and end are implicit ("---" and "..." are not
 * written), so documents of block sequences written one after the other
 * concatenate into one sequence.
 */
#ifndef LABD_YAML_OUT_H
#define LABD_YAML_OUT_H

#include <stdbool.h>
#include <stddef.h>

#include <jansson.h>
#include <yaml.h>

#include "core/strbuf.h"

struct yaml_out {
	yaml_emitter_t em;
	struct strbuf *out;
	struct strbuf scratch;	/* a string made valid UTF-8 */
	int err;
};

/** yaml_out_begin() - start a stream and its document, written to the end of @out. */
int yaml_out_begin(struct yaml_out *y, struct strbuf *out);

/** yaml_out_end() - end the document and the stream, free the emitter; the first error. */
int yaml_out_end(struct yaml_out *y);

/**
 * yaml_out_str() - a string scalar of @len bytes (any bytes: what is not
 * valid UTF-8 becomes U+FFFD), double-quoted so that it reads back as a
 * string whatever it holds ("12", "null", "yes" ...).
 */
void yaml_out_str(struct yaml_out *y, const char *s, size_t len);

/** yaml_out_cstr() - yaml_out_str() of a C string; NULL writes null. */
void yaml_out_cstr(struct yaml_out *y, const char *s);

/** yaml_out_plain() - a plain scalar: mapping keys, numbers, true/false, null. */
void yaml_out_plain(struct yaml_out *y, const char *s);

/** yaml_out_key() - a mapping key: plain when it reads back as a string, else quoted. */
void yaml_out_key(struct yaml_out *y, const char *key);

void yaml_out_map_begin(struct yaml_out *y, bool flow);
void yaml_out_map_end(struct yaml_out *y);
void yaml_out_seq_begin(struct yaml_out *y, bool flow);
void yaml_out_seq_end(struct yaml_out *y);

/**
 * yaml_out_json() - a JSON value as YAML: objects as mappings, arrays as
 * sequences (in flow style when @flow), strings double-quoted, numbers,
 * booleans and null plain.  NULL writes null.
 */
void yaml_out_json(struct yaml_out *y, const json_t *v, bool flow);

#endif
