# vcapd: one non-recursive Makefile. Objects under $(BUILD)/, libraries through
# pkg-config, user CFLAGS first and project flags appended. Quiet unless V=1.
#
#   make            build build/vcapd and the unit tests
#   make run        install missing packages, build the daemon alone, start it
#                   (ARGS='--listen 0.0.0.0:8080' to view it from other machines)
#   make test       install missing packages, build, run every test
#   make asan       unit + integration tests under AddressSanitizer/UBSan
#   make day        the day-in-the-life VM test, 2 minutes (make test runs 90 s of it)
#   make soak       the day-in-the-life VM test for 30 minutes (not in make test)
#   make uvc        vcapd on uvcvideo: a USB webcam in the VM (also in make test)
#   make bench      benchmarks that print numbers (not tests)
#   make fuzz       libFuzzer harnesses, each for FUZZ_SECONDS (default 60)
#   make install    PREFIX=/usr/local DESTDIR= UNITDIR= (make uninstall: the same)
#   make deb        .deb packages for amd64, arm64, armhf from the builds (tests/deb.sh)

PREFIX  ?= /usr/local
DESTDIR ?=
BUILD   ?= build
CC      ?= cc
CFLAGS  ?= -O2 -g
PKG_CONFIG ?= pkg-config

PKGS := libevent libevent_pthreads libmicrohttpd libturbojpeg libjpeg libv4l2 gnutls openh264

ifneq ($(V),1)
Q := @
endif

override CFLAGS += -std=c11 -D_GNU_SOURCE -Wall -Wextra -Werror -Wshadow \
	-Wno-missing-field-initializers -fno-strict-aliasing -MMD -MP \
	-I. $(shell $(PKG_CONFIG) --cflags $(PKGS) 2>/dev/null)
# 64-bit file offsets and inode numbers on 32-bit ARM too (a no-op on 64-bit):
# without it readdir() fails with EOVERFLOW on large directory hashes (seen
# under qemu-arm). No library call here takes an off_t.
override CFLAGS += -D_FILE_OFFSET_BITS=64
LDLIBS += $(shell $(PKG_CONFIG) --libs $(PKGS) 2>/dev/null) -lyuv -lcrypt -lpthread -lm

# The libFuzzer build (make fuzz-bins: CC=clang SAN=fuzz BUILD=build/fuzz):
# every object instrumented for coverage, ASan and UBSan; the harnesses link
# libFuzzer's main.
ifeq ($(SAN),fuzz)
override CFLAGS += -O1 -fsanitize=fuzzer-no-link,address,undefined -fno-omit-frame-pointer \
	-fno-sanitize-recover=undefined
override LDFLAGS += -fsanitize=fuzzer,address,undefined
endif

ifeq ($(SAN),1)
override CFLAGS += -O1 -fsanitize=address,undefined -fno-omit-frame-pointer \
	-fno-sanitize-recover=undefined
override LDFLAGS += -fsanitize=address,undefined
endif

