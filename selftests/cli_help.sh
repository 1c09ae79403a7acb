#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
#
# The CLI as a new user meets it: the usage and per-command help, the
# suggestions for mistyped words, -j on every read command, the profile
# directories of `qosctl list`, the bash and zsh completion, the man page
# against `qosctl help`, and a `stats` that fits in 100 columns.
#
#   $NS:  $IF (diffserv4) ==== veth ==== $IF2 (pip-20pct)

source "$(dirname "$(readlink -f "$0")")/lib.sh"

require_root
require_cmd jq
require_qosctl

TOP=$(dirname "$(readlink -f "$0")")/..
MAN=$TOP/Documentation/qosctl.8.rst
BASH_COMPL=$TOP/completion/qosctl.bash
ZSH_COMPL=$TOP/completion/_qosctl

tmp_setup
setup_ns NS || exit $ksft_fail
IF=$(ifname_unique clh) IF2=$(ifname_unique cli)
defer_state "$NS"
ip -n "$NS" link add "$IF" type veth peer name "$IF2" || exit $ksft_fail
ip -n "$NS" link set "$IF" up && ip -n "$NS" link set "$IF2" up
qosctl_ns "$NS" apply diffserv4 dev "$IF" rate 100mbit || exit $ksft_fail
qosctl_ns "$NS" apply pip-20pct dev "$IF2" rate 100mbit || exit $ksft_fail

# run ARGS...: qosctl in $NS; stdout in $TMP/out, stderr in $TMP/err, $rc.
run()
{
	qosctl_ns "$NS" "$@" >"$TMP/out" 2>"$TMP/err"
	rc=$?
}

