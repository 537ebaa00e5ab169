// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * main.c -- the labd program
 *
 *   labd [-c FILE] [--listen HOST:PORT] [-v]   run the lab controller
 *   labd check-config [-c FILE]                validate labd.conf and the boards
 *   labd gc [-c FILE]                          apply labd.conf's retention now:
 *                                              compress, remove old logs and history
 *   labd run-job [-c FILE] JOB                 run one job without the HTTP API
 *                                              and exit like `labctl submit --follow`
 *   labd import-lava-device [--name NAME] FILE a LAVA device dictionary as a
 *                                              board file, on stdout
 *   labd rootfs-helper ...                     labd's own child: unpacks NFS roots,
 *                                              removes them (rootfs/rootfs.h)
 */
#include <errno.h>
#include <getopt.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <time.h>

#include "config/config.h"
#include "import/lava_device.h"
#include "core/diag.h"
#include "core/log.h"
#include "core/loop.h"
#include "core/strbuf.h"
#include "core/version.h"
#include "daemon.h"
#include "journal/events.h"
#include "journal/joblog.h"
#include "journal/retention.h"
#include "results/backends/backend.h"
#include "rootfs/rootfs.h"
#include "session/users.h"
#include "store/store.h"


struct options {
	const char *config;
	const char *listen;
	const char *command;
	const char *job;	/* run-job's job, import-lava-device's dictionary */
	const char *name;
	const char *type;	/* import-lava-device's device type */
	int verbose;
};

static void usage(FILE *f)
{
	fprintf(f, "usage: labd [-c FILE] [--listen HOST:PORT] [-v]\n"
		   "       labd check-config [-c FILE]\n"
		   "       labd gc [-c FILE]\n"
		   "       labd store migrate [-c FILE]   (the SQLite store into labd.conf's PostgreSQL)\n"
		   "       labd run-job [-c FILE] JOB\n"
		   "       labd import-lava-device [--name NAME] [--type TYPE] FILE.jinja2|FILE.yaml\n"
		   "\n"
		   "  -c, --config FILE   labd.conf (default %s)\n"
		   "  -l, --listen ADDR   HTTP API address, overriding the configuration\n"
		   "  -n, --name NAME     the imported board's name\n"
		   "  -t, --type TYPE     its device type's name (LAVA's, as jobs ask for it)\n"
		   "  -v, --verbose       more messages (twice: debug)\n"
		   "  -V, --version       print the version\n",
		   CONFIG_DEFAULT_PATH);
}

