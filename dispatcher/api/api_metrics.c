// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * api_metrics.c -- GET /metrics: the lab in Prometheus' text exposition format
 *
 * Gauges are read when scraped (boards, queue, spools, file descriptors);
 * counters and histograms are kept here from job events, answered requests
 * and a loop-lag probe.  Counters start at zero with each labd process, as
 * Prometheus expects of a restarted target.  Labels stay bounded by the lab:
 * finished jobs are counted per board (and its device type) that ran one,
 * at most METRICS_MAX_BOARDS boards (others as board="other"); boot phases
 * per device type and phase name, at most METRICS_MAX_PHASES pairs.  Names follow Prometheus'
 * conventions: labd_ prefix, _total for counters, base units (_seconds,
 * _bytes).  doc/metrics.md lists every metric.
 */
#include <dirent.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "api/api_internal.h"
#include "journal/retention.h"
#include "results/backends/backend.h"
#include "board/board.h"
#include "config/config.h"
#include "board/consolebuf.h"
#include "board/lab.h"
#include "journal/events.h"
#include "core/log.h"
#include "core/loop.h"
#include "job/job.h"
#include "run/run.h"
#include "sched/sched.h"
#include "store/store.h"
#include "core/version.h"

#define METRICS_CONTENT_TYPE "text/plain; version=0.0.4; charset=utf-8"
#define METRICS_MAX_ROUTES 128	/* (route, status) pairs counted; more go to "other" */
#define METRICS_MAX_PHASES 256	/* (device type, boot phase) pairs with a histogram */
#define METRICS_MAX_BOARDS 8192	/* boards whose finished jobs are counted by name */
#define METRICS_NAME_MAX 64	/* of a board or device type name in a label */
#define METRICS_LAG_PERIOD (1000 * 1000ULL)	/* usec between loop-lag probes */
#define HEALTH_COUNT (JOB_HEALTH_CANCELED + 1)
#define ERROR_TYPE_COUNT (ERROR_BUG + 1)
#define MAX_BUCKETS 12
#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))

struct histogram {
	const double *bounds;	/* upper bounds, ascending; +Inf is implicit */
	size_t n_bounds;
	uint64_t counts[MAX_BUCKETS];	/* per bucket, not cumulative */
	uint64_t count;
	double sum;
};

struct route_count {
	char route[96];
	unsigned status;
	uint64_t n;
};

struct phase_hist {
	char name[32];
	char type[METRICS_NAME_MAX];	/* the device type of the boards that reached it */
	struct histogram h;
};

/* The jobs a board finished, by health and error type. */
struct board_count {
	char board[METRICS_NAME_MAX];
	char type[METRICS_NAME_MAX];
	uint64_t finished[HEALTH_COUNT][ERROR_TYPE_COUNT];
};

struct api_metrics {
	const struct api_deps *d;
	struct events_listener *events;
	struct loop_source *lag_timer;
	uint64_t lag_due;
	struct board_count *boards;	/* by the order they first finished a job */
	size_t n_boards;
	struct histogram job_seconds;
	struct histogram lag_seconds;
	struct phase_hist phases[METRICS_MAX_PHASES];
	size_t n_phases;
	struct route_count routes[METRICS_MAX_ROUTES];
	size_t n_routes;
};

static const double job_bounds[] = { 10, 30, 60, 120, 300, 600, 1200, 1800, 3600, 7200 };
static const double phase_bounds[] = { 0.5, 1, 2, 5, 10, 20, 30, 60, 120, 300 };
static const double lag_bounds[] = { 0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 5 };

static void hist_init(struct histogram *h, const double *bounds, size_t n)
{
	memset(h, 0, sizeof(*h));
	h->bounds = bounds;
	h->n_bounds = n < MAX_BUCKETS ? n : MAX_BUCKETS - 1;
}

static void hist_observe(struct histogram *h, double v)
{
	size_t i = 0;

	while (i < h->n_bounds && v > h->bounds[i])
		i++;
	h->counts[i]++;	/* i == n_bounds: the +Inf bucket */
	h->count++;
	h->sum += v;
}

