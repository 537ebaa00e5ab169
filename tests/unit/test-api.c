// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * test-api.c -- labd's HTTP API (api/) as clients reach it: labd's daemon
 * in the test's process on a loopback port, requests through libcurl from
 * the same loop (runbed.h, bed_start_daemon()), a board the test plays.
 * Routing and its errors, a job submitted, run, read back in every form
 * (the job, its log, events, results, JUnit, the list) and canceled,
 * invalid jobs, tokens, boards' state, reservations, LAVA's REST and
 * XML-RPC faces, /metrics
 */
#include <jansson.h>

#include "runbed.h"
#include "tap.h"

static struct bed b;

/* The fixture: one sim-minimal board, labd's daemon with labd.conf's @conf. */
static int bed_api(const char *conf)
{
	int err = bed_init(&b, conf);

	if (!err)
		err = bed_board(&b, "b1", "sim-minimal", NULL, "tags = [ \"arm64\" ];");
	if (err >= 0)
		err = bed_start_daemon(&b);
	return err < 0 ? err : 0;
}

static const char job_yaml[] =
	"job_name: api job\n"
	"device_type: sim-minimal\n"
	"timeouts: {job: {minutes: 30}, action: {minutes: 10}, connection: {minutes: 5}}\n"
	"actions:\n"
	"- boot: {method: minimal, reset: false, prompts: ['# ']}\n"
	"- test:\n"
	"    interactive:\n"
	"    - name: smoke\n"
	"      prompts: ['# ']\n"
	"      script:\n"
	"      - {command: uname, name: uname, successes: [{message: Linux}]}\n";

static struct bed_response resp;

/* @method @path with @body: its status (resp holds the answer), or -1 when none came. */
static long req(const char *method, const char *path, const char *body, const char *const *hdrs)
{
	bed_response_release(&resp);
	if (!bed_http(&b, method, path, body, hdrs, &resp))
		return -1;
	if (resp.status >= 400)
		printf("# %s %s: %ld %s\n", method, path, resp.status, resp.body);
	return resp.status;
}

/* The answer's JSON (a reference: decref it), or NULL. */
static json_t *json(void)
{
	json_t *j = json_loads(resp.body ? resp.body : "", JSON_DECODE_ANY, NULL);

	if (!j)
		printf("# not JSON: '%s'\n", resp.body ? resp.body : "(none)");
	return j;
}

/* The string @key of the answer's JSON object, in a static buffer ("" when absent). */
static const char *field(const char *key)
{
	static char buf[1024];
	json_t *j = json(), *v = json_object_get(j, key);

	if (json_is_string(v))
		snprintf(buf, sizeof(buf), "%s", json_string_value(v));
	else if (json_is_integer(v))
		snprintf(buf, sizeof(buf), "%lld", (long long)json_integer_value(v));
	else
		buf[0] = '\0';
	json_decref(j);
	return buf;
}

/* GET job @id until its @key is @want (labd steps between the reads); false if never. */
static bool job_becomes(int64_t id, const char *key, const char *want)
{
	char path[64];
	int i;

	snprintf(path, sizeof(path), "/api/v1/jobs/%lld", (long long)id);
	for (i = 0; i < 200; i++) {
		if (req("GET", path, NULL, NULL) == 200 && !strcmp(field(key), want))
			return true;
		bed_settle(&b);
	}
	printf("# job %lld: %s is '%s', not '%s'\n", (long long)id, key, field(key), want);
	return false;
}

/* Submit the job through POST /jobs: its id, or -1. */
static int64_t submit(void)
{
	static const char *const yaml[] = { "Content-Type: application/yaml", NULL };

	if (req("POST", "/api/v1/jobs?filename=smoke.yaml", job_yaml, yaml) != 201)
		return -1;
	return atoll(field("id"));
}

/* The board runs the job's boot and test to the end. */
static bool board_runs_it(void)
{
	bed_say(&b, 0, "# ");
	if (!bed_typed(&b, 0, "uname\n"))
		return false;
	bed_say(&b, 0, "uname\r\nLinux\r\n# ");
	return true;
}