static int parse_args(int argc, char **argv, struct options *o)
{
	static const struct option longopts[] = {
		{ "config", required_argument, NULL, 'c' },
		{ "listen", required_argument, NULL, 'l' },
		{ "name", required_argument, NULL, 'n' },
		{ "type", required_argument, NULL, 't' },
		{ "verbose", no_argument, NULL, 'v' },
		{ "version", no_argument, NULL, 'V' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	int c;

	while ((c = getopt_long(argc, argv, "c:l:n:t:vVh", longopts, NULL)) != -1) {
		switch (c) {
		case 'c':
			o->config = optarg;
			break;
		case 'l':
			o->listen = optarg;
			break;
		case 'n':
			o->name = optarg;
			break;
		case 't':
			o->type = optarg;
			break;
		case 'v':
			o->verbose++;
			break;
		case 'V':
			printf("labd %s\n", LABD_VERSION);
			exit(0);
		case 'h':
			usage(stdout);
			exit(0);
		default:
			usage(stderr);
			return -EINVAL;
		}
	}
	if (optind < argc)
		o->command = argv[optind++];
	if (o->command && (!strcmp(o->command, "run-job") || !strcmp(o->command, "store") ||
			   !strcmp(o->command, "import-lava-device")) && optind < argc)
		o->job = argv[optind++];
	if (optind < argc || (o->command && strcmp(o->command, "check-config") &&
			      strcmp(o->command, "gc") && strcmp(o->command, "store") &&
			      strcmp(o->command, "run-job") &&
			      strcmp(o->command, "import-lava-device"))) {
		usage(stderr);
		return -EINVAL;
	}
	if (o->command && !strcmp(o->command, "run-job") && !o->job) {
		fprintf(stderr, "labd: run-job needs a job file\n");
		return -EINVAL;
	}
	if (o->command && !strcmp(o->command, "store") && (!o->job || strcmp(o->job, "migrate"))) {
		fprintf(stderr, "labd: store: the only command is 'migrate'\n");
		return -EINVAL;
	}
	if (o->command && !strcmp(o->command, "import-lava-device") && !o->job) {
		fprintf(stderr, "labd: import-lava-device needs a device dictionary\n");
		return -EINVAL;
	}
	return 0;
}

static void print_diag(const struct diag *diag)
{
	size_t i;

	for (i = 0; i < diag->n; i++)
		fprintf(stderr, "%s\n", diag->msgs[i]);
}

/* labd.conf's `nfs` group, and the export directory it names (rootfs/rootfs.h). */
static int check_nfs(const struct lab_config *cfg, struct diag *diag)
{
	const config_setting_t *g = config_setting_get_member(cfg->root, "nfs");
	struct rootfs_params p;
	int err = rootfs_params_parse(g, cfg->path, &p, diag);

	if (!err)
		err = rootfs_params_check_dir(g, &p, diag);
	rootfs_params_release(&p);
	return err;
}

static int check_config(const struct options *o)
{
	struct diag diag = DIAG_INIT;
	struct lab_config *cfg = NULL;
	struct retention_params params;
	int err;

	err = config_load(o->config, &cfg, &diag);
	if (!err)
		err = backends_check(cfg, &diag);
	if (cfg && users_check(cfg, &diag) < 0)
		err = -EINVAL;
	if (cfg && store_check(config_setting_get_member(cfg->root, "store"), &diag) < 0)
		err = -EINVAL;
	if (cfg && retention_parse(config_setting_get_member(cfg->root, "retention"), &params,
				   &diag) < 0)
		err = -EINVAL;
	if (cfg && check_nfs(cfg, &diag) < 0)
		err = -EINVAL;
	print_diag(&diag);
	diag_release(&diag);
	for (size_t i = 0; cfg && i < cfg->warnings.n; i++)
		fprintf(stderr, "warning: %s\n", cfg->warnings.msgs[i]);
	if (err < 0) {
		char *path = realpath(o->config ? o->config : CONFIG_DEFAULT_PATH, NULL);

		config_unref(cfg);
		fprintf(stderr, "labd: configuration '%s' is not valid\n",
			path ? path : o->config ? o->config : CONFIG_DEFAULT_PATH);
		free(path);
		return 1;
	}
	printf("%s: ok: %zu device types, %zu devices\n", cfg->path, cfg->n_types,
	       cfg->n_devices);
	config_unref(cfg);
	return 0;
}

/* What `labd gc` did, on stdout. */
static void print_gc(const struct retention_stats *s)
{
	printf("%llu finished jobs\n"
	       "%llu log files compressed: %llu to %llu bytes\n"
	       "%llu logs removed by age\n"
	       "%llu jobs' results and events removed by age\n"
	       "%llu logs removed for the size cap\n"
	       "state directory: %llu bytes\n",
	       (unsigned long long)s->jobs, (unsigned long long)s->compressed,
	       (unsigned long long)s->bytes_in, (unsigned long long)s->bytes_out,
	       (unsigned long long)s->logs_removed, (unsigned long long)s->histories_removed,
	       (unsigned long long)s->capped, (unsigned long long)s->size);
}

/* Open what a run of the retention needs: the configuration, its store. */
static int gc_open(const struct options *o, struct lab_config **cfg, struct store **st,
		   struct retention_params *p, struct diag *diag)
{
	struct store_params sp = { 0 };
	int err = config_load(o->config, cfg, diag);

	if (!err)
		err = retention_parse(config_setting_get_member((*cfg)->root, "retention"), p, diag);
	if (err < 0)
		return err;
	sp.settings = config_setting_get_member((*cfg)->root, "store");
	sp.state_dir = (*cfg)->state_dir;
	sp.tool = true;	/* beside this host's labd, which has its name */
	return store_open(&sp, st, diag);
}

/* gc: labd.conf's retention applied now, beside a running labd or not. */
static int gc(const struct options *o)
{
	struct diag diag = DIAG_INIT;
	struct lab_config *cfg = NULL;
	struct retention_params p;
	struct retention_stats stats = { 0 };
	struct retention *g = NULL;
	struct store *st = NULL;
	struct timespec now;
	int err;

	err = gc_open(o, &cfg, &st, &p, &diag);
	print_diag(&diag);
	diag_release(&diag);
	if (!err) {
		struct retention_deps rd = { .store = st, .state_dir = cfg->state_dir };

		err = retention_new(&rd, &p, &g);
	}
	clock_gettime(CLOCK_REALTIME, &now);
	if (!err)
		err = retention_gc(g, (uint64_t)now.tv_sec * 1000000 + (uint64_t)now.tv_nsec / 1000,
				   &stats);
	retention_free(g);
	store_close(st);
	config_unref(cfg);
	if (err < 0) {
		fprintf(stderr, "labd: gc: %s\n", strerror(-err));
		return 1;
	}
	print_gc(&stats);
	return 0;
}

/*
 * store migrate: the lab's SQLite store (<state_dir>/labd.db) copied into the
 * PostgreSQL database labd.conf's `store` names, ids kept (doc/multi-host.md).
 */
static int store_migrate_cmd(const struct options *o)
{
	struct store_params from_p = { 0 }, to_p = { 0 };
	struct store *from = NULL, *to = NULL;
	struct diag diag = DIAG_INIT;
	struct lab_config *cfg = NULL;
	char path[4096];
	int err;

	err = config_load(o->config, &cfg, &diag);
	if (!err) {
		from_p.state_dir = to_p.state_dir = cfg->state_dir;
		to_p.settings = config_setting_get_member(cfg->root, "store");
		snprintf(path, sizeof(path), "%s/%s", cfg->state_dir, STORE_SQLITE_FILE);
		if (access(path, R_OK) < 0) {
			fprintf(stderr, "labd: store migrate: no SQLite store '%s'\n", path);
			err = -ENOENT;
		}
	}
	if (!err)
		err = store_open(&from_p, &from, &diag);
	if (!err)
		err = store_open(&to_p, &to, &diag);
	print_diag(&diag);
	diag_release(&diag);
	if (!err && !store_host_name(to)) {
		fprintf(stderr, "labd: store migrate: labd.conf's store must be the PostgreSQL "
				"database to fill (store = { driver = \"postgresql\"; ... })\n");
		err = -EINVAL;
	} else if (!err) {
		err = store_migrate(to, from);
	}
	store_close(to);
	store_close(from);
	config_unref(cfg);
	if (err < 0 && err != -EINVAL && err != -ENOENT)
		fprintf(stderr, "labd: store migrate: %s\n", strerror(-err));
	return err < 0 ? 1 : 0;
}

/*
 * import-lava-device: the board file on stdout, what was not converted on
 * stderr; 0 when a board came out, 1 when the file is no dictionary.
 */
static int import_lava_device(const struct options *o)
{
	struct strbuf out = STRBUF_INIT;
	struct diag notes = DIAG_INIT;
	int err;

	err = lava_device_import(o->job, o->name, o->type, &out, &notes);
	print_diag(&notes);
	if (err < 0)
		fprintf(stderr, "labd: cannot import '%s': %s\n", o->job,
			err == -EINVAL ? "not a LAVA device dictionary" : strerror(-err));
	else
		fwrite(out.buf, 1, out.len, stdout);
	diag_release(&notes);
	strbuf_release(&out);
	return err < 0 ? 1 : 0;
}

/* ---- run-job: one job, its live log on stdout, exit status like labctl ---- */

struct one_job {
	struct daemon *d;
	int64_t id;
	uint64_t console_off;
	uint64_t labd_off;
	bool mid_line;		/* the console output printed last did not end a line */
	int status;
};

static void print_new_log(struct one_job *oj)
{
	struct strbuf buf = STRBUF_INIT;
	char *dir = joblog_job_dir(daemon_config(oj->d)->state_dir, oj->id);

	if (!dir)
		return;
	joblog_read(dir, JOBLOG_LABD, oj->labd_off, 1 << 20, &buf);
	oj->labd_off += buf.len;
	for (char *p = buf.buf, *nl; *p; p = nl + 1) {
		nl = strchr(p, '\n');
		if (!nl)
			break;
		fprintf(stdout, "%s# labd: %.*s\n", oj->mid_line ? "\n" : "", (int)(nl - p), p);
		oj->mid_line = false;
	}
	strbuf_reset(&buf);
	joblog_read(dir, JOBLOG_CONSOLE, oj->console_off, 1 << 20, &buf);
	oj->console_off += buf.len;
	fwrite(buf.buf, 1, buf.len, stdout);
	if (buf.len)
		oj->mid_line = buf.buf[buf.len - 1] != '\n';
	fflush(stdout);
	strbuf_release(&buf);
	free(dir);
}

static void on_log(int64_t job_id, void *ud)
{
	struct one_job *oj = ud;

	if (job_id == oj->id)
		print_new_log(oj);
}

static void on_event(const struct event *ev, void *ud)
{
	struct one_job *oj = ud;
	const char *health;
	json_int_t fails;

	if (ev->job_id != oj->id || strcmp(ev->kind, "finished"))
		return;
	print_new_log(oj);
	health = json_string_value(json_object_get(ev->data, "health"));
	fails = json_integer_value(json_object_get(ev->data, "results_fail"));
	printf("\njob %lld: %s", (long long)oj->id, health ? health : "?");
	if (health && strcmp(health, "complete"))
		printf(" (%s): %s", json_string_value(json_object_get(ev->data, "error_type")),
		       json_string_value(json_object_get(ev->data, "error_msg")));
	else if (fails)
		printf(", %lld failed results", (long long)fails);
	printf("\n");
	oj->status = health && !strcmp(health, "complete") ? (fails ? 1 : 0) : 2;
	daemon_stop(oj->d, oj->status);
}

static int run_job(struct daemon *d, const char *path)
{
	struct one_job oj = { .d = d, .status = 2 };
	struct strbuf text = STRBUF_INIT;
	struct diag diag = DIAG_INIT;
	FILE *f = fopen(path, "r");
	char buf[65536];
	size_t n;
	int err;

	if (!f) {
		fprintf(stderr, "labd: cannot open '%s': %s\n", path, strerror(errno));
		return 3;
	}
	while ((n = fread(buf, 1, sizeof(buf), f)) > 0)
		strbuf_add(&text, buf, n);
	fclose(f);
	err = daemon_submit(d, text.buf, text.len, path, JOB_FORMAT_AUTO, "labd run-job", &oj.id,
			    &diag);
	strbuf_release(&text);
	print_diag(&diag);
	diag_release(&diag);
	if (err == -EINVAL || err == -E2BIG)
		return 1;	/* refused, as labctl's 422 and 413 are */
	if (err < 0)
		return 3;
	events_listen_log(daemon_events(d), on_log, &oj, NULL);
	events_listen(daemon_events(d), on_event, &oj, NULL);
	daemon_run(d);
	return oj.status;
}

int main(int argc, char **argv)
{
	struct options o = { 0 };
	struct diag diag = DIAG_INIT;
	struct daemon_options dopts = { 0 };
	struct daemon *d;
	int err, status;

	if (argc > 1 && !strcmp(argv[1], ROOTFS_HELPER_COMMAND))
		return rootfs_helper_main(argc - 1, argv + 1);
	if (parse_args(argc, argv, &o) < 0)
		return 2;
	log_set_level(o.verbose > 1 ? LOG_LEVEL_DEBUG : LOG_LEVEL_INFO);
	if (o.command && !strcmp(o.command, "check-config"))
		return check_config(&o);
	if (o.command && !strcmp(o.command, "import-lava-device"))
		return import_lava_device(&o);
	if (o.command && !strcmp(o.command, "gc"))
		return gc(&o);
	if (o.command && !strcmp(o.command, "store"))
		return store_migrate_cmd(&o);
	dopts.config_path = o.config;
	dopts.listen = o.listen;
	dopts.no_api = o.job != NULL;
	if (o.job)
		log_set_level(o.verbose ? LOG_LEVEL_INFO : LOG_LEVEL_WARNING);
	err = daemon_new(&dopts, &d, &diag);
	print_diag(&diag);
	diag_release(&diag);
	if (err < 0) {
		fprintf(stderr, "labd: cannot start: %s\n", strerror(-err));
		return 1;
	}
	status = o.job ? run_job(d, o.job) : daemon_run(d);
	daemon_free(d);
	return status;
}
