# SPDX-License-Identifier: GPL-2.0-or-later
# labd -- board-farm lab controller.  `make`, `make check`, `make demo`, `make bench`.

PKGS := libserialport libusb-1.0 libgpiod libcurl jansson libconfig yaml-0.1 sqlite3 \
	libmicrohttpd libpcre2-8 libcrypto libarchive zlib libpq libzstd ext2fs com_err

# Debian packages: build dependencies, then what the tests and the demo run.
DEB_BUILD := build-essential pkg-config libserialport-dev libusb-1.0-0-dev libgpiod-dev \
	libcurl4-openssl-dev libjansson-dev libconfig-dev libyaml-dev libsqlite3-dev \
	libmicrohttpd-dev libpcre2-dev libssl-dev libarchive-dev zlib1g-dev libxmlrpc-core-c3-dev libwslay-dev \
	libpq-dev libzstd-dev scdoc libext2fs-dev comerr-dev
DEB_TEST := qemu-system-x86 qemu-system-arm u-boot-qemu busybox-static cpio xz-utils socat \
	umockdev libumockdev-dev ser2net pdudaemon telnet microcom tmux curl python3 python3-jsonschema \
	sqlite3 libxml2-utils iproute2 procps git bzip2 zstd unzip lavacli \
	postgresql u-boot-tools gcc-arm-none-eabi picolibc-arm-none-eabi \
	nfs-ganesha nfs-ganesha-vfs rpcbind libnfs-utils mmdebstrap arch-test qemu-user-static binfmt-support
# Real firmware the QEMU tests boot through: iPXE, OVMF (UEFI), GRUB's EFI modules.
DEB_FIRMWARE := ipxe-qemu ovmf grub-efi-amd64-bin
# The dashboard's library (Chart.js, served from /usr/share/javascript) and its browser tests.
DEB_WEB := libjs-chart.js
DEB_WEB_TEST := chromium chromium-driver python3-selenium prometheus
# Building the Debian packages (debian/) and checking them in a fresh Debian 12 root
# (tests/t0210-debian-package.sh); clang is also the compiler t0020 builds with.
DEB_PACKAGE := dpkg-dev debhelper lintian mmdebstrap clang

CC ?= cc
PKG_CONFIG ?= pkg-config
SANITIZE ?=
BUILD := build$(if $(SANITIZE),-san)
OBJ := $(BUILD)/obj

PKG_CFLAGS := $(shell $(PKG_CONFIG) --cflags $(PKGS) 2>/dev/null)
PKG_LIBS := $(shell $(PKG_CONFIG) --libs $(PKGS) 2>/dev/null)
# xmlrpc-c (the /RPC2 API) ships no pkg-config file on Debian 12 (1.33), only
# xmlrpc-c-config; newer releases have xmlrpc_server.pc, which is preferred.
XMLRPC_CFLAGS := $(shell $(PKG_CONFIG) --cflags xmlrpc_server 2>/dev/null || \
	xmlrpc-c-config server-util --cflags 2>/dev/null)
XMLRPC_LIBS := $(shell $(PKG_CONFIG) --libs xmlrpc_server 2>/dev/null || \
	xmlrpc-c-config server-util --libs 2>/dev/null)

# Two sets of flags, as git and Redis have them.  CFLAGS, CPPFLAGS, LDFLAGS and
# LDLIBS are the user's (the command line, the environment, dpkg-buildflags):
# they come after labd's own and replace none of them, so `make CFLAGS=-O0`
# still builds labd.  LABD_* are labd's: the language, the warnings, the
# libraries' flags, SANITIZE's; a rule adds to those, never to the user's.
CFLAGS ?= -O2 -g
# -Werror for `make check` and CI; a packager whose newer compiler warns turns
# it off with WERROR=0 (debian/rules does).
WERROR ?= 1
LABD_CPPFLAGS := -D_GNU_SOURCE -iquote dispatcher -iquote . $(PKG_CFLAGS)
# What every build of labd's C files uses (the fuzzers' clang build too: tests/fuzz/fuzz.mk).
# -fvisibility=hidden keeps labd's symbols inside its programs: libconfig
# exports its private strbuf_release(), and ours must not replace it (libconfig
# crashes parsing strings).
BASE_CFLAGS := -std=gnu11 -Wall -Wextra -Wno-unused-parameter -Wshadow \
	-Wmissing-prototypes -Wstrict-prototypes -fno-strict-aliasing -fvisibility=hidden \
	$(LABD_CPPFLAGS)