/* ---- what is counted ---- */

/* A finished job's duration, once its record is read (store_read_later()). */
struct duration_due {
	struct api_metrics *m;
	int64_t job_id;
	uint64_t ended;
};

static void observe_duration(void *userdata)
{
	struct duration_due *d = userdata;
	struct job_record rec = { 0 };

	/* from the record: the "started" event may predate this process */
	if (store_job_get(d->m->d->store, d->job_id, &rec) == 0 && rec.started &&
	    d->ended > rec.started)
		hist_observe(&d->m->job_seconds, (double)(d->ended - rec.started) / 1e6);
	job_record_release(&rec);
}

/* The counts of board @name (of device type @type): found, added, or "other". */
static struct board_count *board_count(struct api_metrics *m, const char *name, const char *type)
{
	struct board_count *grown;
	size_t i;

	if (!name || strlen(name) >= METRICS_NAME_MAX || strlen(type) >= METRICS_NAME_MAX)
		name = "other";
	for (i = 0; i < m->n_boards; i++)
		if (!strcmp(m->boards[i].board, name))
			return &m->boards[i];
	if (m->n_boards == METRICS_MAX_BOARDS)
		return board_count(m, "other", "");
	grown = realloc(m->boards, (m->n_boards + 1) * sizeof(*grown));
	if (!grown)
		return NULL;
	m->boards = grown;
	memset(&grown[m->n_boards], 0, sizeof(*grown));
	snprintf(grown[m->n_boards].board, METRICS_NAME_MAX, "%s", name);
	snprintf(grown[m->n_boards].type, METRICS_NAME_MAX, "%s", type);
	return &grown[m->n_boards++];
}

/* The device type of board @name as configured now, or "" (a board gone by a reload). */
static const char *type_of_board(struct api_metrics *m, const char *name)
{
	struct board *b = name ? lab_board(m->d->lab, name) : NULL;

	return b ? board_device(b)->type_name : "";
}

static void count_finished(struct api_metrics *m, const struct event *ev)
{
	const char *board = json_string_value(json_object_get(ev->data, "device"));
	struct duration_due *d = malloc(sizeof(*d));
	struct board_count *c = board_count(m, board, type_of_board(m, board));
	enum job_health h;
	enum error_type t;

	if (job_health_from_name(json_string_value(json_object_get(ev->data, "health")), &h) < 0)
		h = JOB_HEALTH_UNKNOWN;
	if (error_type_from_name(json_string_value(json_object_get(ev->data, "error_type")),
				 &t) < 0)
		t = ERROR_NONE;
	if (c)
		c->finished[h][t]++;
	if (!d || !m->d->store) {
		free(d);	/* out of memory (or no store): its duration is not counted */
		return;
	}
	*d = (struct duration_due){ m, ev->job_id, ev->ts };
	store_read_later(m->d->store, m, observe_duration, free, d);
}

/* The device type of job @id while it runs here, or "". */
static const char *type_of_job(struct api_metrics *m, int64_t id)
{
	struct run *r = m->d->sched ? sched_run_of(m->d->sched, id) : NULL;

	return r && run_job(r)->device_type ? run_job(r)->device_type : "";
}

/*
 * A boot phase was reached @t seconds after power-on: the histogram of its
 * name and the job's device type (a type's boot getting slower is seen).
 */
static void count_phase(struct api_metrics *m, const struct event *ev)
{
	const char *name = json_string_value(json_object_get(ev->data, "phase"));
	const char *type = type_of_job(m, ev->job_id);
	json_t *t = json_object_get(ev->data, "t");
	size_t i;

	if (!name || !json_is_number(t))
		return;
	for (i = 0; i < m->n_phases; i++)
		if (!strcmp(m->phases[i].name, name) && !strcmp(m->phases[i].type, type))
			break;
	if (i == m->n_phases) {
		if (m->n_phases == METRICS_MAX_PHASES || strlen(name) >= sizeof(m->phases[i].name) ||
		    strlen(type) >= sizeof(m->phases[i].type))
			return;
		snprintf(m->phases[i].name, sizeof(m->phases[i].name), "%s", name);
		snprintf(m->phases[i].type, sizeof(m->phases[i].type), "%s", type);
		hist_init(&m->phases[i].h, phase_bounds, ARRAY_SIZE(phase_bounds));
		m->n_phases++;
	}
	hist_observe(&m->phases[i].h, json_number_value(t));
}

