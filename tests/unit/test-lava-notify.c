// SPDX-License-Identifier: GPL-2.0-or-later
/* test-lava-notify.c -- dispatcher/results/lava_notify.c: LAVA's callback body, URL and form */
#include <stdlib.h>
#include <string.h>

#include "results/lava_notify.h"
#include "store/store.h"
#include "tap.h"

TEST(test_lava_notify__data)
{
	struct job_record rec = {
		.id = 42, .name = "kernelci job", .priority = 80, .submitter = "kci",
		.submitted = 1767268800123456ULL, .started = 1767268801000000ULL,
		.ended = 1767268900000000ULL, .state = JOB_STATE_FINISHED,
		.health = JOB_HEALTH_INCOMPLETE, .device = "qemu-01",
		.definition = "job_name: kernelci job\n",
	};
	json_t *meta = json_pack("{s:s}", "api_config_name", "staging");
	json_t *d = lava_notify_data(&rec, meta, NULL, NULL);
	char *text;

	CHECK(d);
	text = json_dumps(d, JSON_COMPACT | JSON_SORT_KEYS);
	CHECK_STR(text, "{\"actual_device_id\":\"qemu-01\",\"definition\":\"job_name: kernelci job\\n\","
		  "\"description\":\"kernelci job\",\"end_time\":\"2026-01-01 12:01:40+00:00\","
		  "\"failure_comment\":\"\",\"health\":2,\"health_check\":false,"
		  "\"health_string\":\"Incomplete\",\"id\":42,\"metadata\":{\"api_config_name\":\"staging\"},"
		  "\"priority\":80,\"start_time\":\"2026-01-01 12:00:01+00:00\",\"state\":5,"
		  "\"state_string\":\"Finished\",\"status\":3,\"status_string\":\"incomplete\","
		  "\"submit_time\":\"2026-01-01 12:00:00.123456+00:00\",\"submitter_email\":\"\","
		  "\"submitter_username\":\"kci\"}");
	free(text);
	text = lava_notify_url("https://ci/{ID}/{STATUS_STRING}/{NOPE}/{METADATA}?h={HEALTH}", d);
	CHECK_STR(text, "https://ci/42/incomplete/{NOPE}/{METADATA}?h=2");
	free(text);
	json_decref(d);
	d = json_pack("{s:i, s:s, s:{s:s}}", "id", 42, "s", "a b&c", "metadata", "k", "v");
	text = lava_notify_urlencoded(d);
	CHECK_STR(text, "id=42&s=a%20b%26c&metadata=%7B%22k%22%3A%22v%22%7D");
	free(text);
	json_decref(d);
	json_decref(meta);
}

TEST_LIST(test_lava_notify__data);