WERROR_FLAG := $(if $(filter-out 0,$(WERROR)),-Werror)
LABD_CFLAGS := $(BASE_CFLAGS) $(WERROR_FLAG)
LABD_LDFLAGS :=
# libwslay (the browser console's WebSocket framing) has no pkg-config file in Debian 12.
LABD_LIBS := $(PKG_LIBS) $(XMLRPC_LIBS) -lwslay -lm
ifneq ($(SANITIZE),)
LABD_CFLAGS += -fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=undefined
LABD_LDFLAGS += -fsanitize=address,undefined
endif
DEPFLAGS = -MMD -MP
# Links take the compiler flags too (-flto, -fsanitize in CFLAGS), as automake's do.
LINK = $(CC) $(CFLAGS) $(LABD_LDFLAGS) $(LDFLAGS)
V ?=
Q := $(if $(V),,@)

# libgpiod: the v1 API (Debian 12) or v2; one backend of drivers/gpio/ is built.
GPIOD_V2 := $(shell $(PKG_CONFIG) --atleast-version=2 libgpiod 2>/dev/null && echo 1)
GPIO_UNUSED := drivers/gpio/gpioline_v$(if $(GPIOD_V2),1,2).c

# Everything except the programs' main() files goes into one archive that the
# daemon and the unit tests link against: dispatcher/ and its folders (one
# concept each, doc/architecture.md), and drivers/.
LIB_SRCS := $(filter-out dispatcher/main.c $(GPIO_UNUSED), \
	$(wildcard dispatcher/*.c dispatcher/*/*.c dispatcher/*/*/*.c drivers/*.c drivers/*/*.c))