static void on_event(const struct event *ev, void *ud)
{
	if (!strcmp(ev->kind, "finished"))
		count_finished(ud, ev);
	else if (!strcmp(ev->kind, "phase"))
		count_phase(ud, ev);
}

void api_metrics_count(struct api_metrics *m, const char *route, const char *prefix,
		       unsigned status)
{
	char name[sizeof(m->routes[0].route)];
	size_t i;

	if (!m)
		return;
	snprintf(name, sizeof(name), "%s%s", route ? prefix : "", route ? route : "other");
	for (i = 0; i < m->n_routes; i++)
		if (m->routes[i].status == status && !strcmp(m->routes[i].route, name))
			break;
	if (i == m->n_routes) {
		if (m->n_routes == METRICS_MAX_ROUTES)
			return;
		snprintf(m->routes[i].route, sizeof(m->routes[i].route), "%s", name);
		m->routes[i].status = status;
		m->n_routes++;
	}
	m->routes[i].n++;
}

/* How late the loop runs a timer: the time a ready event waits for its turn. */
static int on_lag_timer(struct loop_source *s, uint64_t now, void *ud)
{
	struct api_metrics *m = ud;

	hist_observe(&m->lag_seconds, now > m->lag_due ? (double)(now - m->lag_due) / 1e6 : 0);
	m->lag_due = now + METRICS_LAG_PERIOD;
	loop_timer_set(s, m->lag_due);
	return 0;
}

/* ---- the exposition ---- */

/* A label value: backslash, double quote and newline escaped. */
static void add_label(struct strbuf *out, const char *v)
{
	for (; v && *v; v++) {
		if (*v == '\\' || *v == '"')
			strbuf_addch(out, '\\');
		if (*v == '\n')
			strbuf_addstr(out, "\\n");
		else
			strbuf_addch(out, *v);
	}
}

static void add_help(struct strbuf *out, const char *name, const char *type, const char *help)
{
	strbuf_addf(out, "# HELP %s %s\n# TYPE %s %s\n", name, help, name, type);
}

/* @labels: "" or `phase="boot",` (with the comma) */
static void add_histogram(struct strbuf *out, const char *name, const char *labels,
			  const struct histogram *h)
{
	uint64_t cum = 0;
	size_t i;

	for (i = 0; i < h->n_bounds; i++) {
		cum += h->counts[i];
		strbuf_addf(out, "%s_bucket{%sle=\"%g\"} %llu\n", name, labels, h->bounds[i],
			    (unsigned long long)cum);
	}
	strbuf_addf(out, "%s_bucket{%sle=\"+Inf\"} %llu\n", name, labels,
		    (unsigned long long)h->count);
	if (*labels)
		strbuf_addf(out, "%s_sum{%.*s} %.6f\n%s_count{%.*s} %llu\n", name,
			    (int)strlen(labels) - 1, labels, h->sum, name, (int)strlen(labels) - 1,
			    labels, (unsigned long long)h->count);
	else
		strbuf_addf(out, "%s_sum %.6f\n%s_count %llu\n", name, h->sum, name,
			    (unsigned long long)h->count);
}