/* Routing: unknown paths, methods, ids and query parameters, each with its status. */
TEST(test_api__routing)
{
	CHECK(bed_api(NULL) == 0);
	CHECK_INT(req("GET", "/api/v1/health", NULL, NULL), ==, 200);
	CHECK_STR(field("status"), "ok");
	CHECK_STR(field("lab"), "bed");
	CHECK_STR(field("boards"), "1");
	CHECK_INT(req("GET", "/api/v1/nothing-here", NULL, NULL), ==, 404);
	CHECK_INT(req("DELETE", "/api/v1/jobs", NULL, NULL), ==, 405);
	CHECK_CONTAINS(resp.allow, "GET");
	CHECK_CONTAINS(resp.allow, "POST");
	CHECK_INT(req("GET", "/api/v1/jobs/abc", NULL, NULL), ==, 400);
	CHECK_INT(req("GET", "/api/v1/jobs/99", NULL, NULL), ==, 404);
	CHECK_INT(req("GET", "/api/v1/jobs?colour=red", NULL, NULL), ==, 400);
	CHECK_CONTAINS(resp.body, "colour");
	CHECK_INT(req("GET", "/api/v1/jobs?limit=0", NULL, NULL), ==, 400);
	CHECK_INT(req("GET", "/api/v1/whoami", NULL, NULL), ==, 200);
	bed_response_release(&resp);
	bed_free(&b);
}

/* A job through the API: submitted, running, complete, and read back in every form. */
TEST(test_api__job)
{
	json_t *j;
	int64_t id;
	char path[128];

	CHECK(bed_api(NULL) == 0);
	CHECK((id = submit()) > 0);
	CHECK_STR(field("url"), "/api/v1/jobs/1");
	CHECK(job_becomes(id, "state", "running"));
	CHECK_STR(field("device"), "b1");
	CHECK(board_runs_it());
	CHECK(job_becomes(id, "health", "complete"));
	CHECK_STR(field("filename"), "smoke.yaml");
	CHECK_CONTAINS(field("definition"), "job_name: api job");

	snprintf(path, sizeof(path), "/api/v1/jobs/%lld/log", (long long)id);
	CHECK_INT(req("GET", path, NULL, NULL), ==, 200);
	CHECK_STR(resp.body, "# uname\r\nLinux\r\n# ");	/* byte-exact */
	snprintf(path, sizeof(path), "/api/v1/jobs/%lld/log?labd=1", (long long)id);
	CHECK_INT(req("GET", path, NULL, NULL), ==, 200);
	CHECK_CONTAINS(resp.body, "# labd: ");
	CHECK_CONTAINS(resp.body, "job complete");
	snprintf(path, sizeof(path), "/api/v1/jobs/%lld/log?offset=2", (long long)id);
	CHECK_INT(req("GET", path, NULL, NULL), ==, 200);
	CHECK_STR(resp.body, "uname\r\nLinux\r\n# ");

	snprintf(path, sizeof(path), "/api/v1/jobs/%lld/results", (long long)id);
	CHECK_INT(req("GET", path, NULL, NULL), ==, 200);
	CHECK((j = json()) && json_array_size(j) == 1);
	CHECK_STR(json_string_value(json_object_get(json_array_get(j, 0), "name")), "uname");
	CHECK_STR(json_string_value(json_object_get(json_array_get(j, 0), "result")), "pass");
	json_decref(j);

	snprintf(path, sizeof(path), "/api/v1/jobs/%lld/events", (long long)id);
	CHECK_INT(req("GET", path, NULL, NULL), ==, 200);
	CHECK_CONTAINS(resp.body, "\"queued\"");
	CHECK_CONTAINS(resp.body, "\"started\"");
	CHECK_CONTAINS(resp.body, "\"finished\"");
	snprintf(path, sizeof(path), "/api/v1/jobs/%lld/junit", (long long)id);
	CHECK_INT(req("GET", path, NULL, NULL), ==, 200);
	CHECK_CONTAINS(resp.type, "xml");
	CHECK_CONTAINS(resp.body, "<testcase");

	CHECK_INT(req("GET", "/api/v1/jobs?state=finished", NULL, NULL), ==, 200);
	CHECK((j = json()) && json_array_size(j) == 1);
	json_decref(j);
	CHECK_INT(req("GET", "/api/v1/jobs?state=queued", NULL, NULL), ==, 200);
	CHECK_STR(resp.body, "[]\n");
	snprintf(path, sizeof(path), "/api/v1/jobs/%lld/cancel", (long long)id);
	CHECK_INT(req("POST", path, "", NULL), ==, 409);	/* it finished */
	bed_response_release(&resp);
	bed_free(&b);
}

