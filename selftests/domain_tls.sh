#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
#
# qosctl domain against an etcd that serves clients over TLS and checks
# their certificates (Documentation/deploy.rst, "The domain's etcd
# cluster", TLS): one member on 127.0.0.1, free ports, a CA, a server
# certificate for IP 127.0.0.1 and a client certificate made with openssl
# in a mktemp directory. Nothing here needs a namespace: the broker's
# commands change etcd only.
#
#   qosctl --etcd https://127.0.0.1:PORT --etcd-ca --etcd-cert --etcd-key
#        |  TLS, client certificate checked (--client-cert-auth)
#   etcd (--cert-file --key-file --trusted-ca-file)

source "$(dirname "$(readlink -f "$0")")/lib.sh"
source "$(dirname "$(readlink -f "$0")")/etcd_lib.sh"

ALL_TESTS="tls_works no_client_cert wrong_ca key_readable env_https"

require_cmd jq etcd etcdctl openssl
require_qosctl

tmp_setup
RN=tls-$(mktemp -u XXXXXX | tr 'A-Z' 'a-z')
C=$TMP/pki

# ca NAME: a self-signed CA, C/NAME.pem and its key.
ca()
{
	openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -days 1 \
		-subj "/CN=qosctl test $1" -keyout "$C/$1-key.pem" -out "$C/$1.pem" 2>/dev/null
}

# leaf NAME CA EXT: a certificate signed by CA with the extensions EXT.
leaf()
{
	openssl req -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -subj "/CN=$1" \
		-keyout "$C/$1-key.pem" -out "$C/$1.csr" 2>/dev/null &&
		openssl x509 -req -in "$C/$1.csr" -CA "$C/$2.pem" -CAkey "$C/$2-key.pem" \
			-CAcreateserial -days 1 -out "$C/$1.pem" \
			-extfile <(printf '%s\n' "$3") 2>/dev/null
}

# tq ARGS...: qosctl with the right CA, certificate and key.
tq()
{
	"$QOSCTL" --etcd "$URL" --etcd-ca "$C/ca.pem" --etcd-cert "$C/client.pem" \
		--etcd-key "$C/client-key.pem" "$@"
}

# dump: every key under /qosctl and the revision, read by etcdctl over TLS.
dump()
{
	etcdctl --endpoints "$URL" --cacert "$C/ca.pem" --cert "$C/client.pem" \
		--key "$C/client-key.pem" get --prefix /qosctl -w json |
		jq -c '[.header.revision, [.kvs[]? | [.key, .value]]]'
}

tls_works()
{
	local out

	out=$(tq domain load "$TMP/domain.json" 2>&1)
	check_err $? "domain load over TLS: $out"
	out=$(tq domain reserve add src 10.1.0.0/24 dst 10.2.0.0/24 rate 1mbit id v4 2>&1)
	check_err $? "reserve add v4 over TLS: $out"
	out=$(tq domain reserve add src 2001:db8:1::/64 dst 2001:db8:2::/64 rate 1mbit id v6 2>&1)
	check_err $? "reserve add v6 over TLS: $out"
	out=$(tq domain reserve list -j 2>&1)
	[ "$(jq -c '[.. | .id? // empty] | unique' <<<"$out" 2>/dev/null)" = '["v4","v6"]' ]
	check_err $? "reserve list -j over TLS: $out"
	log_test "TLS with a client certificate: load, reserve add v4 and v6, list -j"
}

# refused WHAT PATTERN ARGS...: qosctl ARGS exits non-zero with an error
# matching PATTERN, and etcd is as it was.
refused()
{
	local what=$1 pat=$2 before out rc

	shift 2
	before=$(dump)
	out=$("$QOSCTL" "$@" 2>&1)
	rc=$?
	[ $rc -ne 0 ]
	check_err $? "$what: exit $rc: $out"
	grep -Eq -- "$pat" <<<"$out"
	check_err $? "$what: the error does not match '$pat': $out"
	[ "$(dump)" = "$before" ]
	check_err $? "$what: etcd changed: $before -> $(dump)"
	echo "    $what: $out"
}