static void add_boards(struct strbuf *out, const struct api_type_stats *s, uint64_t now)
{
	size_t i;
	unsigned st;

	add_help(out, "labd_boards", "gauge", "Boards by device type and state.");
	for (i = 0; i < s->n; i++)
		for (st = 0; st < DEVICE_STATE_COUNT; st++) {
			strbuf_addstr(out, "labd_boards{device_type=\"");
			add_label(out, s->types[i].name);
			strbuf_addf(out, "\",state=\"%s\"} %zu\n", device_state_name(st),
				    s->types[i].boards[st]);
		}
	add_help(out, "labd_boards_console_down", "gauge",
		 "Boards whose console is not open, by device type.");
	for (i = 0; i < s->n; i++) {
		strbuf_addstr(out, "labd_boards_console_down{device_type=\"");
		add_label(out, s->types[i].name);
		strbuf_addf(out, "\"} %zu\n", s->types[i].console_down);
	}
	add_help(out, "labd_queue_jobs", "gauge", "Jobs waiting for a board, by device type.");
	for (i = 0; i < s->n; i++) {
		strbuf_addstr(out, "labd_queue_jobs{device_type=\"");
		add_label(out, s->types[i].name);
		strbuf_addf(out, "\"} %lld\n", (long long)s->types[i].queued);
	}
	add_help(out, "labd_queue_reservations", "gauge",
		 "Reservations waiting for a board, by device type.");
	for (i = 0; i < s->n; i++) {
		strbuf_addstr(out, "labd_queue_reservations{device_type=\"");
		add_label(out, s->types[i].name);
		strbuf_addf(out, "\"} %lld\n", (long long)s->types[i].reservations);
	}
	add_help(out, "labd_queue_oldest_wait_seconds", "gauge",
		 "How long the oldest queued job of a device type has waited (0: none).");
	for (i = 0; i < s->n; i++) {
		uint64_t o = s->types[i].oldest;

		strbuf_addstr(out, "labd_queue_oldest_wait_seconds{device_type=\"");
		add_label(out, s->types[i].name);
		strbuf_addf(out, "\"} %.3f\n", o && now > o ? (double)(now - o) / 1e6 : 0.0);
	}
}

/* Whether a job can end so: complete and canceled have no error type, incomplete has one. */
static bool outcome_exists(unsigned h, unsigned t)
{
	return h == JOB_HEALTH_INCOMPLETE ? t != ERROR_NONE : t == ERROR_NONE;
}

/*
 * Every outcome of each board that finished a job, zeros too: a series that
 * appears with its first increment would hide that increment from rate().
 */
static void add_finished(struct strbuf *out, const struct api_metrics *m)
{
	unsigned h, t;
	size_t i;

	add_help(out, "labd_jobs_finished_total", "counter",
		 "Jobs finished since labd started, by device type, board, health and error type.");
	for (i = 0; i < m->n_boards; i++)
		for (h = JOB_HEALTH_COMPLETE; h < HEALTH_COUNT; h++)
			for (t = 0; t < ERROR_TYPE_COUNT; t++) {
				if (!outcome_exists(h, t))
					continue;
				strbuf_addstr(out, "labd_jobs_finished_total{device_type=\"");
				add_label(out, m->boards[i].type);
				strbuf_addstr(out, "\",board=\"");
				add_label(out, m->boards[i].board);
				strbuf_addf(out, "\",health=\"%s\",error_type=\"%s\"} %llu\n",
					    job_health_name(h), error_type_name(t),
					    (unsigned long long)m->boards[i].finished[h][t]);
			}
}

static void add_jobs(struct strbuf *out, struct api_metrics *m)
{
	struct strbuf labels = STRBUF_INIT;
	size_t i;

	add_finished(out, m);
	add_help(out, "labd_job_duration_seconds", "histogram",
		 "Time from a job's start to its end, of jobs finished since labd started.");
	add_histogram(out, "labd_job_duration_seconds", "", &m->job_seconds);
	add_help(out, "labd_boot_phase_seconds", "histogram",
		 "Seconds from power-on until a boot phase was reached, by device type and phase.");
	for (i = 0; i < m->n_phases; i++) {
		strbuf_reset(&labels);
		strbuf_addstr(&labels, "device_type=\"");
		add_label(&labels, m->phases[i].type);
		strbuf_addf(&labels, "\",phase=\"%s\",", m->phases[i].name);
		add_histogram(out, "labd_boot_phase_seconds", labels.buf, &m->phases[i].h);
	}
	strbuf_release(&labels);
}

