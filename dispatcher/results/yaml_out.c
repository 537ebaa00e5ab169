// SPDX-License-Identifier: GPL-2.0-or-later
/* yaml_out.c -- YAML documents written with libyaml's emitter into a strbuf */
#include "results/yaml_out.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "results/utf8.h"

static int write_out(void *data, unsigned char *buf, size_t len)
{
	struct yaml_out *y = data;

	return strbuf_add(y->out, buf, len) < 0 ? 0 : 1;
}

/* Emit @ev (consumed by libyaml, also on failure); record the first error. */
static void emit(struct yaml_out *y, yaml_event_t *ev, int initialized)
{
	if (y->err) {
		if (initialized)
			yaml_event_delete(ev);
		return;
	}
	if (!initialized) {
		y->err = -ENOMEM;
		return;
	}
	if (!yaml_emitter_emit(&y->em, ev))
		y->err = y->em.error == YAML_MEMORY_ERROR || y->em.error == YAML_WRITER_ERROR ?
				 -ENOMEM : -EINVAL;
}

int yaml_out_begin(struct yaml_out *y, struct strbuf *out)
{
	yaml_event_t ev;

	memset(y, 0, sizeof(*y));
	y->out = out;
	strbuf_init(&y->scratch);
	if (!yaml_emitter_initialize(&y->em)) {
		y->err = -ENOMEM;
		return y->err;
	}
	yaml_emitter_set_output(&y->em, write_out, y);
	yaml_emitter_set_width(&y->em, -1);
	yaml_emitter_set_unicode(&y->em, 0);
	emit(y, &ev, yaml_stream_start_event_initialize(&ev, YAML_UTF8_ENCODING));
	emit(y, &ev, yaml_document_start_event_initialize(&ev, NULL, NULL, NULL, 1));
	return y->err;
}

int yaml_out_end(struct yaml_out *y)
{
	yaml_event_t ev;

	emit(y, &ev, yaml_document_end_event_initialize(&ev, 1));
	emit(y, &ev, yaml_stream_end_event_initialize(&ev));
	if (!y->err && !yaml_emitter_flush(&y->em))
		y->err = -ENOMEM;
	yaml_emitter_delete(&y->em);
	strbuf_release(&y->scratch);
	return y->err;
}

static void scalar(struct yaml_out *y, const char *s, size_t len, yaml_scalar_style_t style)
{
	yaml_event_t ev;
	int plain = style == YAML_PLAIN_SCALAR_STYLE;

	emit(y, &ev, yaml_scalar_event_initialize(&ev, NULL, NULL, (yaml_char_t *)s, (int)len,
						  plain, !plain, style));
}

void yaml_out_str(struct yaml_out *y, const char *s, size_t len)
{
	if (y->err)
		return;
	if (!utf8_is_valid(s, len)) {
		strbuf_reset(&y->scratch);
		if (utf8_sanitize(s, len, 0, 0, &y->scratch) < 0) {
			y->err = -ENOMEM;
			return;
		}
		s = y->scratch.buf;
		len = y->scratch.len;
	}
	scalar(y, s, len, YAML_DOUBLE_QUOTED_SCALAR_STYLE);
}

void yaml_out_cstr(struct yaml_out *y, const char *s)
{
	if (s)
		yaml_out_str(y, s, strlen(s));
	else
		yaml_out_plain(y, "null");
}

void yaml_out_plain(struct yaml_out *y, const char *s)
{
	scalar(y, s, strlen(s), YAML_PLAIN_SCALAR_STYLE);
}

/* The start of a mapping or a sequence, in flow or block style. */
static void collection_begin(struct yaml_out *y, bool map, bool flow)
{
	yaml_event_t ev;
	int ok = map ? yaml_mapping_start_event_initialize(&ev, NULL, NULL, 1,
							   flow ? YAML_FLOW_MAPPING_STYLE :
								  YAML_BLOCK_MAPPING_STYLE) :
		       yaml_sequence_start_event_initialize(&ev, NULL, NULL, 1,
							    flow ? YAML_FLOW_SEQUENCE_STYLE :
								   YAML_BLOCK_SEQUENCE_STYLE);

	emit(y, &ev, ok);
}

void yaml_out_map_begin(struct yaml_out *y, bool flow)
{
	collection_begin(y, true, flow);
}

void yaml_out_map_end(struct yaml_out *y)
{
	yaml_event_t ev;

	emit(y, &ev, yaml_mapping_end_event_initialize(&ev));
}

void yaml_out_seq_begin(struct yaml_out *y, bool flow)
{
	collection_begin(y, false, flow);
}

void yaml_out_seq_end(struct yaml_out *y)
{
	yaml_event_t ev;

	emit(y, &ev, yaml_sequence_end_event_initialize(&ev));
}

/* Keys that read back as strings stay plain ("case", "error_type"); others are quoted. */
void yaml_out_key(struct yaml_out *y, const char *key)
{
	static const char *const words[] = { "null", "true", "false", "yes", "no", "on", "off",
					     "y", "n" };
	size_t i, len = strlen(key);
	bool plain = len && strspn(key, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
					"0123456789_-.") == len &&
		     !strchr("0123456789-.", key[0]);

	for (i = 0; plain && i < sizeof(words) / sizeof(words[0]); i++)
		if (!strcasecmp(key, words[i]))
			plain = false;
	if (plain)
		yaml_out_plain(y, key);
	else
		yaml_out_str(y, key, len);
}

/* A float YAML 1.1 resolvers (PyYAML's) read back as a float: it needs a '.'. */
static void real(struct yaml_out *y, double v)
{
	char buf[40], *e;

	if (isnan(v)) {
		yaml_out_plain(y, ".nan");
		return;
	}
	if (isinf(v)) {
		yaml_out_plain(y, v < 0 ? "-.inf" : ".inf");
		return;
	}
	snprintf(buf, sizeof(buf), "%.15g", v);
	if (!strchr(buf, '.')) {
		e = strchr(buf, 'e');
		if (e) {
			memmove(e + 2, e, strlen(e) + 1);
			memcpy(e, ".0", 2);
		} else {
			strcat(buf, ".0");
		}
	}
	yaml_out_plain(y, buf);
}

void yaml_out_json(struct yaml_out *y, const json_t *v, bool flow)
{
	const char *key;
	json_t *item;
	char num[32];
	size_t i;

	switch (v ? json_typeof(v) : JSON_NULL) {
	case JSON_OBJECT:
		yaml_out_map_begin(y, flow);
		json_object_foreach((json_t *)v, key, item) {
			yaml_out_key(y, key);
			yaml_out_json(y, item, flow);
		}
		yaml_out_map_end(y);
		break;
	case JSON_ARRAY:
		yaml_out_seq_begin(y, flow);
		json_array_foreach(v, i, item)
			yaml_out_json(y, item, flow);
		yaml_out_seq_end(y);
		break;
	case JSON_STRING:
		yaml_out_str(y, json_string_value(v), json_string_length(v));
		break;
	case JSON_INTEGER:
		snprintf(num, sizeof(num), "%" JSON_INTEGER_FORMAT, json_integer_value(v));
		yaml_out_plain(y, num);
		break;
	case JSON_REAL:
		real(y, json_real_value(v));
		break;
	case JSON_TRUE:
		yaml_out_plain(y, "true");
		break;
	case JSON_FALSE:
		yaml_out_plain(y, "false");
		break;
	case JSON_NULL:
		yaml_out_plain(y, "null");
		break;
	}
}
