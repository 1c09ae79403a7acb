#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
#
# The systemd units run by systemd, sandbox and all. systemd is PID 1 of a
# container: new PID and mount namespaces in network namespace $NS, a
# fresh /run, and only qosctl's units, installed by `make install` under
# PREFIX=/opt/qosctl (a scratch directory mounted on /opt in there).
# qosctl@$DEV applies the conf's profile under the unit's capabilities,
# system call filter, namespace restrictions and read-only system; reload
# applies a changed conf; stop removes it; the exporter serves /metrics
# with no more than its two capabilities; the reflector answers IPv4 and
# IPv6 under a dynamic user that kept no capability after its bind;
# qosctl-balance@$DEV shares the 2-queue tree's rates, confined as the
# template is, and puts the static split back when stopped.
#
# Not exercised here: the device binding (BindsTo=/WantedBy= the device
# unit). Device units come from udev, which a container lacks, so those
# lines are dropped, and DefaultDependencies=no stands in for
# sysinit.target, which this systemd does not have. install.sh checks the
# lines and runs systemd-analyze verify on the unit as shipped.
#
#   $NS:  $DEV (veth, 2 TX queues) --- $PEER
#         systemd (PID 1): qosctl@$DEV.service (queues 2),
#                          qosctl-balance@$DEV.service,
#                          qosctl-exporter.service (127.0.0.1:$PORT),
#                          qosctl-reflect.service (:862)

source "$(dirname "$0")/lib.sh"
require_root
require_cmd make unshare nsenter python3 jq
[ -x /lib/systemd/systemd ] || { echo "SKIP: systemd is not installed"; exit $ksft_skip; }

src=$(readlink -f "$(dirname "$0")/..")
out_dir=$(dirname "$(readlink -f "$QOSCTL")")
top=$(mktemp -d)
defer rm -rf "$top"
opt=$top/opt/qosctl

# Installed from a copy of the output directory (timestamps kept): another
# PREFIX rebuilds the binary, and the tests after this one use the original.
mkdir "$top/build"
cp -a "$out_dir"/bpf "$out_dir"/user "$out_dir"/qos.bpf.o "$out_dir"/qos.skel.h \
	"$out_dir"/libqos.a "$out_dir"/qosctl.8 "$out_dir"/qos_paths.h "$top/build"/
make -s -C "$src" install OUTPUT="$top/build" DESTDIR="$top" PREFIX=/opt/qosctl \
	SYSCONFDIR=/opt/qosctl/etc UNITDIR=/opt/qosctl/units >"$top/make.log" 2>&1 ||
	{ echo "make install failed: $(cat "$top/make.log")"; exit $ksft_fail; }

setup_ns NS || exit $ksft_fail
DEV=$(ifname_unique qu) PEER=$(ifname_unique qp)
ip -n "$NS" link add "$DEV" numtxqueues 2 numrxqueues 2 type veth peer name "$PEER" \
	numtxqueues 2 numrxqueues 2 && ip -n "$NS" link set "$DEV" up &&
	ip -n "$NS" link set "$PEER" up || exit $ksft_fail
PORT=$((20000 + RANDOM % 20000))

sed -i '/sys-subsystem-net-devices/d' "$opt/units/qosctl@.service" \
	"$opt/units/qosctl-balance@.service"
for u in qosctl@.service qosctl-exporter.service qosctl-reflect.service \
	 qosctl-balance@.service; do
	mkdir -p "$opt/units/$u.d"
	printf '[Unit]\nDefaultDependencies=no\n[Service]\nStandardOutput=append:%s\nStandardError=append:%s\n' \
		/opt/qosctl/log /opt/qosctl/log >"$opt/units/$u.d/test.conf"
done
# What a command of the template runs with, shown by one more command.
printf 'ExecStartPost=/bin/grep -E "^(CapBnd|NoNewPrivs|Seccomp):" /proc/self/status\n' \
	>>"$opt/units/qosctl@.service.d/test.conf"
printf '[Unit]\nDescription=qosctl units test\nDefaultDependencies=no\n' >"$opt/units/qosctl-test.target"
mkdir -p "$opt/etc/qosctl"
printf 'PROFILE=pip-20pct\nRATE=100mbit\nARGS="queues 2"\n' >"$opt/etc/qosctl/$DEV.conf"
printf 'LISTEN=127.0.0.1:%s\n' "$PORT" >"$opt/etc/default/qosctl-exporter"

# The container's own cgroup, under which its systemd makes its slices.
cgdirs=()
if [ "$(stat -f -c %T /sys/fs/cgroup)" = cgroup2fs ]; then
	cgdirs=("/sys/fs/cgroup/qosctl-units-$$")
else
	for h in systemd unified; do
		[ -d "/sys/fs/cgroup/$h" ] && cgdirs+=("/sys/fs/cgroup/$h/qosctl-units-$$")
	done
