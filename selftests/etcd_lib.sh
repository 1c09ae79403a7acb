#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
#
# etcd for the domain suites: members started by the test itself (Debian's
# etcd-server, 3.4), each with a data directory under a mktemp directory
# and ports on loopback found free, killed by PID at exit. Two copies of
# a suite run side by side. Source after lib.sh. A cluster of members in
# namespaces (etcd_cluster_start) is in domain_lib.sh, which sources this.

# free_port: a TCP port on 127.0.0.1 nobody listens on now.
free_port()
{
	python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}

# etcd_start DIR: one member with its data in DIR/data and its log in
# DIR/etcd.log; sets ETCD_PID and ETCD_URL (and exports QOSCTL_ETCD).
# Waits until it answers. --max-txn-ops is raised: a domain's load is one
# transaction of a few keys per interface (Documentation/deploy.rst).
etcd_start()
{
	local dir=$1 cport pport i

	cport=$(free_port) && pport=$(free_port) || return 1
	ETCD_URL=http://127.0.0.1:$cport
	etcd --name m1 --data-dir "$dir/data" \
		--listen-client-urls "$ETCD_URL" --advertise-client-urls "$ETCD_URL" \
		--listen-peer-urls "http://127.0.0.1:$pport" \
		--initial-advertise-peer-urls "http://127.0.0.1:$pport" \
		--initial-cluster "m1=http://127.0.0.1:$pport" \
		--max-txn-ops 10000 >"$dir/etcd.log" 2>&1 &
	ETCD_PID=$!
	defer etcd_stop "$ETCD_PID"
	export QOSCTL_ETCD=$ETCD_URL
	for ((i = 0; i < 100; i++)); do
		etcdctl --endpoints "$ETCD_URL" --command-timeout=1s endpoint health \
			>/dev/null 2>&1 && return 0
		kill -0 "$ETCD_PID" 2>/dev/null || break
		sleep 0.1
	done
	echo "etcd did not start: $(tail -3 "$dir/etcd.log")"
	return 1
}

# etcd_stop PID: kill a member this suite started (a stopped one too).
etcd_stop()
{
	kill -CONT "$1" 2>/dev/null
	kill "$1" 2>/dev/null
	wait "$1" 2>/dev/null
}

# etcd_dump PREFIX: every key and value under PREFIX, and the revision.
etcd_dump()
{
	etcdctl --endpoints "$ETCD_URL" get --prefix "$1"
	etcdctl --endpoints "$ETCD_URL" get --prefix "$1" -w json | jq -r .header.revision
}

# A domain of one router ROUTER with eth0 (10.1.0.0/24, 2001:db8:1::/64)
# and eth1 (10.2.0.0/24, 2001:db8:2::/64), pip-20pct at 100mbit on both,
# on stdout: the fixture of domain_persist.sh and domain_tls.sh.
domain_json_one()
{
	cat <<EOF
{"routers": ["$1"],
 "interfaces": [
  {"router": "$1", "dev": "eth0", "rate": "100mbit", "profile": "pip-20pct"},
  {"router": "$1", "dev": "eth1", "rate": "100mbit", "profile": "pip-20pct"}],
 "prefixes": [
  {"prefix": "10.1.0.0/24", "router": "$1", "dev": "eth0"},
  {"prefix": "2001:db8:1::/64", "router": "$1", "dev": "eth0"},
  {"prefix": "10.2.0.0/24", "router": "$1", "dev": "eth1"},
  {"prefix": "2001:db8:2::/64", "router": "$1", "dev": "eth1"}]}
EOF
}

# domain_json_line R1 R2 R3 [DEVS] [RATES] [PROFILE] [PFX1] [PFX3]: on
# stdout, a domain of three routers in a line, R1 - R2 - R3, with six
# interfaces: R1's edge and uplink, R2's two, R3's uplink and edge (DEVS,
# six names, default "eth0 eth1 eth1 eth2 eth1 eth0"), at RATES (six,
# default 100mbit each), pip-20pct on each but R3's edge, which has
# PROFILE (default pip-20pct). R1's edge routes the prefixes PFX1 (default
# "10.1.0.0/24 2001:db8:1::/64"), R3's edge PFX3 (default
# "10.3.0.0/24 2001:db8:3::/64"). The fixture of domain.sh, domain_cli.sh,
# demo-domain.sh and scripts/bench/domain.sh.
domain_json_line()
{
	local r=("$1" "$1" "$2" "$2" "$3" "$3") peer=("" "$2" "$1" "$3" "$2" "")
	local -a dev rate pfx1 pfx3
	local prof=${6:-pip-20pct} i p sep line

	read -ra dev <<<"${4:-eth0 eth1 eth1 eth2 eth1 eth0}"
	read -ra rate <<<"${5:-100mbit 100mbit 100mbit 100mbit 100mbit 100mbit}"
	read -ra pfx1 <<<"${7:-10.1.0.0/24 2001:db8:1::/64}"
	read -ra pfx3 <<<"${8:-10.3.0.0/24 2001:db8:3::/64}"
	printf '{"routers": ["%s", "%s", "%s"],\n "interfaces": [' "$1" "$2" "$3"
	for i in 0 1 2 3 4 5; do
		p=pip-20pct
		[ $i = 5 ] && p=$prof
		line="{\"router\": \"${r[i]}\", \"dev\": \"${dev[i]}\", \"rate\": \"${rate[i]}\", \"profile\": \"$p\""
		[ -n "${peer[i]}" ] && line+=", \"peer\": \"${peer[i]}\""
		sep=,
		[ $i = 5 ] && sep=
		printf '\n  %s}%s' "$line" "$sep"
	done
	printf '],\n "prefixes": ['
	sep=
	for p in "${pfx1[@]}"; do
		printf '%s\n  {"prefix": "%s", "router": "%s", "dev": "%s"}' "$sep" "$p" "$1" "${dev[0]}"
		sep=,
	done
	for p in "${pfx3[@]}"; do
		printf '%s\n  {"prefix": "%s", "router": "%s", "dev": "%s"}' "$sep" "$p" "$3" "${dev[5]}"
	done
	printf ']}\n'
}