static void add_consoles(struct strbuf *out, const struct api_deps *d)
{
	struct board **boards;
	size_t n, i;

	boards = lab_boards(d->lab, &n);
	add_help(out, "labd_console_read_bytes_total", "counter",
		 "Bytes read from each board's console since labd started.");
	for (i = 0; i < n; i++) {
		strbuf_addstr(out, "labd_console_read_bytes_total{board=\"");
		add_label(out, board_name(boards[i]));
		strbuf_addf(out, "\"} %llu\n",
			    (unsigned long long)consolebuf_total(board_consolebuf(boards[i])));
	}
}

static int add_backend(const struct backend_stats *bs, void *ud)
{
	struct strbuf *out = ud;

	strbuf_addstr(out, "labd_backend_spool_bytes{backend=\"");
	add_label(out, bs->name);
	strbuf_addf(out, "\"} %llu\nlabd_backend_delivery_lag_seconds{backend=\"",
		    (unsigned long long)bs->spool_bytes);
	add_label(out, bs->name);
	strbuf_addf(out, "\"} %.3f\n", bs->lag_usec / 1e6);
	return 0;
}

static void add_backends(struct strbuf *out, const struct api_deps *d)
{
	add_help(out, "labd_backend_spool_bytes", "gauge",
		 "Bytes a results backend holds in its spool, not yet delivered.");
	add_help(out, "labd_backend_delivery_lag_seconds", "gauge",
		 "Age of the oldest item a results backend has not delivered yet (0: none).");
	backends_stats(d->backends, add_backend, out);
}

/* The last run of the retention (journal/retention.h). */
static void add_retention(struct strbuf *out, const struct api_deps *d)
{
	const struct retention_stats *s;

	if (!d->retention)
		return;
	s = retention_total(d->retention);
	add_help(out, "labd_retention_state_bytes", "gauge",
		 "Bytes of the state directory (job logs, database) at the end of the last retention run.");
	strbuf_addf(out, "labd_retention_state_bytes %llu\n", (unsigned long long)s->size);
	add_help(out, "labd_retention_removed_total", "counter",
		 "What retention removed: logs by age, results and events by age, logs for the size cap.");
	strbuf_addf(out, "labd_retention_removed_total{what=\"log\"} %llu\n"
		    "labd_retention_removed_total{what=\"history\"} %llu\n"
		    "labd_retention_removed_total{what=\"log_for_size\"} %llu\n",
		    (unsigned long long)s->logs_removed, (unsigned long long)s->histories_removed,
		    (unsigned long long)s->capped);
	add_help(out, "labd_retention_compressed_bytes_total", "counter",
		 "Log bytes compressed by retention runs, before and after.");
	strbuf_addf(out, "labd_retention_compressed_bytes_total{side=\"in\"} %llu\n"
		    "labd_retention_compressed_bytes_total{side=\"out\"} %llu\n",
		    (unsigned long long)s->bytes_in, (unsigned long long)s->bytes_out);
	add_help(out, "labd_retention_running", "gauge", "1 while a retention run is in progress.");
	strbuf_addf(out, "labd_retention_running %d\n", retention_running(d->retention));
}

static void add_requests(struct strbuf *out, const struct api_metrics *m)
{
	size_t i;

	add_help(out, "labd_http_requests_total", "counter",
		 "HTTP requests answered, by route and status (0: the client left first).");
	for (i = 0; i < m->n_routes; i++) {
		strbuf_addstr(out, "labd_http_requests_total{route=\"");
		add_label(out, m->routes[i].route);
		strbuf_addf(out, "\",status=\"%u\"} %llu\n", m->routes[i].status,
			    (unsigned long long)m->routes[i].n);
	}
}

/*
 * Open file descriptors.  Linux 6.2 and later give their number as the size of
 * /proc/self/fd (a count of the fd bitmap): one stat().  Listing the directory
 * instead costs a dentry per fd, 10 ms with 4000 fds open, so it is only the
 * fallback for older kernels.
 */