/* An invalid job: 422 with every problem named by file and line; dry_run only checks. */
TEST(test_api__invalid_job)
{
	json_t *j;

	CHECK(bed_api(NULL) == 0);
	CHECK_INT(req("POST", "/api/v1/jobs?filename=bad.yaml",
		      "job_name: x\ndevice_type: sim-minimal\ncolour: red\n", NULL), ==, 422);
	CHECK((j = json()));
	CHECK_STR(json_string_value(json_object_get(j, "error")), "invalid job");
	CHECK_CONTAINS(json_string_value(json_array_get(json_object_get(j, "errors"), 0)),
		       "bad.yaml:");
	CHECK_CONTAINS(resp.body, "colour");
	json_decref(j);
	CHECK_INT(req("POST", "/api/v1/jobs", "", NULL), ==, 400);
	CHECK_INT(req("POST", "/api/v1/jobs", "{\"job_name\": ", NULL), ==, 422);
	CHECK_INT(req("POST", "/api/v1/jobs?dry_run=1", job_yaml, NULL), ==, 200);
	CHECK_CONTAINS(resp.body, "\"valid\":true");
	CHECK_INT(req("GET", "/api/v1/jobs", NULL, NULL), ==, 200);
	CHECK_STR(resp.body, "[]\n");	/* nothing was queued */
	bed_response_release(&resp);
	bed_free(&b);
}

/* A running job canceled through the API: canceling, then canceled once the board is off. */
TEST(test_api__cancel)
{
	int64_t id;

	CHECK(bed_api(NULL) == 0);
	CHECK((id = submit()) > 0);
	CHECK(job_becomes(id, "state", "running"));
	CHECK_INT(req("POST", "/api/v1/jobs/1/cancel", "", NULL), ==, 200);
	CHECK(job_becomes(id, "health", "canceled"));
	CHECK_CONTAINS(field("error_msg"), "canceled");
	bed_response_release(&resp);
	bed_free(&b);
}

/* require_token: no token or a wrong one 401 (with the challenge), /health open. */
TEST(test_api__tokens)
{
	static const char *const good[] = { "Authorization: Bearer t0ken", NULL };
	static const char *const bad[] = { "Authorization: Bearer nope", NULL };
	static const char *const lava[] = { "Authorization: Token t0ken", NULL };

	CHECK(bed_api("http = { require_token = true; tokens = [ \"t0ken\" ]; };") == 0);
	CHECK_INT(req("GET", "/api/v1/jobs", NULL, NULL), ==, 401);
	CHECK_CONTAINS(resp.auth, "Bearer");
	CHECK_INT(req("GET", "/api/v1/jobs", NULL, bad), ==, 401);
	CHECK_CONTAINS(resp.body, "invalid token");
	CHECK_INT(req("GET", "/api/v1/jobs", NULL, good), ==, 200);
	CHECK_INT(req("GET", "/api/v1/jobs", NULL, lava), ==, 200);
	CHECK_INT(req("GET", "/api/v1/health", NULL, NULL), ==, 200);
	CHECK_INT(req("GET", "/api/v1/whoami", NULL, good), ==, 200);
	CHECK_CONTAINS(resp.body, "token:");
	bed_response_release(&resp);
	bed_free(&b);
}

