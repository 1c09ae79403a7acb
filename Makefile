# SPDX-License-Identifier: GPL-2.0-only
#
# qosctl: dual-stack DiffServ QoS data plane on eBPF and tc.
#
#   make              build BPF objects, skeleton and qosctl into $(OUTPUT)
#   make check        install dependencies, build, run every test (TAP)
#   make check-shape  functions over 80 lines, includes across the layers (no build)
#   make demo         install dependencies, build, run the namespace demo
#   make demo-domain  three routers with their agents and an etcd cluster, in namespaces
#   make bench-domain the domain on etcd: admission latency, desired to applied, 50 routers
#   make vmcheck      the same tests inside virtme-ng VMs (KERNELS=...)
#   make bench        benchmarks against nftables and u32: tables, CSV in $(OUTPUT)/bench
#   make experiments  the source documents' experiments: CSV and plots in $(OUTPUT)/experiments,
#                     then 6in4 and the figures over a wide-area delay in a 6.12 VM:
#                     $(OUTPUT)/experiments-vm
#   make bench-latency  PIP/BE latency against CAKE and sqm, in a 6.12 VM: $(OUTPUT)/bench-latency
#   make install      PREFIX=/usr/local DESTDIR= (builds the installed qosctl for PREFIX)
#   make deb          the Debian package, into $(OUTPUT)/deb
#   make check-trixie  build, C unit suites and `make deb` in a Debian 13 chroot
#                     (kept in $(OUTPUT)/trixie)
#   make bench-classifier  ns per packet of the classifier (BPF_PROG_TEST_RUN)
#   make bench-lookup  one rule lookup: 48-byte key, a key per family, LPM trie
#   make bench-mq     two CPUs through one HTB root against a tree per TX queue;
#                     qosctl balance: convergence and CPU
#   make fuzz         fuzz each parser of untrusted input for FUZZ_SECONDS (libFuzzer)

SANITIZE ?=
# A sanitized build goes to its own directory: make does not track flags,
# and a mix of instrumented and plain objects would not link.
ifneq ($(SANITIZE),)
OUTPUT ?= .output-san
endif
OUTPUT ?= .output
PREFIX ?= /usr/local
SBINDIR ?= $(PREFIX)/sbin
SYSCONFDIR ?= /etc
DATADIR ?= $(PREFIX)/share/qosctl
LIBDIR ?= $(PREFIX)/lib/qosctl
UNITDIR ?= $(PREFIX)/lib/systemd/system
MANDIR ?= $(PREFIX)/share/man
DOCDIR ?= $(PREFIX)/share/doc/qosctl
BASHCOMPDIR ?= $(PREFIX)/share/bash-completion/completions
ZSHCOMPDIR ?= $(PREFIX)/share/zsh/site-functions
RST2MAN ?= rst2man
V ?= 0

CLANG ?= clang
BPFTOOL ?= bpftool
CC ?= cc
PKG_CONFIG ?= pkg-config

ifeq ($(V),1)
Q =
msg =
else
Q = @
msg = @printf '  %-8s %s\n' "$(1)" "$(2)";
endif

ABS_OUTPUT := $(abspath $(OUTPUT))
MULTIARCH := $(shell $(CC) -print-multiarch 2>/dev/null)
KSRC_TAR ?= $(firstword $(wildcard /usr/src/linux-source-6.12.tar.xz))

BPF_CFLAGS := -g -O2 -target bpf -Wall -Werror -D__TARGET_ARCH_x86 \
	      $(if $(MULTIARCH),-I/usr/include/$(MULTIARCH))