COMMON_SRC := $(wildcard common/*.c)
SERVER_SRC := $(filter-out server/main.c,$(wildcard server/*.c server/*/*.c))
UNIT_SRC   := $(wildcard tests/unit/test_*.c)
BENCH_SRC  := $(wildcard tests/bench/bench_*.c)
TOOL_SRC   := $(wildcard tests/tools/*.c)
FUZZ_SRC   := $(wildcard tests/fuzz/fuzz_*.c)

COMMON_OBJ := $(COMMON_SRC:%.c=$(BUILD)/%.o)
SERVER_OBJ := $(SERVER_SRC:%.c=$(BUILD)/%.o)
UNIT_BIN   := $(UNIT_SRC:tests/unit/%.c=$(BUILD)/tests/%)
BENCH_BIN  := $(BENCH_SRC:tests/bench/%.c=$(BUILD)/bench/%)
TOOL_BIN   := $(TOOL_SRC:tests/tools/%.c=$(BUILD)/tools/%)
FUZZ_BIN   := $(FUZZ_SRC:tests/fuzz/%.c=$(BUILD)/%)
VCAPD      := $(BUILD)/vcapd

# Debian packages: what building needs, and what the tests drive.
DEPS_BUILD := gcc make pkg-config libevent-dev libmicrohttpd-dev \
	libturbojpeg0-dev libjpeg62-turbo-dev libv4l-dev libyuv-dev \
	libgnutls28-dev libcrypt-dev libopenh264-dev
DEPS_TEST  := ffmpeg curl v4l-utils valgrind qemu-system-x86 busybox-static \
	xz-utils chromium nginx-light systemd systemd-container debootstrap openssl clang libclang-rt-14-dev python3 chromium-driver firefox-esr webkit2gtk-driver xvfb gstreamer1.0-libav gstreamer1.0-plugins-bad \
	gstreamer1.0-plugins-good gstreamer1.0-tools patch iproute2

.PHONY: bench-bins all run test day soak uvc asan bench install clean deps-build deps-test unit integ vm tools \
	cross test-cross fuzz fuzz-bins fuzzers uninstall deb

all: $(VCAPD) $(UNIT_BIN) $(TOOL_BIN)

$(BUILD)/libvcap.a: $(COMMON_OBJ)
	@echo "  AR    $@"
	@# anew each time: `ar r` keeps members whose source was removed or renamed
	$(Q)rm -f $@ && $(AR) rcs $@ $^

$(BUILD)/%.o: %.c
	@mkdir -p $(dir $@)
	@echo "  CC    $<"
	$(Q)$(CC) $(CFLAGS) -c -o $@ $<

$(VCAPD): $(BUILD)/server/main.o $(SERVER_OBJ) $(BUILD)/libvcap.a
	@echo "  LD    $@"
	$(Q)$(CC) $(LDFLAGS) -o $@ $^ $(LDLIBS)

$(BUILD)/tests/%: $(BUILD)/tests/unit/%.o $(SERVER_OBJ) $(BUILD)/libvcap.a
	@echo "  LD    $@"
	$(Q)$(CC) $(LDFLAGS) -o $@ $^ $(LDLIBS)

$(BUILD)/bench/%: $(BUILD)/tests/bench/%.o $(SERVER_OBJ) $(BUILD)/libvcap.a
	@mkdir -p $(dir $@)
	@echo "  LD    $@"
	$(Q)$(CC) $(LDFLAGS) -o $@ $^ $(LDLIBS)

$(BUILD)/tools/%: $(BUILD)/tests/tools/%.o $(SERVER_OBJ) $(BUILD)/libvcap.a
	@mkdir -p $(dir $@)
	@echo "  LD    $@"
	$(Q)$(CC) $(LDFLAGS) -o $@ $^ $(LDLIBS)

$(BUILD)/fuzz_%: $(BUILD)/tests/fuzz/fuzz_%.o $(SERVER_OBJ) $(BUILD)/libvcap.a
	@echo "  LD    $@"
	$(Q)$(CC) $(LDFLAGS) -o $@ $^ $(LDLIBS)

deps-build:
	$(Q)sh tests/deps.sh $(DEPS_BUILD)

deps-test:
	$(Q)sh tests/deps.sh $(DEPS_BUILD) $(DEPS_TEST)

# The daemon alone (the test binaries build under make all / make test):
# on a Pi Zero 2 they would add minutes to the first start.
run: deps-build
	$(Q)$(MAKE) --no-print-directory $(VCAPD)
	./$(VCAPD) $(ARGS)

# The README's test command: everything, in one go. Fast results first: the
# unit tests run right after the plain build; the ASan and cross builds are
# steps of tests/run-all.sh, counted like tests, so a failure there (a package
# that cannot be fetched) still leaves the results before it.
test: deps-test
	$(Q)$(MAKE) --no-print-directory all
	$(Q)sh tests/run-all.sh

# A day in the life in the vivid guest (tests/vm/day.sh): `make day` for
# DAY_S (default 120) seconds, `make soak` for SOAK_SECONDS (default 1800);
# make test's vm suite runs it for 90 s (tests/run-all.sh). Each adds 3
# replug cycles of 16 s after the day.
SOAK_SECONDS ?= 1800
day: deps-test
	$(Q)$(MAKE) --no-print-directory all
	$(Q)sh tests/vm/day.sh

soak: deps-test
	$(Q)$(MAKE) --no-print-directory all
	$(Q)SOAK_SECONDS=$(SOAK_SECONDS) sh tests/vm/day.sh

# vcapd on the kernel's uvcvideo driver (tests/vm/boot_uvc.sh, one vivid-vm
# boot with --uvc; make test's vm suite runs it too), alone.
uvc: deps-test
	$(Q)$(MAKE) --no-print-directory all
	$(Q)sh tests/vm/boot_uvc.sh

asan: deps-build
	$(Q)$(MAKE) --no-print-directory BUILD=build/asan SAN=1 all
	$(Q)VCAP_BUILD=build/asan sh tests/run-all.sh unit integ

bench: deps-build
	$(Q)$(MAKE) --no-print-directory CFLAGS="-O3 -g" BUILD=build/bench-o3 bench-bins
	$(Q)sh tests/run-bench.sh build/bench-o3

# + the tools and daemon the VM benchmarks (tests/vm/bench_*.sh) run
bench-bins: $(BENCH_BIN) $(TOOL_BIN) $(VCAPD)

# Units go where systemd's pkg-config says for PREFIX: /lib/systemd/system
# for PREFIX=/usr, PREFIX/lib/systemd/system otherwise (systemd reads
# /usr/local/lib/systemd/system too); UNITDIR= overrides. The config stays
# in /etc/vcapd: the unit runs without one (--config-optional), so only the
# example is installed, never over a file the user wrote.
ifeq ($(PREFIX),/usr)
UNITDIR ?= $(or $(shell $(PKG_CONFIG) --variable=systemdsystemunitdir systemd 2>/dev/null),/lib/systemd/system)
else
UNITDIR ?= $(or $(shell $(PKG_CONFIG) --define-variable=prefix=$(PREFIX) \
	--define-variable=rootprefix=$(PREFIX) --variable=systemdsystemunitdir systemd 2>/dev/null),$(PREFIX)/lib/systemd/system)
endif
UNITS := vcapd.service vcapd@.service

install: $(VCAPD)
	install -Dm755 $(VCAPD) $(DESTDIR)$(PREFIX)/bin/vcapd
	install -d $(DESTDIR)$(PREFIX)/share/vcapd/web
	cp -r web/. $(DESTDIR)$(PREFIX)/share/vcapd/web/
	install -Dm644 conf/vcapd.conf $(DESTDIR)/etc/vcapd/vcapd.conf.example
	install -d $(DESTDIR)$(UNITDIR)
	for u in $(UNITS); do \
		sed 's|/usr/local/bin/vcapd|$(PREFIX)/bin/vcapd|' systemd/$$u >$(DESTDIR)$(UNITDIR)/$$u; \
		chmod 644 $(DESTDIR)$(UNITDIR)/$$u; done
	sed 's|/usr/local/|$(PREFIX)/|g' systemd/libcamera.conf >$(DESTDIR)$(PREFIX)/share/vcapd/libcamera.conf
	chmod 644 $(DESTDIR)$(PREFIX)/share/vcapd/libcamera.conf
	@echo "installed. Start it: sudo systemctl daemon-reload && sudo systemctl enable --now vcapd"

# What install put there; /etc/vcapd/vcapd.conf (the user's) stays.
uninstall:
	rm -f $(DESTDIR)$(PREFIX)/bin/vcapd $(DESTDIR)/etc/vcapd/vcapd.conf.example
	rm -rf $(DESTDIR)$(PREFIX)/share/vcapd
	for u in $(UNITS); do rm -f $(DESTDIR)$(UNITDIR)/$$u; done
	rmdir $(DESTDIR)/etc/vcapd 2>/dev/null || true
	@echo "uninstalled (a running vcapd keeps running: sudo systemctl disable --now vcapd first)"

# Debian packages for amd64 and the Pi's arm64/armhf from build/vcapd (this
# machine's arch) and the cross builds (make cross ARCH=arm64|armhf):
# tests/deb.sh, written to build/deb/. DEB_ARCHS= picks some (on a Pi:
# make deb DEB_ARCHS=arm64).
DEB_ARCHS ?= amd64 arm64 armhf
deb:
	$(Q)sh tests/deb.sh $(DEB_ARCHS)

# libFuzzer harnesses for every parser of outside input (tests/fuzz/),
# built with clang under build/fuzz; `make fuzz` runs each for FUZZ_SECONDS
# from its seed corpus (new inputs go to build/fuzz/corpus, crashes to
# build/fuzz/artifacts).
FUZZ_SECONDS ?= 60
FUZZ_CC ?= clang

fuzz: fuzz-bins
	$(Q)FUZZ_SECONDS=$(FUZZ_SECONDS) sh tests/fuzz/run.sh

fuzz-bins:
	$(Q)$(MAKE) --no-print-directory BUILD=build/fuzz CC=$(FUZZ_CC) SAN=fuzz fuzzers

fuzzers: $(FUZZ_BIN)

# Raspberry Pi: `make cross ARCH=arm64|armhf` installs the Debian cross
# toolchain, unpacks the target's -dev packages into a sysroot under
# build/cross-$(ARCH), then builds the daemon and
# the unit tests into build/cross-$(ARCH); `make test-cross` builds both and
# runs the unit tests under qemu-user (tests/cross.sh has the details).
ARCH ?= arm64
CROSS_CFLAGS ?= -O2 -g

cross:
	$(Q)sh tests/cross.sh deps $(ARCH)
	$(Q)$(MAKE) --no-print-directory BUILD=build/cross-$(ARCH) \
		CC=$$(sh tests/cross.sh triplet $(ARCH))-gcc \
		PKG_CONFIG="sh tests/cross.sh pkg-config $(ARCH)" \
		CFLAGS="$(CROSS_CFLAGS) $$(sh tests/cross.sh cflags $(ARCH))" \
		LDFLAGS="$$(sh tests/cross.sh ldflags $(ARCH))" all

test-cross:
	$(Q)$(MAKE) --no-print-directory cross ARCH=arm64
	$(Q)$(MAKE) --no-print-directory cross ARCH=armhf
	$(Q)sh tests/run-all.sh cross

clean:
	rm -rf build

# (not the cross builds' sysroot nor tests/deb_systemd.sh's Debian root: they
# have files and folders named *.d)
-include $(shell find $(BUILD) \( -name sysroot -o -name 'systemd-root*' \) -prune -o -name '*.d' -type f -print 2>/dev/null)