LIB_OBJS := $(LIB_SRCS:%.c=$(OBJ)/%.o)
LABCTL_SRCS := $(wildcard labctl/*.c)
# labctl check validates jobs itself when labd is not reachable: the job parser and its helpers;
# its config file is checked as labd's are before libconfig reads it (cfgtext.c).
LABCTL_LIB := $(wildcard dispatcher/job/*.c) $(addprefix dispatcher/core/,strbuf.c diag.c strv.c kv.c cfgtext.c)
LABCTL_OBJS := $(LABCTL_SRCS:%.c=$(OBJ)/%.o) $(LABCTL_LIB:%.c=$(OBJ)/%.o)
SIM_SRCS := $(wildcard tests/sim/*.c)
SIM_OBJS := $(SIM_SRCS:%.c=$(OBJ)/%.o)
UNIT_SRCS := $(wildcard tests/unit/test-*.c)
UNIT_BINS := $(UNIT_SRCS:tests/unit/%.c=$(BUILD)/tests/unit/%)
HELPER_SRCS := $(wildcard tests/helper/*.c)
HELPER_BINS := $(HELPER_SRCS:tests/helper/%.c=$(BUILD)/tests/helper/%)

PROGRAMS := $(BUILD)/labd $(BUILD)/labctl $(BUILD)/simboard

.PHONY: all deps check demo bench clean install tests api-doc man xterm-check pkg-check
all: $(PROGRAMS)

# Before compiling: a library whose .pc file pkg-config cannot find stops the
# build, named (pkg-config would print nothing for all of them together).
pkg-check:
	@missing=; for p in $(PKGS); do \
		$(PKG_CONFIG) --exists --print-errors $$p || missing="$$missing $$p"; \
	done; [ -z "$$missing" ] || { echo "labd: $(PKG_CONFIG) finds no$$missing:" \
		"install their -dev packages (make deps)" >&2; exit 1; }

$(OBJ)/%.o: %.c | pkg-check
	@mkdir -p $(dir $@)
	@$(if $(Q),echo "  CC      $<")
	$(Q)$(CC) $(LABD_CFLAGS) $(CPPFLAGS) $(CFLAGS) $(DEPFLAGS) -c -o $@ $<

$(BUILD)/liblabd.a: $(LIB_OBJS)
	@rm -f $@
	$(Q)ar rcs $@ $^

$(BUILD)/labd: $(OBJ)/dispatcher/main.o $(BUILD)/liblabd.a
	@mkdir -p $(dir $@)
	@$(if $(Q),echo "  LD      $@")
	$(Q)$(LINK) -o $@ $^ $(LABD_LIBS) $(LDLIBS)

$(BUILD)/labctl: $(LABCTL_OBJS)
	@mkdir -p $(dir $@)
	@$(if $(Q),echo "  LD      $@")
	$(Q)$(LINK) -o $@ $^ $(LABD_LIBS) $(LDLIBS)

$(BUILD)/simboard: $(SIM_OBJS)
	@mkdir -p $(dir $@)
	@$(if $(Q),echo "  LD      $@")
	$(Q)$(LINK) -o $@ $^ $(shell $(PKG_CONFIG) --libs libmicrohttpd) -lm $(LDLIBS)

# Objects before the archive: a test's stand-ins (tests/fakes/) replace library members.
$(BUILD)/tests/unit/%: $(OBJ)/tests/unit/%.o $(BUILD)/liblabd.a
	@mkdir -p $(dir $@)
	@$(if $(Q),echo "  LD      $@")
	$(Q)$(LINK) -o $@ $(filter %.o,$^) $(filter-out %.o,$^) $(LABD_LIBS) $(LDLIBS)

$(BUILD)/tests/helper/%: $(OBJ)/tests/helper/%.o $(BUILD)/liblabd.a
	@mkdir -p $(dir $@)
	@$(if $(Q),echo "  LD      $@")
	$(Q)$(LINK) -o $@ $^ $(LABD_LIBS) $(LDLIBS)

tests: $(PROGRAMS) $(UNIT_BINS) $(HELPER_BINS)

# The USB unit tests run against devices emulated by libumockdev (tests/unit/usbbed.h);
# without it they build as skips.
USBBED_TESTS := test-usb test-usbhub test-ykush test-fastboot
USBBED_CFLAGS := $(patsubst -I%,-isystem %,$(shell $(PKG_CONFIG) --cflags umockdev-1.0 2>/dev/null))
USBBED_LIBS := $(shell $(PKG_CONFIG) --libs umockdev-1.0 2>/dev/null)
ifneq ($(USBBED_LIBS),)
$(USBBED_TESTS:%=$(OBJ)/tests/unit/%.o): LABD_CFLAGS += -DHAVE_UMOCKDEV $(USBBED_CFLAGS)
$(USBBED_TESTS:%=$(BUILD)/tests/unit/%): LABD_LIBS += $(USBBED_LIBS)
endif

# test-gpio links the gpio driver with a recording libgpiod v1 stand-in, not libgpiod.
ifeq ($(GPIOD_V2),)
$(BUILD)/tests/unit/test-gpio: $(OBJ)/tests/fakes/gpiod_fake.o
$(BUILD)/tests/unit/test-gpio: LABD_LIBS := $(filter-out -lgpiod,$(LABD_LIBS))
else
$(OBJ)/tests/unit/test-gpio.o: LABD_CFLAGS += -DLABD_GPIOD_V2
endif

# Only the XML-RPC endpoint's files include xmlrpc-c's headers.
$(OBJ)/dispatcher/api/api_lava_rpc%.o: LABD_CFLAGS += $(filter-out -I/usr/include,$(XMLRPC_CFLAGS))

# test-sdmux drives the USB-SD-Mux driver through an emulated mux instead of /dev/sg.
$(BUILD)/tests/unit/test-sdmux: $(OBJ)/tests/fakes/sg_fake.o

# Install the Debian packages this tree needs (only the missing ones).
deps:
	@tests/deps.sh $(DEB_BUILD) $(DEB_TEST) $(DEB_FIRMWARE) $(DEB_WEB) $(DEB_WEB_TEST) $(DEB_FUZZ) \
		$(DEB_PACKAGE)
	@contrib/web-deps.sh

check: deps
	$(MAKE) tests fuzzers
	BUILD=$(BUILD) tests/run $(T)

demo: deps
	$(MAKE) all
	BUILD=$(BUILD) contrib/demo/run-demo.sh

# PEERS=1: bench-scale also installs Debian's lava-dispatcher and labgrid and runs them
# on the same simulated board and job as labd (tests/bench/peers.sh).
bench: deps
	$(MAKE) tests
	BUILD=$(BUILD) PEERS=$(PEERS) tests/bench/run

PREFIX ?= /usr
DESTDIR ?=
WEB_FILES := $(wildcard web/*.html web/*.js web/*.css web/*.svg)
# labd serves the dashboard from here once installed (doc/dashboard.md)
$(OBJ)/dispatcher/api/api_web.o: LABD_CFLAGS += -DLABD_WEB_DIR='"$(PREFIX)/share/labd/web"'
# xterm.js (the browser console): its release files, kept in the tree (contrib/web-deps.sh).
XTERM_DIR ?= web/vendor/xterm
XTERM_FILES := xterm.js xterm.css LICENSE
# Man pages (labd.8, labctl.1, labd.conf.5), written for scdoc in doc/man/.
MAN_PAGES := $(patsubst doc/man/%.scd,$(BUILD)/man/%,$(wildcard doc/man/*.scd))
$(BUILD)/man/%: doc/man/%.scd
	@mkdir -p $(dir $@)
	@$(if $(Q),echo "  SCDOC   $<")
	$(Q)scdoc <$< >$@
man: $(MAN_PAGES)

# Before building anything: install cannot go on without them.
xterm-check:
	@for f in $(XTERM_FILES); do [ -f $(XTERM_DIR)/$$f ] || { \
		echo "make install: $(XTERM_DIR)/$$f is missing: run 'make deps' first" \
			"(contrib/web-deps.sh fetches xterm.js from npm)" >&2; exit 1; }; done

install: xterm-check all man
	install -D -m 0755 $(BUILD)/labd $(DESTDIR)$(PREFIX)/bin/labd
	install -D -m 0755 $(BUILD)/labctl $(DESTDIR)$(PREFIX)/bin/labctl
	install -D -m 0644 contrib/systemd/labd.service $(DESTDIR)/lib/systemd/system/labd.service
	install -D -m 0644 contrib/systemd/labd.sysusers $(DESTDIR)/usr/lib/sysusers.d/labd.conf
	install -D -m 0644 contrib/systemd/multi-host.conf \
		$(DESTDIR)$(PREFIX)/share/doc/labd/examples/systemd/multi-host.conf
	install -D -m 0644 contrib/labd.conf.example $(DESTDIR)/etc/labd/labd.conf.example
	install -D -m 0644 README.md $(DESTDIR)$(PREFIX)/share/doc/labd/README.md
	install -D -m 0644 -t $(DESTDIR)$(PREFIX)/share/doc/labd/examples/devices devices/README.md \
		devices/*.conf
	install -d $(DESTDIR)$(PREFIX)/share/labd/web
	install -m 0644 $(WEB_FILES) $(DESTDIR)$(PREFIX)/share/labd/web/
	install -D -m 0644 -t $(DESTDIR)$(PREFIX)/share/labd/web/vendor/xterm \
		$(addprefix $(XTERM_DIR)/,$(XTERM_FILES))
	[ ! -f contrib/labctl.bash-completion ] || install -D -m 0644 contrib/labctl.bash-completion \
		$(DESTDIR)$(PREFIX)/share/bash-completion/completions/labctl
	for p in $(MAN_PAGES); do \
		install -D -m 0644 $$p $(DESTDIR)$(PREFIX)/share/man/man$${p##*.}/$${p##*/} || exit 1; \
	done

# doc/api.md's list of routes, from the route table (t4000 checks it).
api-doc: $(BUILD)/tests/helper/api-routes
	$(BUILD)/tests/helper/api-routes --write doc/api.md

include tests/fuzz/fuzz.mk

clean:
	rm -rf build build-san build-fuzz

-include $(shell find $(OBJ) -name '*.d' 2>/dev/null)