BPF_SRCS := bpf/qos_ingress.bpf.c bpf/qos_egress.bpf.c
QOS_HDRS := $(wildcard bpf/qos_*.h)
BPF_HDRS := $(QOS_HDRS) $(wildcard bpf/lib/*.h)
BPF_OBJS := $(patsubst bpf/%.bpf.c,$(OUTPUT)/bpf/%.bpf.o,$(BPF_SRCS))

LIBS_PC := libbpf libnl-route-3.0 libnl-3.0 inih json-c
# Loaded at run time by the commands that use them (user/lib/lazylib.c):
# their headers only at build time, their sonames in qos_features.h.
LIBS_DL := libmicrohttpd libcurl
PC_CFLAGS = $(shell $(PKG_CONFIG) --cflags $(LIBS_PC) $(LIBS_DL) 2>/dev/null)
PC_LIBS = $(shell $(PKG_CONFIG) --libs $(LIBS_PC) 2>/dev/null) -lresolv

# No build path in what is installed: debug information names sources
# relative to the tree (the in-tree qosctl still embeds tc-profiles/, on
# purpose: user/intree.c).
PREFIX_MAP := -ffile-prefix-map=$(ABS_OUTPUT)=$(notdir $(ABS_OUTPUT)) -ffile-prefix-map=$(CURDIR)=.
BPF_CFLAGS += $(PREFIX_MAP)

CFLAGS ?= -O2 -g
CFLAGS += -Wall -Wextra -Wno-unused-parameter -Werror=implicit-function-declaration \
	  -std=gnu11 -I$(OUTPUT) -Iuser $(PREFIX_MAP) $(CPPFLAGS)
ifneq ($(SANITIZE),)
CFLAGS += -fsanitize=address,undefined -fno-omit-frame-pointer
LDFLAGS += -fsanitize=address,undefined
endif

LIB_SRCS := $(wildcard user/lib/*.c user/model/*.c user/kernel/*.c user/txn/*.c user/out/*.c \
	    user/probe/*.c user/domain/*.c)
CLI_SRCS := $(wildcard user/cli/*.c)
LIB_OBJS := $(patsubst user/%.c,$(OUTPUT)/user/%.o,$(LIB_SRCS))
CLI_OBJS := $(patsubst user/%.c,$(OUTPUT)/user/%.o,$(CLI_SRCS))
LIBQOS := $(OUTPUT)/libqos.a
# Two links of the same objects: the in-tree qosctl (tests, demo, bench)
# also finds the profiles of this tree; the installed one only those under
# the paths `make install` was given.
QOSCTL := $(OUTPUT)/qosctl
QOSCTL_DIST := $(OUTPUT)/dist/qosctl
PATHS_H := $(OUTPUT)/qos_paths.h
# The agent's apply, timed in a process that stays up (apply-latency.sh).
BENCH_APPLY := $(OUTPUT)/bench/bench_apply

.DELETE_ON_ERROR:
.PHONY: all clean deps check demo demo-domain bench-domain vmcheck install install-files deb selftests bench-classifier \
	fuzz bench experiments experiments-vm bench-latency bench-mq bench-lookup check-trixie \
	check-shape

# A fresh machine stops here with the missing packages on one line rather
# than at the first compiler error. Only goals that build are probed; check,
# demo and the others install the packages first and probe in their sub-make.
BUILD_GOALS := all selftests install install-files
ifneq ($(filter $(BUILD_GOALS),$(or $(MAKECMDGOALS),all)),)
MISSING := $(shell CC='$(CC)' CLANG='$(CLANG)' BPFTOOL='$(BPFTOOL)' RST2MAN='$(RST2MAN)' \
	     PKG_CONFIG='$(PKG_CONFIG)' KSRC_TAR='$(KSRC_TAR)' scripts/check-deps.sh \
	     $(if $(filter-out install install-files,$(or $(MAKECMDGOALS),all)),--selftests))
ifneq ($(MISSING),)
$(error missing Debian packages: $(MISSING); install them with scripts/install-deps.sh (as root))
endif
endif

# libFuzzer needs clang's fuzzer runtime (libclang-rt-14-dev on Debian 12, -19- on 13):
# probed, so a machine without it still builds everything else.
FUZZ_CC ?= clang
FUZZ_SECONDS ?= 60
FUZZ_CFLAGS := -g -O1 -fsanitize=fuzzer-no-link,address,undefined -fno-sanitize-recover=all \
	       -std=gnu11 -I$(OUTPUT) -Iuser
FUZZ_OBJS := $(patsubst user/%.c,$(OUTPUT)/fuzz/%.o,$(LIB_SRCS))
# One target per parser of input qosctl does not write itself, fuzz/NAME.c
# each (Documentation/testing.rst, "Fuzzing"); fuzz_domain is the domain
# file of `qosctl domain load`.
FUZZ_NAMES := fuzz_profile fuzz_stamp fuzz_record fuzz_reserve fuzz_domain
FUZZ_BINS := $(addprefix $(OUTPUT)/fuzz/,$(FUZZ_NAMES))
HAVE_FUZZER := $(shell echo 'int LLVMFuzzerTestOneInput(const char *d, long n) { return 0; }' | \
		 $(FUZZ_CC) -x c -fsanitize=fuzzer - -o /dev/null 2>/dev/null && echo 1)

all: $(QOSCTL) $(OUTPUT)/qosctl.8 install-files selftests $(BENCH_APPLY) $(if $(HAVE_FUZZER),$(FUZZ_BINS))

$(OUTPUT) $(OUTPUT)/bpf $(OUTPUT)/user $(OUTPUT)/bench $(OUTPUT)/dist:
	$(Q)mkdir -p $@

# Paths fixed at install time. make does not track variables, so they go
# into a header rewritten only when one changes: what depends on it (the
# profile lookup, the units, the ifupdown hooks) is rebuilt by
# `make install PREFIX=/usr` after a plain `make`, and nothing else is.
# Nothing is written when nothing changed: the tests install from an output
# directory that may be read-only (make vmcheck).
PATHS_TEXT = printf '%s\n' '/* Generated by the Makefile: paths fixed at install time. */' \
	'\#define QOS_SBINDIR "$(SBINDIR)"' '\#define QOS_SYSCONFDIR "$(SYSCONFDIR)"' \
	'\#define QOS_DATADIR "$(DATADIR)"'

# Written while the Makefile is read, and only when the paths changed: a
# rule with a FORCE prerequisite would leave `make -q` (vmcheck's check
# that the build is current) always finding qosctl out of date.
ifeq ($(filter clean,$(MAKECMDGOALS)),)
$(shell mkdir -p $(OUTPUT) && { $(PATHS_TEXT) | cmp -s - $(PATHS_H) 2>/dev/null || \
	$(PATHS_TEXT) >$(PATHS_H); })
endif
$(PATHS_H): ;

# libbpf >= 1.3's tcx API (bpf_prog_attach_opts' relative_fd and
# expected_revision, bpf_prog_query_opts' revision), probed by a compile as
# xdp-tools' configure does, into a header rewritten only when the answer
# changes (libbpf-dev upgraded): user/kernel/tcx.c depends on it.
FEATURES_H := $(OUTPUT)/qos_features.h
HASH := \#
TCX_PROBE := $(shell printf '%s\n' '$(HASH)include <bpf/bpf.h>' 'int main(void) {' \
	'LIBBPF_OPTS(bpf_prog_attach_opts, a, .relative_fd = 0, .expected_revision = 1);' \
	'LIBBPF_OPTS(bpf_prog_query_opts, q, .revision = 0);' \
	'return bpf_prog_attach_opts(0, 0, 0, &a) + bpf_prog_query_opts(0, 0, &q); }' | \
	$(CC) -x c - -fsyntax-only -Werror $(PC_CFLAGS) 2>/dev/null && echo 1)
# The sonames of the libraries loaded at run time, from the development
# links installed (libcurl4-gnutls-dev's libcurl.so is libcurl-gnutls.so.4).
soname = $(shell objdump -p $$(readlink -f $$($(PKG_CONFIG) --variable=libdir $(1))/$(2).so) \
	 2>/dev/null | awk '/SONAME/ { print $$2 }')
FEATURES_TEXT = printf '%s\n' '/* Generated by the Makefile: what the libraries offer. */' \
	$(if $(TCX_PROBE),'$(HASH)define QOS_HAVE_LIBBPF_TCX 1') \
	'$(HASH)define QOS_LIBCURL_SONAME "$(call soname,libcurl,libcurl)"' \
	'$(HASH)define QOS_LIBMHD_SONAME "$(call soname,libmicrohttpd,libmicrohttpd)"'
ifeq ($(filter clean,$(MAKECMDGOALS)),)
$(shell mkdir -p $(OUTPUT) && { $(FEATURES_TEXT) | cmp -s - $(FEATURES_H) 2>/dev/null || \
	$(FEATURES_TEXT) >$(FEATURES_H); })
endif
$(FEATURES_H): ;

# make does not track flags: the Makefile, where they are set, is a
# prerequisite (BPF_CFLAGS' -ffile-prefix-map keeps the tree's paths out of
# the BTF the installed binary embeds).
$(OUTPUT)/bpf/%.bpf.o: bpf/%.bpf.c $(BPF_HDRS) Makefile | $(OUTPUT)/bpf
	$(call msg,BPF,$@)
	$(Q)$(CLANG) $(BPF_CFLAGS) -c $< -o $@

# Both programs in one object, so they share one set of maps (__weak in
# bpf/lib/maps.h) and one skeleton.
$(OUTPUT)/qos.bpf.o: $(BPF_OBJS)
	$(call msg,LINK,$@)
	$(Q)$(BPFTOOL) gen object $@ $^

$(OUTPUT)/qos.skel.h: $(OUTPUT)/qos.bpf.o
	$(call msg,SKEL,$@)
	$(Q)$(BPFTOOL) gen skeleton $< name qos > $@

$(LIB_OBJS) $(CLI_OBJS): $(OUTPUT)/user/%.o: user/%.c $(wildcard user/*/*.h) $(QOS_HDRS) \
	     bpf/lib/tb.h $(OUTPUT)/qos.skel.h
	$(call msg,CC,$@)
	$(Q)mkdir -p $(dir $@)
	$(Q)$(CC) $(CFLAGS) $(PC_CFLAGS) -c $< -o $@

$(OUTPUT)/user/model/profile_path.o $(OUTPUT)/fuzz/model/profile_path.o: $(PATHS_H)
$(OUTPUT)/user/kernel/tcx.o $(OUTPUT)/fuzz/kernel/tcx.o: $(FEATURES_H)
$(OUTPUT)/user/lib/lazylib.o $(OUTPUT)/fuzz/lib/lazylib.o: $(FEATURES_H)

$(OUTPUT)/user/intree.o: user/intree.c user/model/profile_path.h | $(OUTPUT)/user
	$(call msg,CC,$@)
	$(Q)$(CC) $(CFLAGS) -DQOS_TREE_PROFILE_DIR='"$(abspath tc-profiles)"' -c $< -o $@

# Made anew: an archive updated in place keeps members of deleted sources.
$(LIBQOS): $(LIB_OBJS)
	$(call msg,AR,$@)
	$(Q)rm -f $@ && $(AR) rcs $@ $^

$(QOSCTL): $(CLI_OBJS) $(OUTPUT)/user/intree.o $(LIBQOS)
	$(call msg,LD,$@)
	$(Q)$(CC) $(CFLAGS) $(filter %.o %.a,$^) $(LDFLAGS) $(PC_LIBS) -lm -o $@

$(QOSCTL_DIST): $(CLI_OBJS) $(LIBQOS) | $(OUTPUT)/dist
	$(call msg,LD,$@)
	$(Q)$(CC) $(CFLAGS) $(filter %.o %.a,$^) $(LDFLAGS) $(PC_LIBS) -lm -o $@

# The kselftest harness comes from Debian's kernel source tarball; it is
# extracted into the output directory, never committed.
$(OUTPUT)/kselftest/kselftest_harness.h:
	$(call msg,EXTRACT,$@)
	$(Q)test -n "$(KSRC_TAR)" || { echo "linux-source-6.12 is not installed (scripts/install-deps.sh)"; exit 1; }
	$(Q)mkdir -p $(OUTPUT)/kselftest
	$(Q)tar -xJf $(KSRC_TAR) -C $(OUTPUT)/kselftest --strip-components=4 --wildcards \
		'*/tools/testing/selftests/kselftest_harness.h' '*/tools/testing/selftests/kselftest.h'
	$(Q)touch $@

selftests: $(QOSCTL) $(LIBQOS) $(OUTPUT)/kselftest/kselftest_harness.h
	$(Q)$(MAKE) --no-print-directory -C selftests OUTPUT=$(ABS_OUTPUT)/selftests \
		TOP_OUTPUT=$(ABS_OUTPUT) SANITIZE=$(SANITIZE) V=$(V)

$(OUTPUT)/fuzz:
	$(Q)mkdir -p $@

$(FUZZ_OBJS): $(OUTPUT)/fuzz/%.o: user/%.c $(wildcard user/*/*.h) $(QOS_HDRS) bpf/lib/tb.h \
	      $(OUTPUT)/qos.skel.h
	$(call msg,FUZZCC,$@)
	$(Q)mkdir -p $(dir $@)
	$(Q)$(FUZZ_CC) $(FUZZ_CFLAGS) $(PC_CFLAGS) -c $< -o $@

$(OUTPUT)/fuzz/libqos.a: $(FUZZ_OBJS)
	$(call msg,AR,$@)
	$(Q)rm -f $@ && $(AR) rcs $@ $^

$(FUZZ_BINS): $(OUTPUT)/fuzz/%: fuzz/%.c fuzz/seeds.h $(OUTPUT)/fuzz/libqos.a
	$(call msg,FUZZCC,$@)
	$(Q)$(FUZZ_CC) $(FUZZ_CFLAGS) -fsanitize=fuzzer $(PC_CFLAGS) $< $(OUTPUT)/fuzz/libqos.a \
		$(PC_LIBS) -lm -o $@

# Each target for FUZZ_SECONDS; the corpora grow in the output directory,
# seeded by tc-profiles/ (the profile parser) and by the targets themselves
# (QOS_FUZZ_SEEDS, fuzz/seeds.h).
fuzz: deps
	$(Q)$(MAKE) --no-print-directory $(FUZZ_BINS)
	$(Q)set -e; for f in $(FUZZ_NAMES); do \
		c=$(OUTPUT)/fuzz/corpus-$${f#fuzz_}; mkdir -p $$c; \
		d=fuzz/$${f#fuzz_}.dict; \
		QOS_FUZZ_SEEDS=$$c $(OUTPUT)/fuzz/$$f -max_total_time=$(FUZZ_SECONDS) -timeout=10 \
			$$(test -f $$d && echo -dict=$$d) $$c \
			$$(test $$f = fuzz_profile && echo tc-profiles); \
	done

deps:
	$(Q)scripts/install-deps.sh

BENCH_CLASSIFIER := $(OUTPUT)/bench/bench_classifier
$(BENCH_APPLY): bench/bench_apply.c $(OUTPUT)/user/intree.o $(LIBQOS) | $(OUTPUT)/bench
	$(call msg,CC,$@)
	$(Q)$(CC) $(CFLAGS) $(PC_CFLAGS) $< $(OUTPUT)/user/intree.o $(LIBQOS) $(LDFLAGS) $(PC_LIBS) \
		-lm -o $@

$(BENCH_CLASSIFIER): bench/bench_classifier.c selftests/pkt.h $(LIBQOS) | $(OUTPUT)/bench
	$(call msg,CC,$@)
	$(Q)$(CC) $(CFLAGS) $(PC_CFLAGS) -Iselftests -DQOS_SRCDIR='"$(abspath .)"' $< $(LIBQOS) \
		$(LDFLAGS) $(PC_LIBS) -lm -o $@

bench-classifier: deps
	$(Q)$(MAKE) --no-print-directory $(BENCH_CLASSIFIER)
	$(Q)$(BENCH_CLASSIFIER) $(BENCH_ARGS)

# One rule-table lookup by map layout: the hash as it is, a key per
# family, an LPM trie (Documentation/performance.rst).
BENCH_LOOKUP := $(OUTPUT)/bench/bench_lookup
BENCH_LOOKUP_OBJ := $(OUTPUT)/bench/lookup.bpf.o

$(BENCH_LOOKUP_OBJ): bench/lookup.bpf.c $(QOS_HDRS) | $(OUTPUT)/bench
	$(call msg,BPF,$@)
	$(Q)$(CLANG) $(BPF_CFLAGS) -c $< -o $@

$(BENCH_LOOKUP): bench/bench_lookup.c selftests/pkt.h $(QOS_HDRS) | $(OUTPUT)/bench
	$(call msg,CC,$@)
	$(Q)$(CC) $(CFLAGS) $(PC_CFLAGS) -Iselftests -Ibpf \
		-DLOOKUP_OBJ='"$(abspath $(BENCH_LOOKUP_OBJ))"' $< $(LDFLAGS) $(PC_LIBS) -o $@

bench-lookup: deps
	$(Q)$(MAKE) --no-print-directory $(BENCH_LOOKUP) $(BENCH_LOOKUP_OBJ)
	$(Q)$(BENCH_LOOKUP) $(BENCH_ARGS)

# The shape of the sources first: it takes a second and needs no build.
check-shape:
	$(Q)scripts/check-shape.sh

# selftests/deb.sh builds the package: make check installs its tools too.
check: check-shape
	$(Q)scripts/install-deps.sh --deb
	$(Q)$(MAKE) --no-print-directory all
	$(Q)$(MAKE) --no-print-directory -C selftests run_tests OUTPUT=$(ABS_OUTPUT)/selftests \
		TOP_OUTPUT=$(ABS_OUTPUT) SANITIZE=$(SANITIZE) \
		FUZZ_DIR=$(if $(HAVE_FUZZER),$(abspath $(OUTPUT)/fuzz))

# Debian 13 beside this machine's Debian 12: scripts/trixie-check.sh.
check-trixie:
	$(Q)scripts/trixie-check.sh $(ABS_OUTPUT)

demo: deps
	$(Q)$(MAKE) --no-print-directory $(QOSCTL)
	$(Q)QOSCTL=$(ABS_OUTPUT)/qosctl scripts/demo.sh

# Three routers and an etcd cluster in namespaces (Documentation/domain.rst).
demo-domain: deps
	$(Q)$(MAKE) --no-print-directory $(QOSCTL)
	$(Q)QOSCTL=$(ABS_OUTPUT)/qosctl scripts/demo-domain.sh

# The domain on etcd measured: admission latency, desired to applied, a
# star of simulated routers (Documentation/performance.rst).
bench-domain: deps
	$(Q)$(MAKE) --no-print-directory $(QOSCTL)
	$(Q)QOSCTL=$(ABS_OUTPUT)/qosctl scripts/bench/domain.sh $(ABS_OUTPUT)/bench

# Benchmarks and experiments are not tests: they print numbers, assert
# nothing, and run only when asked.
BENCH_HOOK_REF := $(OUTPUT)/bench/hook_ref.bpf.o

$(BENCH_HOOK_REF): bench/hook_ref.bpf.c | $(OUTPUT)/bench
	$(call msg,BPF,$@)
	$(Q)$(CLANG) $(BPF_CFLAGS) -c $< -o $@

bench: deps
	$(Q)$(MAKE) --no-print-directory $(QOSCTL) $(BENCH_HOOK_REF)
	$(Q)QOSCTL=$(ABS_OUTPUT)/qosctl BENCH_HOOK_OBJ=$(abspath $(BENCH_HOOK_REF)) \
		scripts/bench/run.sh $(ABS_OUTPUT)/bench

bench-mq: deps
	$(Q)$(MAKE) --no-print-directory $(QOSCTL)
	$(Q)QOSCTL=$(ABS_OUTPUT)/qosctl scripts/bench/mq.sh $(ABS_OUTPUT)/bench
	$(Q)QOSCTL=$(ABS_OUTPUT)/qosctl scripts/bench/mq_balance.sh $(ABS_OUTPUT)/bench

experiments: deps
	$(Q)$(MAKE) --no-print-directory $(QOSCTL)
	$(Q)QOSCTL=$(ABS_OUTPUT)/qosctl scripts/experiments/run-all $(ABS_OUTPUT)/experiments
	$(Q)$(MAKE) --no-print-directory experiments-vm

# What the build machines' kernel cannot run (sit, netem): 6in4 and the
# GRNET / 6NET figures over a delay, in Debian's 6.12 kernel under
# virtme-ng (scripts/experiments/run-vm). EXP_DELAY, EXP_DURATION,
# EXP_LOADS and EXP_FAMILIES are passed in; EXP_VM_LINK is its EXP_LINK
# (the host's rates would swamp an emulated guest).
EXP_KERNEL ?= 6.12
EXP_VM_ENV = $(foreach v,EXP_DELAY EXP_DURATION EXP_LOADS EXP_FAMILIES,\
	$(if $($(v)),$(v)="$($(v))")) $(if $(EXP_VM_LINK),EXP_LINK="$(EXP_VM_LINK)")

experiments-vm: $(QOSCTL)
	$(Q)if ! command -v vng >/dev/null 2>&1; then \
		echo "experiments-vm: skipped: vng (virtme-ng) is not installed; scripts/install-deps.sh --vm installs it"; \
	elif ! ls /boot/vmlinuz-$(EXP_KERNEL)* >/dev/null 2>&1; then \
		echo "experiments-vm: skipped: no /boot/vmlinuz-$(EXP_KERNEL)*; scripts/install-deps.sh --vm installs it"; \
	else \
		echo "experiments-vm: host $$(nproc) CPUs, load $$(cut -d' ' -f1-3 /proc/loadavg)"; \
		VMRUN_TIMEOUT=$${VMRUN_TIMEOUT:-3600} scripts/vmrun.sh $(EXP_KERNEL) \
			$(ABS_OUTPUT)/experiments-vm -- env QOSCTL=$(ABS_OUTPUT)/qosctl $(EXP_VM_ENV) \
			scripts/experiments/run-vm $(ABS_OUTPUT)/experiments-vm && \
		echo "experiments-vm: host load after $$(cut -d' ' -f1-3 /proc/loadavg)"; \
	fi

# Needs sch_cake and fq_codel, which the build machines' kernel lacks: runs
# in Debian's 6.12 kernel under virtme-ng. The LAT_* knobs of
# scripts/bench/latency.sh are passed into the guest.
LAT_KERNEL ?= 6.12
LAT_ENV = $(foreach v,LAT_LINK LAT_DURATION LAT_FLOOD LAT_PIP LAT_SYSTEMS EXP_FAMILIES,\
	$(if $($(v)),$(v)="$($(v))"))

bench-latency: deps
	$(Q)scripts/install-deps.sh --vm
	$(Q)$(MAKE) --no-print-directory $(QOSCTL)
	$(Q)echo "bench-latency: host $$(nproc) CPUs, load $$(cut -d' ' -f1-3 /proc/loadavg)"
	$(Q)scripts/vmrun.sh $(LAT_KERNEL) $(ABS_OUTPUT)/bench-latency -- env QOSCTL=$(ABS_OUTPUT)/qosctl \
		$(LAT_ENV) scripts/bench/latency.sh $(ABS_OUTPUT)/bench-latency
	$(Q)echo "bench-latency: host load after $$(cut -d' ' -f1-3 /proc/loadavg)"

vmcheck:
	$(Q)scripts/install-deps.sh --vm
	$(Q)$(MAKE) --no-print-directory all
	$(Q)scripts/vmcheck.sh $(ABS_OUTPUT) $(KERNELS)

$(OUTPUT)/qosctl.8: Documentation/qosctl.8.rst | $(OUTPUT)
	$(call msg,RST2MAN,$@)
	$(Q)$(RST2MAN) --exit-status=warning $< $@

SUBST = sed -e 's|@SBINDIR@|$(SBINDIR)|g' -e 's|@SYSCONFDIR@|$(SYSCONFDIR)|g'

UNITS := $(OUTPUT)/qosctl@.service $(OUTPUT)/qosctl-exporter.service \
	 $(OUTPUT)/qosctl-probe@.service $(OUTPUT)/qosctl-reflect.service \
	 $(OUTPUT)/qosctl-agent.service $(OUTPUT)/qosctl-balance@.service

$(UNITS): $(OUTPUT)/%: systemd/%.in $(PATHS_H)
	$(call msg,GEN,$@)
	$(Q)$(SUBST) $< > $@

$(OUTPUT)/ifupdown/qosctl: ifupdown/qosctl.in $(PATHS_H)
	$(call msg,GEN,$@)
	$(Q)mkdir -p $(dir $@)
	$(Q)$(SUBST) $< > $@

# Everything `make install` copies, built for the paths it is given.
install-files: $(QOSCTL_DIST) $(OUTPUT)/qosctl.8 $(UNITS) $(OUTPUT)/ifupdown/qosctl

# The BPF object is embedded in qosctl; the installed copy is for bpftool
# and for reading, not loaded from there. A configuration file already in
# SYSCONFDIR is the administrator's: left as it is.
install: install-files
	install -d $(DESTDIR)$(SBINDIR) $(DESTDIR)$(DATADIR)/tc-profiles $(DESTDIR)$(LIBDIR) \
		$(DESTDIR)$(MANDIR)/man8 $(DESTDIR)$(UNITDIR) $(DESTDIR)$(DOCDIR)/examples \
		$(DESTDIR)$(SYSCONFDIR)/default $(DESTDIR)$(SYSCONFDIR)/network/if-up.d \
		$(DESTDIR)$(SYSCONFDIR)/network/if-down.d
	install -m 0755 $(QOSCTL_DIST) $(DESTDIR)$(SBINDIR)/qosctl
	install -m 0644 tc-profiles/* $(DESTDIR)$(DATADIR)/tc-profiles/
	install -m 0644 $(OUTPUT)/qos.bpf.o $(DESTDIR)$(LIBDIR)/qos.bpf.o
	install -m 0644 $(OUTPUT)/qosctl.8 $(DESTDIR)$(MANDIR)/man8/qosctl.8
	install -m 0644 $(UNITS) $(DESTDIR)$(UNITDIR)/
	install -m 0755 $(OUTPUT)/ifupdown/qosctl $(DESTDIR)$(SYSCONFDIR)/network/if-up.d/qosctl
	install -m 0755 $(OUTPUT)/ifupdown/qosctl $(DESTDIR)$(SYSCONFDIR)/network/if-down.d/qosctl
	test -e $(DESTDIR)$(SYSCONFDIR)/default/qosctl-exporter || \
		install -m 0644 systemd/qosctl-exporter.default \
			$(DESTDIR)$(SYSCONFDIR)/default/qosctl-exporter
	test -e $(DESTDIR)$(SYSCONFDIR)/default/qosctl-reflect || \
		install -m 0644 systemd/qosctl-reflect.default \
			$(DESTDIR)$(SYSCONFDIR)/default/qosctl-reflect
	test -e $(DESTDIR)$(SYSCONFDIR)/default/qosctl-agent || \
		install -m 0600 systemd/qosctl-agent.default \
			$(DESTDIR)$(SYSCONFDIR)/default/qosctl-agent
	install -m 0644 systemd/IFACE.conf.example systemd/probe.conf.example \
		$(DESTDIR)$(DOCDIR)/examples/
ifneq ($(wildcard completion/qosctl.bash),)
	install -D -m 0644 completion/qosctl.bash $(DESTDIR)$(BASHCOMPDIR)/qosctl
endif
ifneq ($(wildcard completion/_qosctl),)
	install -D -m 0644 completion/_qosctl $(DESTDIR)$(ZSHCOMPDIR)/_qosctl
endif

# dpkg-buildpackage writes beside the source directory, so the package is
# built from a copy of the tree (uncommitted changes included) in
# $(OUTPUT)/deb, where the .deb lands. Its own build goes to the copy's
# .output, with none of this make's variables.
DEB_DIR := $(ABS_OUTPUT)/deb
DEB_VERSION := $(shell sed -n '1s/^[^(]*(\([^)]*\)).*/\1/p' debian/changelog)

deb:
	$(Q)scripts/install-deps.sh --deb
	$(Q)rm -rf $(DEB_DIR) && mkdir -p $(DEB_DIR)/qosctl-$(DEB_VERSION)
	$(Q)tar -cf - --exclude=./.git --exclude='./.output*' \
		$(if $(filter /%,$(OUTPUT)),,--exclude=./$(OUTPUT)) . | \
		tar -xf - -C $(DEB_DIR)/qosctl-$(DEB_VERSION)
	$(Q)cd $(DEB_DIR)/qosctl-$(DEB_VERSION) && env -u MAKEFLAGS -u MFLAGS -u MAKELEVEL \
		$(foreach v,$(.VARIABLES),$(if $(filter command line,$(origin $(v))),-u $(v))) \
		dpkg-buildpackage -b -us -uc -jauto
	$(Q)ls $(DEB_DIR)/*.deb

clean:
	$(Q)rm -rf $(OUTPUT)