# The command names of the usage, "rule add" or "reserve add" for a subcommand.
help_cmds()
{
	local c s

	for c in $("$QOSCTL" help | awk '/^Commands:/ { on = 1; next } /^$/ { on = 0 }
					 on { print $1 }'); do
		s=$("$QOSCTL" help "$c" | awk '/^Commands:/ { on = 1; next } /^$/ { on = 0 }
					      on { print $1 }')
		if [ -n "$s" ]; then
			printf "$c %s\n" $s
		else
			echo "$c"
		fi
	done
}

# The forms of a command's Usage, one a line, without "qosctl ".
help_forms()
{
	"$QOSCTL" help $1 | awk '
		/^(Usage:|      ) qosctl / {
			if (f != "") print f
			f = $0
			sub(/^(Usage:|      ) qosctl /, "", f)
			next
		}
		/^ +[^ ]/ && f != "" { g = $0; sub(/^ +/, "", g); f = f " " g; next }
		{ if (f != "") print f; f = "" }
		END { if (f != "") print f }'
}

# The options in the Options of `qosctl help [CMD]`: "-j --json" or
# "--dry-run", one a line; the long names only with --long.
help_opts()
{
	"$QOSCTL" help $1 | awk '/^Options:/ { on = 1; next } /^$/ { on = 0 } on' |
		grep -o -- '^ *\(-., \)\?--[a-z-]*' | tr -d ',' | sed 's/^ *//' |
		if [ "${2:-}" = --long ]; then grep -o -- '--[a-z-]*'; else cat; fi
}

# The keys and positional arguments in the Arguments of `qosctl help CMD`.
help_words()
{
	"$QOSCTL" help $1 | awk '/^Arguments:/ { on = 1; next } /^$/ { on = 0 } on { print $1 }'
}

# man_section NAME: the lines of a section of the man page.
man_section()
{
	awk -v want="$1" '{ l[NR] = $0 }
		END {
			for (i = 1; i <= NR; i++) {
				if (l[i + 1] ~ /^=+$/ && l[i] !~ /^=*$/) {
					sec = l[i]
					i++
					continue
				}
				if (sec == want)
					print l[i]
			}
		}' "$MAN"
}

# reST markup off: the words as a reader sees them.
man_plain()
{
	sed -e 's/\*\*//g' -e 's/\*//g' -e 's/\\ //g' -e 's/  */ /g' -e 's/ *$//'
}

# man_entry CMD: the term and body of CMD in COMMANDS.
man_entry()
{
	man_section COMMANDS | awk -v want="$1" '
		/^\*\*/ {
			t = $0
			sub(/^\*\*/, "", t)
			sub(/\*\*.*/, "", t)
			split(t, w, " ")
			name = w[1] == "rule" || w[1] == "reserve" || w[1] == "probe" || w[1] == "domain" ? w[1] " " w[2] : w[1]
			on = name == want
		}
		on'
}

test_usage()
{
	local c out

	run
	[ $rc -eq 1 ] && [ ! -s "$TMP/out" ] && grep -q '^Usage: qosctl ' "$TMP/err"
	check_err $? "bare qosctl: exit $rc, stdout $(head -c 100 "$TMP/out")"
	cp "$TMP/err" "$TMP/bare"
	for c in help --help -h; do
		run $c
		[ $rc -eq 0 ] && [ ! -s "$TMP/err" ] && cmp -s "$TMP/out" "$TMP/bare"
		check_err $? "qosctl $c: exit $rc, not the usage of bare qosctl on stdout"
	done
	out=$(help_cmds | tr '\n' ,)
	[ "$out" = "apply,confirm,remove,show,stats,rule add,rule del,rule list,reserve add,reserve del,reserve list,reserve apply,domain load,domain reserve,domain status,validate,list,exporter,agent,balance,probe send,probe reflect,help," ]
	check_err $? "usage lists: $out"
	log_test "usage: bare qosctl on stderr (1), help / --help / -h on stdout (0)"
}

test_cmd_help()
{
	local c h w

	while read -r c; do
		h=$("$QOSCTL" help $c)
		[ "$(head -1 <<<"$h" | cut -c1-$((14 + ${#c})))" = "Usage: qosctl $c" ]
		check_err $? "help $c: $(head -1 <<<"$h")"
		[ "$(qosctl_ns "$NS" $c --help)" = "$h" ] && [ "$(qosctl_ns "$NS" $c -h)" = "$h" ]
		check_err $? "'$c --help' or '$c -h' is not 'help $c'"
		# Every key of the synopsis ("dev IFACE", not "--watch SECONDS")
		# is described under Arguments.
		for w in $(help_forms "$c" | sed "s/^$c //" |
			   grep -oP '(?<![-\w])[a-z][a-z-]*(?= [A-Z])' | sort -u); do
			help_words "$c" | grep -qx -- "$w"
			check_err $? "help $c: '$w' is not described"
		done
	done < <(help_cmds)
	run help bogus
	[ $rc -eq 1 ] && [ ! -s "$TMP/out" ] && [ "$(wc -l <"$TMP/err")" -eq 1 ]
	check_err $? "help bogus: exit $rc"
	log_test "help CMD, CMD --help, CMD -h: syntax, arguments, options"
}

# One mistyped invocation per line, then "=>" and what stderr must say.
test_suggestions()
{
	local line args want

	mkdir -p "$TMP/mine"
	cp "$TOP/tc-profiles/pip-5pct" "$TMP/mine/campus-edge"
	while IFS= read -r line; do
		args=${line%% => *}
		want=${line#* => }
		eval "set -- $args"
		QOSCTL_PROFILE_DIR=$TMP/mine run "$@"
		[ $rc -eq 1 ] && [ "$(wc -l <"$TMP/err")" -eq 1 ] &&
			[ "$(cat "$TMP/err")" = "qosctl: $want" ]
		check_err $? "qosctl $args: $(cat "$TMP/err")"
	done <<EOF
aply pip-20pct dev $IF rate 1gbit => unknown command 'aply' (did you mean 'apply'?)
lsit => unknown command 'lsit' (did you mean 'list'?)
bogus => unknown command 'bogus' (try 'qosctl help')
apply pip-20pct dev $IF rat 1gbit => apply: unexpected argument 'rat' (did you mean 'rate'?)
apply pip-20pc dev $IF rate 1gbit => apply: profile 'pip-20pc': no such profile (did you mean 'pip-20pct'?)
apply pip-2pct dev $IF rate 1gbit => apply: profile 'pip-2pct': no such profile (did you mean 'pip-20pct' or 'pip-5pct'?)
validate campus-egde => validate: profile 'campus-egde': no such profile (did you mean 'campus-edge'?)
validate nothing-like-it => validate: profile 'nothing-like-it': no such profile (see 'qosctl list')
apply pip-20pct dev $IF rate 1gbit --dryrun => unknown option '--dryrun' (did you mean '--dry-run'?)
stats dev $IF2 --per-famliy => unknown option '--per-famliy' (did you mean '--per-family'?)
stast dev $IF2 => unknown command 'stast' (did you mean 'stats'?)
rule ad dev $IF2 class be => rule: unknown command 'ad' (did you mean 'add'?)
rule add dev $IF2 clas be => rule add: unexpected argument 'clas' (did you mean 'class'?)
rule add dev $IF2 set-dcsp ef class be => rule add: unexpected argument 'set-dcsp' (did you mean 'set-dscp'?)
rule add dev $IF2 prio 5 class be => rule add: unexpected argument 'prio' (did you mean 'priority'?)
rule del dev $IF2 flowlable 5 => rule del: unexpected argument 'flowlable' (did you mean 'flowlabel'?)
rule del dev $IF2 class be => rule del: unexpected argument 'class' (try 'qosctl help rule del')
help rul => help: unknown command 'rul' (did you mean 'rule'?)
remove dev $IF2 --dry-run => remove: does not take --dry-run (see 'qosctl help remove')
EOF
	[ "$(qosctl_ns "$NS" show dev "$IF2" -j | jq -r .profile)" = pip-20pct ]
	check_err $? "remove --dry-run removed the profile"
	log_test "suggestions for commands, keys, options, profiles, rule keys"
}

# Each read command with -j: valid JSON with the fields tests and
# scripts use.
test_json()
{
	local f

	qosctl_ns "$NS" list -j | jq -e '.directories[0].path and .profiles[0].name and
		(.profiles | map(.name) | index("pip-20pct"))' >/dev/null
	check_err $? "list -j"
	qosctl_ns "$NS" show dev "$IF2" -j | jq -e '.profile == "pip-20pct" and
		(.classes | map(.name) == ["pip", "be", "lbe"])' >/dev/null
	check_err $? "show -j"
	qosctl_ns "$NS" rule add dev "$IF2" name t1 src 2001:db8::/32 class lbe
	qosctl_ns "$NS" rule list dev "$IF2" -j | jq -e 'map(.name) | index("t1")' >/dev/null
	check_err $? "rule list -j"
	qosctl_ns "$NS" rule del dev "$IF2" name t1
	qosctl_ns "$NS" validate pip-20pct -j | jq -e '.profile == "pip-20pct" and
		.scheduler == "htb" and (.classes | length) == 3' >/dev/null
	check_err $? "validate -j"
	qosctl_ns "$NS" validate pip-20pct rate 1gbit -j | jq -e '.rate_bps == 1000000000 and
		(.classes[] | select(.name == "pip") | .rate_bps) == 200000000' >/dev/null
	check_err $? "validate rate -j"
	# stats -j is the same whatever the text view; selftests read these.
	for f in "" --wide --per-family; do
		qosctl_ns "$NS" stats dev "$IF2" -j $f | jq -c '[paths]' >"$TMP/paths$f"
		cmp -s "$TMP/paths" "$TMP/paths$f"
		check_err $? "stats -j $f has other fields than stats -j"
	done
	qosctl_ns "$NS" stats dev "$IF2" -j | jq -e '.dev and .profile and .rate_bps and
		.unparsed.ingress.non_ip.packets >= 0 and
		(.classes[] | select(.name == "be") | .ingress.ipv6.packets >= 0 and
		 .egress.ipv4.bytes >= 0 and .qdisc.drops >= 0 and .qdisc.backlog_bytes >= 0) and
		(.classes[] | select(.name == "pip") | .police.green.ipv4.packets >= 0)' >/dev/null
	check_err $? "stats -j lost a field"
	qosctl_ns "$NS" stats dev "$IF2" -j -s |
		jq -e '.classes[0].egress.ipv6.verdicts.drop.packets >= 0' >/dev/null
	check_err $? "stats -j -s: no verdicts"
	log_test "-j: list, show, stats, rule list, validate"
}

test_list_dirs()
{
	local a=$TMP/a b=$TMP/b none=$TMP/none j d

	mkdir -p "$a" "$b"
	sed 's/^description = .*/description = our own PIP/' "$TOP/tc-profiles/pip-20pct" >"$a/pip-20pct"
	cp "$TOP/tc-profiles/pip-5pct" "$b/campus"
	j=$(QOSCTL_PROFILE_DIR=$a:$none:$b "$QOSCTL" list -j)
	jq -e --arg a "$a" --arg n "$none" --arg b "$b" '.directories[0:3] == [
		{ path: $a, origin: "QOSCTL_PROFILE_DIR", exists: true },
		{ path: $n, origin: "QOSCTL_PROFILE_DIR", exists: false,
		  error: "No such file or directory" },
		{ path: $b, origin: "QOSCTL_PROFILE_DIR", exists: true } ] and
		(.directories[3] | .path == "/etc/qosctl/profiles" and .origin == "local") and
		(.directories[4:] | length > 0 and all(.origin == "built-in"))' <<<"$j" >/dev/null
	check_err $? "directories: $(jq -c .directories <<<"$j")"
	jq -e --arg a "$a" --arg b "$b" '
		(.profiles | map(select(.name == "pip-20pct")) | .[0].path == "\($a)/pip-20pct" and
		 .[0].description == "our own PIP" and .[0].hidden_by == null and
		 (.[1:] | length > 0 and all(.hidden_by == "\($a)/pip-20pct")))
		and (.profiles[] | select(.name == "campus") | .origin == "QOSCTL_PROFILE_DIR")' \
		<<<"$j" >/dev/null
	check_err $? "profiles: $(jq -c '.profiles[] | select(.name == "pip-20pct" or .name == "campus")' <<<"$j")"
	# Every file of every directory that exists is listed, from that directory.
	for d in $(jq -r '.directories[] | select(.exists) | .path' <<<"$j"); do
		diff <(ls "$d" | sort) <(jq -r --arg d "$d" '.profiles[] |
			select(.path | startswith("\($d)/")) | .name' <<<"$j" | sort) >/dev/null
		check_err $? "$d: files and listed profiles differ"
	done
	QOSCTL_PROFILE_DIR=$a:$none:$b "$QOSCTL" list >"$TMP/list"
	grep -qx "$a (QOSCTL_PROFILE_DIR)" "$TMP/list" &&
		grep -qx "$none (QOSCTL_PROFILE_DIR): No such file or directory" "$TMP/list" &&
		grep -qx "  campus  *6NET: .*" "$TMP/list" &&
		grep -qx "  pip-20pct  *hidden by $a/pip-20pct" "$TMP/list"
	check_err $? "list: $(cat "$TMP/list")"
	[ "$(QOSCTL_PROFILE_DIR=$a "$QOSCTL" validate pip-20pct -j | jq -r .path)" = "$a/pip-20pct" ]
	check_err $? "the profile list says is used is not the one validate reads"
	log_test "list: every directory searched, origins, hidden profiles"
}

# complete WORDS...: what the bash completion offers after WORDS, sorted.
complete_bash()
{
	in_ns "$NS" bash -c 'source "$1"; shift
		COMP_WORDS=("$@"); COMP_CWORD=$(($# - 1)); _qosctl
		printf "%s\n" "${COMPREPLY[@]}"' _ "$BASH_COMPL" "$QOSCTL" "$@" | sed '/^$/d' | sort
}

# expect WANT WORDS...: the bash completion of WORDS is WANT (words).
expect()
{
	local want got

	want=$(printf "%s\n" $1 | sed '/^$/d' | sort)
	shift
	got=$(complete_bash "$@")
	[ "$got" = "$want" ]
	check_err $? "complete '$*': got '$(echo $got)', want '$(echo $want)'"
}

test_complete_bash()
{
	local cmds profs ifs classes opts

	cmds=$("$QOSCTL" help | awk '/^Commands:/ { on = 1; next } /^$/ { on = 0 } on { print $1 }')
	profs=$(qosctl_ns "$NS" list -j | jq -r '.profiles[] | select(.hidden_by == null) | .name')
	ifs=$(ip -n "$NS" -o link show | awk -F': ' '{ sub(/@.*/, "", $2); print $2 }')
	classes=$(qosctl_ns "$NS" show dev "$IF" -j | jq -r '.classes[].name')
	opts="$(help_opts stats --long) --verbose --help --version"
	expect "$cmds" ""
	expect "apply" ap
	expect "$profs" apply ""
	expect "pip-20pct pip-5pct" apply pip-
	expect "dev ingress-rate linklayer mpu overhead queues rate tcx-place" apply pip-20pct ""
	expect "$ifs" apply pip-20pct dev ""
	expect "ingress-rate linklayer mpu overhead queues rate tcx-place" apply pip-20pct dev "$IF" ""
	expect "" apply pip-20pct --confirm ""
	expect "add del list" rule ""
	expect "$classes" rule add dev "$IF" class ""
	expect "$(qosctl_ns "$NS" show dev "$IF2" -j | jq -r '.classes[].name')" \
		rule add dev "$IF2" src 2001:db8::/32 class ""
	expect "id name src dst flowlabel proto sport dport" rule del dev "$IF2" ""
	expect "$opts" stats dev "$IF2" --
	expect "--wide --watch" stats dev "$IF2" --w
	expect "$cmds" help ""
	expect "add del list" help rule ""
	log_test "bash completion: commands, profiles, interfaces, classes, options"
}

# The zsh completion with _describe and _files stubbed: no shell on a
# terminal needed.
test_complete_zsh()
{
	local got

	if ! command -v zsh >/dev/null; then
		log_test_skip "zsh completion" "zsh is not installed"
		return
	fi
	got=$(in_ns "$NS" zsh -c '
		_describe() { print -rl -- "${(@P)${@[-1]}}" }
		_files() { print FILES }
		words=("$1" rule add dev "$2" class ""); CURRENT=7; PREFIX=
		source "$3"
		words=("$1" apply pip-2); CURRENT=3; PREFIX=pip-2
		source "$3"
		words=("$1" apply ./x/y); CURRENT=3; PREFIX=./x/y
		source "$3"' _ "$QOSCTL" "$IF2" "$ZSH_COMPL")
	[ "$got" = "pip
be
lbe
pip-20pct:GRNET: Premium IP 20% strict priority, BE, LBE 1% floor
FILES" ]
	check_err $? "zsh: $got"
	log_test "zsh completion: classes, profiles with descriptions, paths"
}

# Commands, forms and options of `qosctl help` against the man page, both
# ways.
test_man()
{
	local c o w forms entry

	diff <(help_cmds | sort) <(man_section COMMANDS | grep '^\*\*' |
		sed -e 's/^\*\*\([^*]*\)\*\*.*/\1/' |
		awk '{ print $1 == "rule" || $1 == "reserve" || $1 == "probe" || $1 == "domain" ? $1 " " $2 : $1 }' | sort) >"$TMP/diff"
	check_err $? "commands, help < > man: $(cat "$TMP/diff")"
	forms=$(while read -r c; do help_forms "$c"; done < <(help_cmds))
	diff <(sort <<<"$forms") <(man_section SYNOPSIS | sed -n 's/^| //p' | man_plain |
		sed -n 's/^qosctl \([a-z]\)/\1/p' | sort) >"$TMP/diff"
	check_err $? "synopsis, help < > man: $(cat "$TMP/diff")"
	while read -r c; do
		grep -qxF "$(man_entry "$c" | head -1 | man_plain)" <<<"$forms"
		check_err $? "man COMMANDS '$(man_entry "$c" | head -1 | man_plain)' is no form of help $c"
	done < <(help_cmds)
	diff <(help_opts "" --long | sort) <(man_section OPTIONS | grep '^\*\*-' |
		grep -o -- '--[a-z-]*' | sort) >"$TMP/diff"
	check_err $? "options, help < > man: $(cat "$TMP/diff")"
	while read -r c; do
		entry=$(man_entry "$c")
		while read -r o; do
			[ -n "$o" ] || continue
			man_plain <<<"$entry" | grep -qw -e "${o% *}" -e "${o#* }"
			check_err $? "man: $c does not say $o"
		done < <(help_opts "$c")
		# The body may name another command's option (confirm: "made
		# with --confirm"); the syntax may not.
		for o in $(head -1 <<<"$entry" | grep -o -- '\*\*--[a-z-]*\*\*' | tr -d '*'); do
			help_opts "$c" --long | grep -qx -- "$o" ||
				[[ " --verbose --help --version " == *" $o "* ]]
			check_err $? "man: $c names $o, help $c does not"
		done
		for w in $(help_words "$c"); do
			man_plain <<<"$entry" | grep -qw -- "$w"
			check_err $? "man: $c does not name $w"
		done
	done < <(help_cmds)
	if command -v rst2man >/dev/null; then
		rst2man --exit-status=warning "$MAN" /dev/null 2>"$TMP/rst"
		check_err $? "rst2man: $(cat "$TMP/rst")"
	fi
	log_test "man page: every command, form and option of help, and no other"
}

# Every line within 100 columns by default, -s and --per-family; --wide is
# the wide one.
test_stats_width()
{
	local dev v long c

	in_ns "$NS" ping -6 -c 3 -i 0.2 -W 1 -I "$IF" ff02::1 >/dev/null 2>&1
	for dev in "$IF" "$IF2"; do
		for v in "" -s --per-family "-s --per-family"; do
			qosctl_ns "$NS" stats dev "$dev" $v >"$TMP/stats" || check_err 1 "stats $v"
			long=$(awk 'length > 100' "$TMP/stats")
			[ -z "$long" ]
			check_err $? "stats dev $dev $v: $(head -1 <<<"$long")"
			for c in $(qosctl_ns "$NS" show dev "$dev" -j | jq -r '.classes[].name'); do
				grep -q "^$c  *ingress" "$TMP/stats"
				check_err $? "stats dev $dev $v: no row of class $c"
			done
		done
		qosctl_ns "$NS" stats dev "$dev" --watch 1 --count 1 >"$TMP/stats"
		[ -s "$TMP/stats" ] && [ -z "$(awk 'length > 100' "$TMP/stats")" ]
		check_err $? "stats dev $dev --watch: $(awk 'length > 100' "$TMP/stats" | head -1)"
		qosctl_ns "$NS" stats dev "$dev" --wide | awk 'length > 100 { n++ } END { exit !n }'
		check_err $? "stats --wide is not wide"
	done
	log_test "stats within 100 columns (diffserv4, pip-20pct; -s, --per-family, --watch)"
}

ALL_TESTS="test_usage test_cmd_help test_suggestions test_json test_list_dirs
	   test_complete_bash test_complete_zsh test_man test_stats_width"
tests_run

exit $EXIT_STATUS
