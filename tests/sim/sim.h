/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * sim.h -- simboard: the simulated board shared by the main loop, U-Boot, kernel and shell
 *
 * A board is a little state machine driven by one event loop.  Every stage
 * (U-Boot, kernel, login, shell) writes its console output with sim_write()
 * and friends, which queue it for the pty writer (paced at the baud rate),
 * and continues later with sim_after()/sim_after_tx(): one pending
 * continuation per board is enough because a board does one thing at a time.
 * Typed input goes through sim_input(), which echoes and edits lines and
 * calls the stage's line handler.
 */
#ifndef SIM_H
#define SIM_H

#include <limits.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define SIM_OUTQ_SIZE	(64 * 1024)	/* board-side output queue; the oldest bytes go first */
#define SIM_LINE_MAX	4096		/* longest line the line editor keeps */
#define SIM_TYPEAHEAD	4096		/* input kept while the board is busy */
#define SIM_DMESG_MAX	(48 * 1024)	/* kernel log kept for dmesg */
#define SIM_MAX_ARGS	64
#define SIM_MAX_LOADED	8		/* images U-Boot remembers having loaded */

#define SIM_UNAME_V	"#1 SMP Debian 6.1.0-sim (2026-12-01)"
#define SIM_LINUX_BANNER "Linux version 6.1.0-sim (builder@sim) (gcc (Debian 12.2.0-14) 12.2.0, " \
			 "GNU ld (GNU Binutils for Debian) 2.40) " SIM_UNAME_V

#define NSEC_PER_SEC	1000000000ULL
#define NSEC_PER_MSEC	1000000ULL

enum sim_mode {
	MODE_NORMAL,
	MODE_HANG_UBOOT,
	MODE_NO_AUTOBOOT,
	MODE_UBOOT_ERROR,
	MODE_PANIC,
	MODE_OOPS,
	MODE_HANG_KERNEL,
	MODE_SLOW,
	MODE_GARBAGE,
	MODE_LOGIN_FAIL,
	MODE_RESET_LOOP,
	MODE_NO_UBOOT,
	MODE_COUNT
};

/* STAGE_UBOOT is the firmware stage, whichever firmware the board has */
enum sim_stage { STAGE_OFF, STAGE_UBOOT, STAGE_KERNEL, STAGE_LOGIN, STAGE_SHELL };

/* The bootloader a board runs at power-on */
enum sim_firmware { FW_UBOOT, FW_BAREBOX, FW_DEPTHCHARGE, FW_COUNT };

enum sim_input {
	IN_DISCARD,	/* ignore input: off, kernel booting, hung */
	IN_HOLD,	/* keep input for later: U-Boot banner, login check */
	IN_COUNTDOWN,	/* the next byte goes to key_fn: "Hit any key" */
	IN_LINE,	/* line editor with echo */
	IN_SECRET,	/* line editor without echo: password */
	IN_BUSY,	/* a command runs: Ctrl-C aborts it, the rest is kept */
};

/* What a command returns besides an exit status. */
#define CMD_ASYNC	(-1)	/* it finishes later with sim_cmd_done() */
#define CMD_GONE	(-2)	/* the board left the stage: boot, reset, power-off */

struct board;
typedef void (*sim_fn)(struct board *b);
typedef void (*sim_key_fn)(struct board *b, unsigned char c);
typedef void (*sim_line_fn)(struct board *b, char *line);
typedef int (*sim_exec_fn)(struct board *b, int argc, char **argv);

struct sim_var {
	char *name;
	char *value;
};

/* Variables kept sorted by name (U-Boot environment, shell variables). */
struct sim_env {
	struct sim_var *v;
	int n, cap;
};

/* A command line split at ; && || and run one command after the other. */
struct sim_cmdq {
	char **cmd;
	char *sep;		/* ';', '&' (&&) or '|' (||) before cmd[i] */
	int n, pos, cap;
};

/* A file the shell wrote (sim_files.c). */
struct sim_file {
	char *path;
	char *data;
	size_t len;
};

struct sim_load {
	uint64_t addr, size;
	bool image;		/* a kernel Image rather than a dtb or ramdisk */
};

struct sim_config {
	const char *dir, *prefix, *user, *password, *prompt, *hostname;
	const char *tftp_root;		/* where TFTP file names are looked up, or NULL */
	enum sim_firmware firmware;
	unsigned int baud;
	enum sim_mode mode;
	bool powered;
	unsigned int pdu_port;		/* --pdu-port, or 0 */
	int count;
};

extern struct sim_config sim_cfg;

struct board {
	int tag;			/* epoll tag; stays the first member */
	int idx;
	char name[32];

