#!/bin/bash
source ./lib.sh
QOSCTL=/tmp/outA/qosctl
topo_h1_r_h2 || exit 1
qosctl_ns $R apply pip-20pct dev $R_IF2 rate 100mbit; echo apply rc=$?
qosctl_ns $R show dev $R_IF2
qosctl_ns $R show dev $R_IF2 -j | jq -c '.classes[] | {name,leaf}'
in_ns $H2 timeout 5 tcpdump -c 4 -vv -n -i $H2_IF icmp6 or icmp 2>&1 &
sleep 1
in_ns $H1 ping -6 -c 1 -Q 0xb8 $H2_V6
in_ns $H1 ping -c 1 -Q 0xb8 $H2_V4
wait
qosctl_ns $R stats dev $R_IF2 
qosctl_ns $R stats dev $R_IF2 -j | jq .
tc -n $R -j qdisc show dev $R_IF2 | jq -c .
tc -n $R -j filter show dev $R_IF2 ingress | jq -c .