/* Boards: listed, one read, taken out and put back; errors for bad requests. */
TEST(test_api__devices)
{
	json_t *j;

	CHECK(bed_api(NULL) == 0);
	CHECK_INT(req("GET", "/api/v1/devices", NULL, NULL), ==, 200);
	CHECK((j = json()) && json_array_size(j) == 1);
	CHECK_STR(json_string_value(json_object_get(json_array_get(j, 0), "name")), "b1");
	CHECK_STR(json_string_value(json_object_get(json_array_get(j, 0), "state")), "idle");
	CHECK(json_is_true(json_object_get(json_array_get(j, 0), "console_up")));
	json_decref(j);
	CHECK_INT(req("POST", "/api/v1/devices/b1/state",
		      "{\"state\": \"maintenance\", \"reason\": \"new cable\"}", NULL), ==, 200);
	CHECK_STR(field("state"), "maintenance");
	CHECK_INT(req("GET", "/api/v1/devices/b1", NULL, NULL), ==, 200);
	CHECK_STR(field("reason"), "new cable (set by anonymous)");
	CHECK_INT(req("POST", "/api/v1/devices/b1/state", "{\"state\": \"idle\"}", NULL), ==, 200);
	CHECK_STR(field("state"), "idle");
	CHECK_INT(req("POST", "/api/v1/devices/b1/state", "{\"state\": \"running\"}", NULL), ==, 400);
	CHECK_INT(req("POST", "/api/v1/devices/b1/state", "{not json", NULL), ==, 400);
	CHECK_INT(req("GET", "/api/v1/devices/nope", NULL, NULL), ==, 404);
	CHECK_INT(req("GET", "/api/v1/device-types", NULL, NULL), ==, 200);
	CHECK_CONTAINS(resp.body, "sim-minimal");
	CHECK_INT(req("GET", "/api/v1/queue", NULL, NULL), ==, 200);
	bed_response_release(&resp);
	bed_free(&b);
}

/* A reservation of the idle board: granted at once, listed, canceled. */
TEST(test_api__reservations)
{
	CHECK(bed_api(NULL) == 0);
	CHECK_INT(req("POST", "/api/v1/reservations",
		      "{\"device_type\": \"sim-minimal\", \"duration\": 600}", NULL), ==, 201);
	CHECK_STR(field("id"), "1");
	bed_settle(&b);
	CHECK_INT(req("GET", "/api/v1/reservations/1", NULL, NULL), ==, 200);
	CHECK_STR(field("state"), "active");
	CHECK_STR(field("device"), "b1");
	CHECK_INT(req("GET", "/api/v1/devices/b1", NULL, NULL), ==, 200);
	CHECK_STR(field("state"), "reserved");
	CHECK_INT(req("GET", "/api/v1/reservations", NULL, NULL), ==, 200);
	CHECK_CONTAINS(resp.body, "\"b1\"");
	CHECK_INT(req("POST", "/api/v1/reservations/1/cancel", "", NULL), ==, 200);
	bed_settle(&b);
	CHECK_INT(req("GET", "/api/v1/reservations/1", NULL, NULL), ==, 200);
	CHECK_STR(field("state"), "ended");
	CHECK_INT(req("POST", "/api/v1/reservations", "{\"device_type\": \"nope\"}", NULL), >=, 400);
	bed_response_release(&resp);
	bed_free(&b);
}

/* LAVA's REST and XML-RPC faces: a job submitted by each, read back by the other. */
TEST(test_api__lava)
{
	static const char *const xml[] = { "Content-Type: text/xml", NULL };
	static const char *const json_type[] = { "Content-Type: application/json", NULL };
	char body[4096], *text;
	json_t *j;

	CHECK(bed_api(NULL) == 0);
	j = json_pack("{s:s}", "definition", job_yaml);
	text = json_dumps(j, 0);
	json_decref(j);
	CHECK_INT(req("POST", "/api/v0.2/jobs/", text, json_type), ==, 201);
	free(text);
	CHECK_CONTAINS(resp.body, "\"job_ids\":[1]");
	snprintf(body, sizeof(body),
		 "<?xml version=\"1.0\"?><methodCall><methodName>scheduler.jobs.show</methodName>"
		 "<params><param><value><int>1</int></value></param></params></methodCall>");
	CHECK_INT(req("POST", "/RPC2", body, xml), ==, 200);
	CHECK_CONTAINS(resp.body, "<name>description</name>");
	CHECK_CONTAINS(resp.body, "<value><string>api job</string>");
	CHECK_CONTAINS(resp.body, "<value><string>Running</string>");
	snprintf(body, sizeof(body),
		 "<?xml version=\"1.0\"?><methodCall><methodName>system.version</methodName>"
		 "<params></params></methodCall>");
	CHECK_INT(req("POST", "/RPC2", body, xml), ==, 200);
	CHECK_CONTAINS(resp.body, "<string>");
	snprintf(body, sizeof(body),
		 "<?xml version=\"1.0\"?><methodCall><methodName>scheduler.jobs.nope</methodName>"
		 "<params></params></methodCall>");
	CHECK_INT(req("POST", "/RPC2", body, xml), ==, 200);
	CHECK_CONTAINS(resp.body, "<fault>");
	CHECK_INT(req("GET", "/api/v0.2/jobs/1/", NULL, NULL), ==, 200);
	CHECK_STR(field("description"), "api job");
	CHECK_INT(req("GET", "/api/v0.2/devices/", NULL, NULL), ==, 200);
	CHECK_CONTAINS(resp.body, "\"hostname\":\"b1\"");
	bed_response_release(&resp);
	bed_free(&b);
}

