// SPDX-License-Identifier: GPL-2.0-or-later
/* job_json.c -- the JSON front end of the job parser: jansson values, libyaml lines */
#include "job/job_doc.h"

#include <errno.h>

/*
 * jansson gives the values (and syntax errors with their line and column) but
 * no position per value.  JSON is YAML flow syntax, so the YAML front end is
 * run over the same text in lines-only mode to fill the path -> line map.
 * Should libyaml reject something jansson accepts, the map stays partial and
 * messages fall back to the nearest enclosing value that has a line; they
 * always name the path.  That pass also warns about duplicate keys.
 */
int job_json_load(struct job_doc *doc, const char *text, size_t len)
{
	json_error_t err;
	json_t *root;

	/* a duplicate key keeps its last value, as in YAML: the lines pass warns */
	root = json_loadb(text, len, 0, &err);
	if (!root) {
		if (json_error_code(&err) == json_error_out_of_memory)
			return job_doc_nomem(doc);
		if (err.column > 0)
			return job_doc_error_at(doc, err.line, "invalid JSON: %s (column %d)",
						err.text, err.column);
		return job_doc_error_at(doc, err.line, "invalid JSON: %s", err.text);
	}
	if (job_yaml_load(doc, text, len, true) == -ENOMEM) {
		json_decref(root);
		return -ENOMEM;
	}
	doc->root = root;
	return 0;
}
