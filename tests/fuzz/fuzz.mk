# SPDX-License-Identifier: GPL-2.0-or-later
# tests/fuzz/fuzz.mk -- libFuzzer harnesses for every parser of outside input
# (included by the Makefile).  clang builds labd's library once more, with
# -fsanitize=fuzzer-no-link,address,undefined, into build-fuzz/; each
# tests/fuzz/fuzz-NAME.c links against it into build-fuzz/fuzz-NAME.
#
#   make fuzzers              build them (needs clang and its runtime: make deps)
#   make fuzz [FUZZ_TIME=60]  run each for FUZZ_TIME seconds on its corpus
#   make check                replays every corpus file and runs each for 10 s
#                             (tests/fuzz/run, in parallel with the other tests)

FUZZ_CC ?= clang
FUZZ_TIME ?= 60
FUZZ_BUILD := build-fuzz
FUZZ_OBJ := $(FUZZ_BUILD)/obj
HAVE_FUZZ := $(shell command -v $(FUZZ_CC) >/dev/null 2>&1 && echo 1)
FUZZ_SAN := -fsanitize=address,undefined -fno-sanitize-recover=undefined -fno-omit-frame-pointer
FUZZ_CFLAGS := -g -O1 $(BASE_CFLAGS) $(FUZZ_SAN) -fsanitize=fuzzer-no-link -iquote tests/fuzz
FUZZ_SRCS := $(wildcard tests/fuzz/fuzz-*.c)
FUZZ_BINS := $(FUZZ_SRCS:tests/fuzz/%.c=$(FUZZ_BUILD)/%)
FUZZ_LIB_OBJS := $(LIB_SRCS:%.c=$(FUZZ_OBJ)/%.o)
# The JUnit harness checks its output with libxml2's parser.
FUZZ_XML_CFLAGS := $(shell $(PKG_CONFIG) --cflags libxml-2.0 2>/dev/null)
FUZZ_XML_LIBS := $(shell $(PKG_CONFIG) --libs libxml-2.0 2>/dev/null)
DEB_FUZZ := clang libclang-rt-14-dev libxml2-dev

.PHONY: fuzzers fuzz

$(FUZZ_OBJ)/%.o: %.c | pkg-check
	@mkdir -p $(dir $@)
	@$(if $(Q),echo "  FUZZCC  $<")
	$(Q)$(FUZZ_CC) $(FUZZ_CFLAGS) $(DEPFLAGS) -c -o $@ $<

$(FUZZ_OBJ)/dispatcher/api/api_lava_rpc.o: FUZZ_CFLAGS += $(filter-out -I/usr/include,$(XMLRPC_CFLAGS))
$(FUZZ_OBJ)/tests/fuzz/%.o: FUZZ_CFLAGS += $(WERROR_FLAG)
$(FUZZ_OBJ)/tests/fuzz/fuzz-junit.o: FUZZ_CFLAGS += $(FUZZ_XML_CFLAGS)

$(FUZZ_BUILD)/liblabd.a: $(FUZZ_LIB_OBJS)
	@rm -f $@
	$(Q)ar rcs $@ $^

$(FUZZ_BUILD)/fuzz-%: $(FUZZ_OBJ)/tests/fuzz/fuzz-%.o $(FUZZ_BUILD)/liblabd.a
	@$(if $(Q),echo "  FUZZLD  $@")
	$(Q)$(FUZZ_CC) $(FUZZ_SAN) -fsanitize=fuzzer -o $@ $^ $(LABD_LIBS) \
		$(if $(filter junit,$*),$(FUZZ_XML_LIBS))

ifeq ($(HAVE_FUZZ),1)
fuzzers: $(FUZZ_BINS)
else
fuzzers:
	@echo "fuzz: $(FUZZ_CC) not found: the fuzzers are not built (make deps installs it)"
endif

fuzz: deps
	$(MAKE) fuzzers
	FUZZ_BUILD=$(FUZZ_BUILD) tests/fuzz/run --time $(FUZZ_TIME)

-include $(FUZZ_LIB_OBJS:.o=.d) $(FUZZ_SRCS:tests/fuzz/%.c=$(FUZZ_OBJ)/tests/fuzz/%.d)