	/* the pty and the pacing writer (simboard.c) */
	int master;			/* -1 while unplugged */
	bool hup;			/* nobody has the slave open */
	bool in_epoll, want_out;
	unsigned char *q;		/* output queue, SIM_OUTQ_SIZE ring */
	size_t qhead, qlen;
	uint64_t dropped;
	uint64_t sent;			/* bytes written to the pty: what a reader got */
	unsigned int baud;
	double tokens;
	uint64_t tok_at, tx_at;
	uint64_t tx_done_at;		/* when the UART would have sent what is queued */

	/* power and boot */
	bool powered;
	enum sim_mode mode;		/* set by --mode and the mode command */
	enum sim_mode cur;		/* the mode of the running boot */
	enum sim_firmware firmware;	/* set by --firmware and the firmware command */
	enum sim_stage stage;
	unsigned int boots;
	uint64_t rng;
	int garbage_gap;
	uint64_t wake_at;
	sim_fn wake_fn;
	int pc;				/* step counter of the running sequence */

	/* input */
	enum sim_input in;
	bool last_cr, pumping;
	char line[SIM_LINE_MAX];
	size_t len;
	sim_line_fn line_fn;
	sim_key_fn key_fn;
	sim_fn prompt_fn;
	unsigned char typeahead[SIM_TYPEAHEAD];
	size_t talen;

	/* commands */
	struct sim_cmdq cmdq;
	sim_exec_fn exec;
	int status;

	/* U-Boot */
	struct sim_env uenv, saved_env;
	bool env_saved;
	struct sim_load loaded[SIM_MAX_LOADED];
	int nloaded;
	int countdown;
	uint64_t job_addr, job_size, job_t0;
	int job_i, job_n;
	char job_name[256];

	/* kernel */
	uint64_t kstart;
	char *cmdline;
	char *nfsroot;		/* root=/dev/nfs: the host directory of nfsroot=, "mounted" */
	bool initrd, taint_d, taint_w;
	int oopses;
	char *dmesg;
	size_t dmesg_len;

	/* login and shell */
	char user[64];
	char cwd[512];
	struct sim_env senv;
	uint64_t stream_until, stream_seq;
	uint64_t spew_left;
	struct sim_file files[64];	/* SIM_MAX_FILES: written by the shell, gone at boot */
	int nfiles;
	struct sim_file *redir;		/* output of the running command goes here */
	bool redir_null;		/* ... or nowhere (> /dev/null) */
};

/* epoll tags: the first int of what an epoll event points to */
enum { TAG_BOARD = 1, TAG_LISTEN, TAG_CLIENT, TAG_SIGNAL, TAG_PDU };

/* sim_pty.c: ptys and the paced writer */
int sim_pty_init(int epfd, int count);
void sim_pty_exit(void);
uint64_t sim_pty_next_check(void);
void sim_pty_check_hups(void);
void sim_dir_path(char *buf, size_t size, const char *name, const char *suffix);
int sim_board_plug(struct board *b);
void sim_board_unplug(struct board *b);
void sim_board_tx(struct board *b);
void sim_board_event(struct board *b, uint32_t events);

/* simboard.c: the process, the event loop and the control socket */
struct board *sim_board_find(const char *name);
struct board *sim_board_at(int i);
void sim_quit(void);

/* sim_pdu.c: --pdu-port, pdudaemon's HTTP API in the loop */
int sim_pdu_start(int epfd, unsigned int port);
void sim_pdu_run(void);
int sim_pdu_timeout_ms(void);	/* -1: none */
void sim_pdu_stop(void);

/* sim_ctl.c */
void sim_ctl_command(char *line, char *reply, size_t size);
int sim_ctl_client(int argc, char **argv);

/* sim_board.c: time, output, scheduling, power, input */
uint64_t sim_now(void);
/* CLOCK_REALTIME in microseconds: the journal's clock, comparable with other processes' */
uint64_t sim_realtime_us(void);
/*
 * sim_journal() - append "<board> TEXT" to <dir>/journal, one write per line:
 * the board's own record (the jobs it ran, its power-ons) for the tests and
 * the benchmarks; 0 or -1.
 */