fi
if ! mkdir "${cgdirs[@]}"; then
	echo "SKIP: cannot make a cgroup for the container's systemd"
	exit $ksft_skip
fi
defer "for d in ${cgdirs[*]}; do find \$d -depth -type d -exec rmdir {} +; done"

(
	for d in "${cgdirs[@]}"; do echo "$BASHPID" >"$d/cgroup.procs"; done
	exec nsenter --net="/run/netns/$NS" -- unshare --pid --fork --mount --propagation private \
		--mount-proc --uts --ipc -- sh -c 'mount --bind "$0" /opt &&
			mount -t tmpfs -o mode=0755 tmpfs /run &&
			exec env -i container=qosctl-test SYSTEMD_UNIT_PATH=/opt/qosctl/units \
				/lib/systemd/systemd --system --unit=qosctl-test.target' "$top/opt"
) >"$top/systemd.log" 2>&1 &
nspid=$!
sdpid=
for ((i = 0; i < 50; i++)); do
	read -r sdpid <"/proc/$nspid/task/$nspid/children" 2>/dev/null
	[ -n "$sdpid" ] && break
	sleep 0.1
done
if [ -z "$sdpid" ]; then
	kill "$nspid"
	echo "systemd did not start: $(cat "$top/systemd.log")"
	exit $ksft_fail
fi
defer "kill -9 $sdpid; wait $nspid"
sd()
{
	nsenter -t "$sdpid" -m -p -n -- "$@"
}
for ((i = 0; i < 100; i++)); do
	case $(sd systemctl is-system-running 2>/dev/null) in
	running | degraded) break ;;
	esac
	sleep 0.1
done
if [ $i -eq 100 ]; then
	echo "SKIP: systemd does not run in a container here: $(cat "$top/systemd.log")"
	exit $ksft_skip
fi

profile()
{
	qosctl_ns "$NS" show dev "$DEV" -j 2>/dev/null | jq -r .profile
}

# The tests follow the units through their life: start, reload, the
# exporter and the reflector beside them, stop.
template_start()
{
	sd systemctl start "qosctl@$DEV.service"
	check_err $? "start failed: $(cat "$opt/log")"
	[ "$(profile)" = pip-20pct ]
	check_err $? "pip-20pct is not applied on $DEV: $(cat "$opt/log")"
	# CAP_NET_ADMIN (12), CAP_SYS_ADMIN (21) and CAP_BPF (39) only; no new
	# privileges; a seccomp filter.
	grep -qx $'CapBnd:\t0000008000201000' "$opt/log" && grep -qx $'NoNewPrivs:\t1' "$opt/log" &&
		grep -qx $'Seccomp:\t2' "$opt/log"
	check_err $? "qosctl@$DEV not confined as expected: $(cat "$opt/log")"
	log_test "systemctl start qosctl@$DEV: applies the conf's profile, sandboxed"
}

template_reload()
{
	printf 'PROFILE=pip-5pct\nRATE=100mbit\nARGS="queues 2"\nPERIOD=50\n' \
		>"$opt/etc/qosctl/$DEV.conf"
	sd systemctl reload "qosctl@$DEV.service"
	check_err $? "reload failed: $(cat "$opt/log")"
	[ "$(profile)" = pip-5pct ]
	check_err $? "reload did not apply the changed conf's pip-5pct"
	[ "$(sd systemctl is-active "qosctl@$DEV.service")" = active ]
	check_err $? "qosctl@$DEV is not active after reload"
	log_test "systemctl reload qosctl@$DEV: applies the changed conf"
}

# PIP's ceiling in queue 1 (pip-5pct: 2.5 Mbit/s static, 156 kbit/s
# balanced while idle).
pip_ceil()
{
	tc -n "$NS" class show dev "$DEV" | awk '$3 == "200:12" {
		for (i = 4; i < NF; i++) if ($i == "ceil") print $(i + 1) }'
}

balance_unit()
{
	local pid status

	sd systemctl start "qosctl-balance@$DEV.service"
	check_err $? "balance start failed: $(cat "$opt/log")"
	until_ok 5 eval '[ "$(pip_ceil)" = 156248bit ]'
	check_err $? "the balancer did not change the classes: 200:12 ceil $(pip_ceil); $(cat "$opt/log")"
	# In the container: its /run is its own.
	sd /opt/qosctl/sbin/qosctl show dev "$DEV" |
		grep -q "shared by demand by qosctl balance (pid .*, every 50 ms)"
	check_err $? "show: $(sd /opt/qosctl/sbin/qosctl show dev "$DEV" | grep ^queues)"
	pid=$(sd systemctl show -p MainPID --value "qosctl-balance@$DEV.service")
	status=$(sd cat "/proc/$pid/status")
	echo "$status" | grep -qx $'CapBnd:\t0000008000201000' &&
		echo "$status" | grep -qx $'NoNewPrivs:\t1' && echo "$status" | grep -qx $'Seccomp:\t2'
	check_err $? "balance not confined as expected: $(echo "$status" | grep -E 'Cap|NoNew|Seccomp')"
	sd systemctl stop "qosctl-balance@$DEV.service"
	check_err $? "balance stop failed"
	[ "$(pip_ceil)" = 2500Kbit ] &&
		[ "$(sd systemctl show -p ExecMainStatus --value "qosctl-balance@$DEV.service")" = 0 ]
	check_err $? "stop: 200:12 ceil $(pip_ceil), status $(sd systemctl show -p ExecMainStatus --value "qosctl-balance@$DEV.service")"
	log_test "qosctl-balance@$DEV: shares the rates, sandboxed; stop puts the static split back"
}