no_client_cert()
{
	refused "no client certificate" "etcd $URL: .*no client certificate was given" \
		--etcd "$URL" --etcd-ca "$C/ca.pem" \
		domain reserve add src 10.1.0.0/24 dst 10.2.0.0/24 rate 1mbit id nocert
	log_test "without a client certificate: refused by etcd, an error naming the endpoint"
}

wrong_ca()
{
	refused "a CA that did not sign etcd's certificate" "etcd $URL: .*certificate" \
		--etcd "$URL" --etcd-ca "$C/other.pem" --etcd-cert "$C/client.pem" \
		--etcd-key "$C/client-key.pem" \
		domain reserve add src 10.1.0.0/24 dst 10.2.0.0/24 rate 1mbit id badca
	log_test "a CA that did not sign the server: a certificate error"
}

key_readable()
{
	local out

	cp "$C/client-key.pem" "$C/open-key.pem"
	chmod 0644 "$C/open-key.pem"
	refused "a key others may read" \
		"--etcd-key $C/open-key.pem: mode 0644: .*refused \(chmod 600" \
		--etcd "$URL" --etcd-ca "$C/ca.pem" --etcd-cert "$C/client.pem" \
		--etcd-key "$C/open-key.pem" \
		domain reserve add src 10.1.0.0/24 dst 10.2.0.0/24 rate 1mbit id openkey
	chmod 0640 "$C/open-key.pem"
	out=$("$QOSCTL" --etcd "$URL" --etcd-ca "$C/ca.pem" --etcd-cert "$C/client.pem" \
		--etcd-key "$C/open-key.pem" domain reserve list -j 2>&1)
	check_err $? "a key of mode 0640 (group read) refused: $out"
	log_test "a client key of mode 0644 refused before any request, 0640 taken"
}

env_https()
{
	local out

	out=$(QOSCTL_ETCD=$URL "$QOSCTL" --etcd-ca "$C/ca.pem" --etcd-cert "$C/client.pem" \
		--etcd-key "$C/client-key.pem" domain reserve del id v6 2>&1)
	check_err $? "reserve del with QOSCTL_ETCD=$URL: $out"
	out=$(QOSCTL_ETCD=$URL "$QOSCTL" --etcd-ca "$C/ca.pem" --etcd-cert "$C/client.pem" \
		--etcd-key "$C/client-key.pem" domain reserve list -j 2>&1)
	[ "$(jq -c '[.. | .id? // empty] | unique' <<<"$out" 2>/dev/null)" = '["v4"]' ]
	check_err $? "reserve list -j with QOSCTL_ETCD=$URL: $out"
	log_test "QOSCTL_ETCD with an https:// endpoint: del, list -j"
}

mkdir -p "$C" "$TMP/etcd" && chmod 700 "$C"
ca ca && ca other &&
	leaf server ca "subjectAltName=IP:127.0.0.1
extendedKeyUsage=serverAuth,clientAuth" &&
	leaf client ca "extendedKeyUsage=clientAuth"
check_err $? "openssl: the CA and certificates"
log_setup "a CA, a server certificate for 127.0.0.1, a client certificate"

cport=$(free_port) && pport=$(free_port)
URL=https://127.0.0.1:$cport
etcd --name m1 --data-dir "$TMP/etcd/data" \
	--listen-client-urls "$URL" --advertise-client-urls "$URL" \
	--listen-peer-urls "http://127.0.0.1:$pport" \
	--initial-advertise-peer-urls "http://127.0.0.1:$pport" \
	--initial-cluster "m1=http://127.0.0.1:$pport" \
	--cert-file "$C/server.pem" --key-file "$C/server-key.pem" \
	--trusted-ca-file "$C/ca.pem" --client-cert-auth >"$TMP/etcd/etcd.log" 2>&1 &
ETCD_PID=$!
defer etcd_stop "$ETCD_PID"
for ((i = 0; i < 100; i++)); do
	dump >/dev/null 2>&1 && break
	sleep 0.1
done
dump >/dev/null
check_err $? "etcd over TLS did not start: $(tail -3 "$TMP/etcd/etcd.log")"
log_setup "etcd on $URL with --client-cert-auth"

domain_json_one "$RN" >"$TMP/domain.json"

tests_run
exit $EXIT_STATUS