int sim_journal(struct board *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
uint64_t sim_rand(struct board *b);
unsigned int sim_slow(const struct board *b, unsigned int ms);
void sim_queue(struct board *b, const void *p, size_t n);
void sim_write(struct board *b, const void *p, size_t n);
void sim_puts(struct board *b, const char *s);
void sim_printf(struct board *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void sim_klog(struct board *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void sim_klog_zero(struct board *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void sim_wake(struct board *b, uint64_t at, sim_fn fn);
void sim_after(struct board *b, unsigned int ms, sim_fn fn);
void sim_after_tx(struct board *b, unsigned int ms, sim_fn fn);
/* More than half the output queue waits for a reader: bulk output waits, not drops. */
bool sim_tx_backlog(const struct board *b);
void sim_wake_tx(struct board *b, uint64_t at, sim_fn fn);
void sim_cancel(struct board *b);
void sim_run_wake(struct board *b);
void sim_power_on(struct board *b);
void sim_firmware_start(struct board *b);
const char *sim_firmware_name(enum sim_firmware f);
int sim_firmware_parse(const char *s);
void sim_power_off(struct board *b);
void sim_boot_begin(struct board *b);
void sim_input(struct board *b, const unsigned char *p, size_t n);
void sim_readline(struct board *b, bool secret, sim_line_fn fn);
void sim_board_free(struct board *b);
const char *sim_mode_name(enum sim_mode m);
int sim_mode_parse(const char *s);
const char *sim_stage_name(enum sim_stage s);

/* sim_cmd.c: environments, command lines, word splitting */
const char *sim_env_get(const struct sim_env *e, const char *name);
int sim_env_set(struct sim_env *e, const char *name, const char *value);
void sim_env_clear(struct sim_env *e);
int sim_env_copy(struct sim_env *dst, const struct sim_env *src);
void sim_cmd_line(struct board *b, const char *line);
int sim_cmd_splice(struct board *b, const char *text);
void sim_cmd_done(struct board *b, int status);
void sim_cmd_abort(struct board *b);
void sim_cmd_clear(struct board *b);
int sim_words(struct board *b, const char *s, char **argv, int max, char *buf, size_t size);

/* sim_uboot.c, sim_uboot_boot.c */
void sim_uboot_start(struct board *b);
const char *sim_uenv(struct board *b, const char *name, const char *def);
int sim_ub_usage(struct board *b, const char *name);
int sim_ub_tftp(struct board *b, int argc, char **argv);
int sim_ub_dhcp(struct board *b, int argc, char **argv);
int sim_ub_ping(struct board *b, int argc, char **argv);
int sim_ub_load(struct board *b, int argc, char **argv);
int sim_ub_sleep(struct board *b, int argc, char **argv);
int sim_ub_booti(struct board *b, int argc, char **argv);
int sim_ub_reset(struct board *b, int argc, char **argv);
int sim_tftp_size(const char *file, uint64_t *size, bool *image);
int sim_tftp_text(const char *file, char *buf, size_t size);

/* sim_barebox.c, sim_depthcharge.c: the other firmware */
void sim_barebox_start(struct board *b);
void sim_depthcharge_start(struct board *b);

/* sim_files.c: files the shell writes, redirections, sh/. */
struct sim_file *sim_file_find(struct board *b, const char *path);
void sim_file_append(struct sim_file *f, const void *p, size_t n);
void sim_files_clear(struct board *b);
/* The file @path of the board's NFS root (a host directory), up to @max bytes: malloc'd, or NULL. */
char *sim_nfsroot_read(const struct board *b, const char *path, size_t max, size_t *ret_len);
/* Whether @path of the board's NFS root is a directory (@dir) or anything else there is. */
bool sim_nfsroot_has(const struct board *b, const char *path, bool dir);
void sim_redirect(struct board *b, char *cmd);
int sim_sh_mkdir(struct board *b, int argc, char **argv);
int sim_sh_source(struct board *b, int argc, char **argv);

/* sim_kernel.c */
void sim_kernel_boot(struct board *b, const char *cmdline, bool initrd);
void sim_kernel_oops(struct board *b, bool from_shell);
void sim_kernel_warn(struct board *b);
void sim_kernel_panic(struct board *b, const char *why, bool from_shell);
void sim_kernel_ktap(struct board *b);
void sim_dmesg_add(struct board *b, const char *line);
const char *sim_kernel_taint(const struct board *b);
double sim_uptime(const struct board *b);

/* sim_shell.c, sim_shell_lab.c */
void sim_login_start(struct board *b);
size_t sim_stream_line(struct board *b, char *buf, size_t size);
int sim_sh_cat(struct board *b, int argc, char **argv);
int sim_sh_cd(struct board *b, int argc, char **argv);
int sim_sh_ls(struct board *b, int argc, char **argv);
int sim_sh_test(struct board *b, int argc, char **argv);
int sim_sh_ktap(struct board *b, int argc, char **argv);
int sim_sh_lava_case(struct board *b, int argc, char **argv);
int sim_sh_lava_set(struct board *b, int argc, char **argv);
int sim_sh_lava_other(struct board *b, int argc, char **argv);
int sim_sh_crash(struct board *b, int argc, char **argv);
int sim_sh_poweroff(struct board *b, int argc, char **argv);
int sim_sh_spew(struct board *b, int argc, char **argv);
int sim_sh_stream(struct board *b, int argc, char **argv);

#endif