/* /metrics: the Prometheus text, with the lab's boards and jobs. */
TEST(test_api__metrics)
{
	int64_t id;

	CHECK(bed_api(NULL) == 0);
	CHECK((id = submit()) > 0);
	CHECK(job_becomes(id, "state", "running"));
	CHECK_INT(req("GET", "/metrics", NULL, NULL), ==, 200);
	CHECK_CONTAINS(resp.type, "text/plain");
	CHECK_CONTAINS(resp.body, "# TYPE labd_");
	CHECK_CONTAINS(resp.body, "b1");
	bed_response_release(&resp);
	bed_free(&b);
}

static bool got_text(struct bed *bed, void *ud)
{
	struct bed_response *r = ud;

	return r->got.len && strstr(r->got.buf, "\"finished\"");
}

/* A followed log streams until the job ended; the events stream tells its end. */
TEST(test_api__follow_and_stream)
{
	struct bed_response follow, stream;
	int64_t id;

	CHECK(bed_api(NULL) == 0);
	CHECK((id = submit()) > 0);
	CHECK(job_becomes(id, "state", "running"));
	CHECK(bed_http_start(&b, "GET", "/api/v1/stream?job=1", NULL, NULL, &stream));
	CHECK(bed_http_start(&b, "GET", "/api/v1/jobs/1/log?follow=1&labd=1", NULL, NULL, &follow));
	CHECK(board_runs_it());
	CHECK(bed_until(&b, bed_response_done, &follow));
	CHECK_INT(follow.status, ==, 200);
	CHECK_CONTAINS(follow.body, "\n# uname\r\n");
	CHECK_CONTAINS(follow.body, "Linux\r\n# ");
	CHECK_CONTAINS(follow.body, "# labd: ");
	CHECK_CONTAINS(follow.body, "job complete");
	CHECK(bed_until(&b, got_text, &stream));
	CHECK(!stream.done);		/* a stream goes on */
	CHECK_CONTAINS(stream.got.buf, "event: ");
	bed_http_cancel(&stream);
	bed_response_release(&stream);
	bed_response_release(&follow);
	bed_response_release(&resp);
	bed_free(&b);
}

/* A holder's board: power switched and answered when done, a session boot, renew, release. */
TEST(test_api__sessions)
{
	static const char boot[] =
		"{\"job\": \"job_name: mine\\ndevice_type: sim-minimal\\n"
		"timeouts: {job: {minutes: 5}}\\nactions:\\n"
		"- boot: {method: minimal, prompts: ['# ']}\\n\"}";
	char *power;

	CHECK(bed_api(NULL) == 0);
	CHECK_INT(req("POST", "/api/v1/devices/b1/power", "{\"action\": \"on\"}", NULL), ==, 409);
	CHECK_INT(req("POST", "/api/v1/reservations",
		      "{\"board\": \"b1\", \"duration\": 600}", NULL), ==, 201);
	bed_settle(&b);
	CHECK_INT(req("POST", "/api/v1/devices/b1/power", "{\"action\": \"on\"}", NULL), ==, 200);
	CHECK_INT(req("POST", "/api/v1/devices/b1/power", "{\"action\": \"up\"}", NULL), ==, 400);
	CHECK_INT(req("POST", "/api/v1/devices/b1/boot", boot, NULL), ==, 201);
	CHECK_STR(field("board"), "b1");
	CHECK(bed_powered_on(&b, 0, 2));
	bed_say(&b, 0, "# ");
	CHECK(job_becomes(1, "health", "complete"));	/* the session's job */
	power = bed_power_log(&b, 0);
	CHECK_STR(power, "on\noff\non\n");	/* the holder's on, the boot's cycle, left on */
	free(power);
	CHECK_INT(req("POST", "/api/v1/devices/b1/renew", "{\"duration\": 1200}", NULL), ==, 200);
	CHECK_INT(req("POST", "/api/v1/devices/b1/release", "", NULL), ==, 200);
	bed_settle(&b);
	CHECK_INT(req("GET", "/api/v1/devices/b1", NULL, NULL), ==, 200);
	CHECK(strcmp(field("state"), "reserved"));
	bed_response_release(&resp);
	bed_free(&b);
}

