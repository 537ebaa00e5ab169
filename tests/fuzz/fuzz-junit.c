// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * fuzz-junit.c -- the JUnit report of a job whose names, results and console
 * text are anything: well-formed XML (libxml2 parses it), <testsuites> at
 * its root, and one <testcase> per result plus the boot's
 */
#include <libxml/parser.h>
#include <libxml/tree.h>

#include "core/strbuf.h"
#include "fuzz.h"
#include "fuzz_report.h"
#include "results/junit.h"

static size_t count_cases(xmlNode *n)
{
	size_t c = 0;

	for (; n; n = n->next) {
		if (n->type != XML_ELEMENT_NODE)
			continue;
		if (!xmlStrcmp(n->name, (const xmlChar *)"testcase"))
			c++;
		c += count_cases(n->children);
	}
	return c;
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	xmlInitParser();
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct report *r = fuzz_report(data, size);
	struct strbuf xml = STRBUF_INIT;
	xmlDoc *doc;
	xmlNode *root;

	if (junit_build(r, &xml) == 0) {
		doc = xmlReadMemory(xml.buf, (int)xml.len, "junit.xml", NULL,
				    XML_PARSE_NONET | XML_PARSE_NOERROR | XML_PARSE_NOWARNING);
		if (!doc)
			fprintf(stderr, "not well-formed:\n%s\n", xml.buf);
		FUZZ_ASSERT(doc);
		root = xmlDocGetRootElement(doc);
		FUZZ_ASSERT(root && !xmlStrcmp(root->name, (const xmlChar *)"testsuites"));
		FUZZ_ASSERT(count_cases(root->children) == r->n_results + 1);
		xmlFreeDoc(doc);
	}
	strbuf_release(&xml);
	report_free(r);
	return 0;
}