exporter()
{
	local metrics pid status

	sd systemctl start qosctl-exporter.service
	check_err $? "exporter start failed: $(cat "$opt/log")"
	wait_listen "$NS" t "$PORT"
	check_err $? "the exporter does not listen on 127.0.0.1:$PORT: $(cat "$opt/log")"
	metrics=$(in_ns "$NS" python3 -c 'import sys, urllib.request
print(urllib.request.urlopen("http://127.0.0.1:%s/metrics" % sys.argv[1], timeout=5).read().decode())' \
		"$PORT")
	check_err $? "scrape failed: $(cat "$opt/log")"
	echo "$metrics" | grep -q "\"$DEV\""
	check_err $? "the metrics do not name $DEV: $(echo "$metrics" | head -5)"
	pid=$(sd systemctl show -p MainPID --value qosctl-exporter.service)
	status=$(sd cat "/proc/$pid/status")
	# CAP_SYS_ADMIN and CAP_BPF, nothing else.
	echo "$status" | grep -qx $'CapBnd:\t0000008000200000' &&
		echo "$status" | grep -qx $'CapEff:\t0000008000200000' &&
		echo "$status" | grep -qx $'NoNewPrivs:\t1' &&
		echo "$status" | grep -qx $'Seccomp:\t2'
	check_err $? "exporter not confined as expected: $(echo "$status" | grep -E 'Cap|NoNew|Seccomp')"
	log_test "qosctl-exporter: $DEV in /metrics; CAP_BPF and CAP_SYS_ADMIN only"
}

reflector()
{
	local a n pid status

	sd systemctl start qosctl-reflect.service
	check_err $? "reflector start failed: $(cat "$opt/log")"
	wait_listen "$NS" u 862
	check_err $? "the reflector does not listen on 862: $(cat "$opt/log")"
	for a in 127.0.0.1 ::1; do
		n=$(in_ns "$NS" "$QOSCTL" probe send $a class be count 3 interval 10ms -j |
		    jq '.streams[0].received')
		[ "$n" = 3 ]
		check_err $? "$a: $n of 3 test packets answered: $(cat "$opt/log")"
	done
	pid=$(sd systemctl show -p MainPID --value qosctl-reflect.service)
	status=$(sd cat "/proc/$pid/status")
	# CAP_NET_BIND_SERVICE (10) in the bounding set, used for the bind and
	# then dropped: nothing effective, permitted or ambient; not root.
	echo "$status" | grep -qx $'CapBnd:\t0000000000000400' &&
		echo "$status" | grep -qx $'CapEff:\t0000000000000000' &&
		echo "$status" | grep -qx $'CapPrm:\t0000000000000000' &&
		echo "$status" | grep -qx $'CapAmb:\t0000000000000000' &&
		echo "$status" | grep -qx $'NoNewPrivs:\t1' &&
		echo "$status" | grep -qx $'Seccomp:\t2' &&
		! echo "$status" | grep -q $'^Uid:\t0\t'
	check_err $? "reflector not confined as expected: $(echo "$status" | grep -E 'Uid|Cap|NoNew|Seccomp')"
	sd systemctl stop qosctl-reflect.service
	check_err $? "reflector stop failed"
	log_test "qosctl-reflect: answers IPv4 and IPv6, dynamic user, no capability left"
}

stop()
{
	sd systemctl stop qosctl-exporter.service "qosctl@$DEV.service"
	check_err $? "stop failed: $(cat "$opt/log")"
	[ -z "$(profile)" ]
	check_err $? "stop left $(profile) on $DEV"
	[ -z "$(tc -n "$NS" filter show dev "$DEV" ingress)" ] &&
		[ -z "$(tc -n "$NS" class show dev "$DEV")" ]
	check_err $? "stop left programs or classes on $DEV"
	sd test -d /run/qosctl
	check_err $? "/run/qosctl did not survive the stop (RuntimeDirectoryPreserve=)"
	log_test "systemctl stop: removes the profile, keeps /run/qosctl"
}

ALL_TESTS="template_start template_reload balance_unit exporter reflector stop"
tests_run
exit $EXIT_STATUS