/* A token made through the API authenticates as its user, with its role. */
TEST(test_api__tokens_made)
{
	char hdr[256];
	const char *hdrs[] = { hdr, NULL };

	CHECK(bed_api(NULL) == 0);
	CHECK_INT(req("POST", "/api/v1/tokens", "{\"user\": \"alice\", \"role\": \"reader\"}",
		      NULL), ==, 201);
	snprintf(hdr, sizeof(hdr), "Authorization: Bearer %s", field("token"));
	CHECK_STR(field("user"), "alice");
	CHECK_INT(req("GET", "/api/v1/whoami", NULL, hdrs), ==, 200);
	CHECK_CONTAINS(resp.body, "alice");
	CHECK_CONTAINS(resp.body, "reader");
	CHECK_INT(req("POST", "/api/v1/jobs", job_yaml, hdrs), ==, 403);	/* a reader */
	CHECK_INT(req("POST", "/api/v1/tokens", "{\"user\": \"bob\", \"role\": \"god\"}", NULL),
		  ==, 400);
	bed_response_release(&resp);
	bed_free(&b);
}

/* LAVA's REST API reads a finished job the way lavacli and squad do. */
TEST(test_api__lava_rest_reads)
{
	CHECK(bed_api(NULL) == 0);
	CHECK(submit() == 1);
	CHECK(job_becomes(1, "state", "running"));
	CHECK(board_runs_it());
	CHECK(job_becomes(1, "health", "complete"));
	CHECK_INT(req("GET", "/api/v0.2/jobs/?state=Finished", NULL, NULL), ==, 200);
	CHECK_CONTAINS(resp.body, "\"health\":\"Complete\"");
	CHECK_INT(req("GET", "/api/v0.2/jobs/1/suites/", NULL, NULL), ==, 200);
	CHECK_CONTAINS(resp.body, "smoke");
	CHECK_INT(req("GET", "/api/v0.2/jobs/1/tests/", NULL, NULL), ==, 200);
	CHECK_CONTAINS(resp.body, "\"name\":\"uname\"");
	CHECK_INT(req("GET", "/api/v0.2/jobs/1/logs/", NULL, NULL), ==, 200);
	CHECK_CONTAINS(resp.body, "\"lvl\": \"target\", \"msg\": \"Linux\\r\"");
	CHECK_INT(req("GET", "/api/v0.2/jobs/1/junit/", NULL, NULL), ==, 200);
	CHECK_CONTAINS(resp.body, "<testsuite");
	CHECK_INT(req("GET", "/api/v0.2/system/version/", NULL, NULL), ==, 200);
	CHECK_INT(req("GET", "/api/v0.2/devicetypes/", NULL, NULL), ==, 200);
	CHECK_CONTAINS(resp.body, "sim-minimal");
	CHECK_INT(req("GET", "/api/v0.2/workers/", NULL, NULL), ==, 200);
	CHECK_INT(req("POST", "/api/v0.2/jobs/validate/", "{\"definition\": \"job_name: x\"}",
		      (const char *const[]){ "Content-Type: application/json", NULL }), ==, 200);
	CHECK_CONTAINS(resp.body, "Job invalid");
	CHECK_INT(req("GET", "/api/v0.2/jobs/9/", NULL, NULL), ==, 404);
	bed_response_release(&resp);
	bed_free(&b);
}

TEST_LIST(test_api__routing, test_api__job, test_api__invalid_job, test_api__cancel,
	  test_api__tokens, test_api__devices, test_api__reservations, test_api__lava,
	  test_api__metrics, test_api__follow_and_stream, test_api__sessions,
	  test_api__tokens_made, test_api__lava_rest_reads);