static size_t count_fds(void)
{
	struct stat st;
	DIR *dir;
	struct dirent *de;
	size_t n = 0;

	if (stat("/proc/self/fd", &st) == 0 && st.st_size > 0)
		return (size_t)st.st_size;
	dir = opendir("/proc/self/fd");
	if (!dir)
		return 0;
	while ((de = readdir(dir)))
		if (de->d_name[0] != '.')
			n++;
	closedir(dir);
	return n ? n - 1 : 0;	/* not the directory's own fd */
}

static void add_process(struct strbuf *out, struct api_metrics *m)
{
	add_help(out, "labd_loop_lag_seconds", "histogram",
		 "How late labd's event loop ran a timer (probed every second).");
	add_histogram(out, "labd_loop_lag_seconds", "", &m->lag_seconds);
	add_help(out, "labd_open_fds", "gauge", "File descriptors labd has open.");
	strbuf_addf(out, "labd_open_fds %zu\n", count_fds());
	add_help(out, "labd_info", "gauge", "labd's version and lab name.");
	strbuf_addf(out, "labd_info{version=\"%s\",lab=\"", LABD_VERSION);
	add_label(out, lab_current_config(m->d->lab)->lab_name);
	strbuf_addstr(out, "\"} 1\n");
	add_help(out, "labd_config_last_reload_successful", "gauge",
		 "0 while the last reload stands refused (the lab runs an older configuration).");
	strbuf_addf(out, "labd_config_last_reload_successful %d\n",
		    !lab_refused_reload(m->d->lab));
}

enum MHD_Result api_metrics_get(struct api_request *r)
{
	struct api_metrics *m = api_metrics_of(r);
	struct strbuf out = STRBUF_INIT;
	struct MHD_Response *resp;
	struct api_type_stats s;
	size_t len;
	char *text;
	int err;

	err = api_type_stats_collect(m->d, &s);
	if (err < 0)
		return api_reply_error(r, MHD_HTTP_INTERNAL_SERVER_ERROR,
				       "cannot read the queue: %s", strerror(-err));
	add_boards(&out, &s, loop_realtime(m->d->loop));
	api_type_stats_release(&s);
	add_jobs(&out, m);
	add_consoles(&out, m->d);
	add_backends(&out, m->d);
	add_retention(&out, m->d);
	add_requests(&out, m);
	add_process(&out, m);
	if (strbuf_addch(&out, '\n') < 0) {	/* any failed append failed this one too */
		strbuf_release(&out);
		return MHD_NO;
	}
	text = strbuf_detach(&out, &len);
	resp = MHD_create_response_from_buffer(len, text, MHD_RESPMEM_MUST_FREE);
	if (!resp) {
		free(text);
		return MHD_NO;
	}
	MHD_add_response_header(resp, MHD_HTTP_HEADER_CONTENT_TYPE, METRICS_CONTENT_TYPE);
	MHD_add_response_header(resp, MHD_HTTP_HEADER_CACHE_CONTROL, "no-store");
	return api_reply(r, MHD_HTTP_OK, resp);
}

/* ---- life cycle ---- */

int api_metrics_new(const struct api_deps *d, struct api_metrics **ret)
{
	struct api_metrics *m = calloc(1, sizeof(*m));
	struct loop *loop = d->loop;
	int err;

	if (!m)
		return -ENOMEM;
	m->d = d;
	hist_init(&m->job_seconds, job_bounds, ARRAY_SIZE(job_bounds));
	hist_init(&m->lag_seconds, lag_bounds, ARRAY_SIZE(lag_bounds));
	m->lag_due = loop_now(loop) + METRICS_LAG_PERIOD;
	err = events_listen(d->events, on_event, m, &m->events);
	if (!err)
		err = loop_add_timer(loop, &m->lag_timer, m->lag_due, on_lag_timer, m);
	if (err < 0) {
		api_metrics_free(m);
		return err;
	}
	loop_source_set_description(m->lag_timer, "metrics:loop-lag");
	*ret = m;
	return 0;
}

struct api_metrics *api_metrics_free(struct api_metrics *m)
{
	if (!m)
		return NULL;
	events_unlisten(m->events);
	store_read_later_forget(m->d->store, m);
	loop_source_free(m->lag_timer);
	free(m->boards);
	free(m);
	return NULL;
}
