#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
#
# The runner in lib.sh: tests_run, defer scopes, TESTS, exit codes. Each
# case runs a small suite written into $TMP in a child bash and checks its
# output and exit status. Needs neither root nor qosctl.

source "$(dirname "$(readlink -f "$0")")/lib.sh"

LIB=$(dirname "$(readlink -f "$0")")/lib.sh
tmp_setup

# suite NAME BODY: a suite script sourcing lib.sh, its tests in BODY.
suite()
{
	{
		echo "source '$LIB'"
		echo "$2"
		echo 'tests_run'
		echo 'exit $EXIT_STATUS'
	} >"$TMP/$1.sh"
}

# run NAME [VAR=value...]: run suite NAME, its output in OUT, status in RC.
run()
{
	local name=$1

	shift
	OUT=$(env "$@" bash "$TMP/$name.sh" 2>&1)
	RC=$?
}

suite order '
ALL_TESTS="t_one t_two"
t_one()
{
	defer echo "one: cleanup a"
	defer echo "one: cleanup b"
	echo "one: body"
	log_test
}
t_two()
{
	echo "two: body"
	log_test "two named"
}
defer echo "script: cleanup"
'

test_scope_order()
{
	local want

	run order
	# Defers print nothing: defer_scope_pop discards their output.
	want="one: body
TEST: t_one                                                                  [ OK ]
two: body
TEST: two named                                                              [ OK ]"
	[ "$RC" -eq 0 ]
	check_err $? "exit $RC, not 0"
	[ "$OUT" = "$want" ]
	check_err $? "output: $OUT"
	log_test "two passing tests: exit 0, TEST lines under the test names"
}

suite scope '
ALL_TESTS="t_a t_b"
t_a()
{
	defer "echo a1 >>$TMP/log"
	defer "echo a2 >>$TMP/log"
	echo a-body >>$TMP/log
}
t_b()
{
	defer "echo b1 >>$TMP/log"
	echo b-body >>$TMP/log
}
defer "echo script >>$TMP/log"
'

test_scope_cleanup()
{
	rm -f "$TMP/log"
	TMP=$TMP run scope
	[ "$RC" -eq 0 ]
	check_err $? "exit $RC"
	[ "$(tr '\n' ' ' <"$TMP/log")" = "a-body a2 a1 b-body b1 script " ]
	check_err $? "cleanup order: $(tr '\n' ' ' <"$TMP/log")"
	log_test "each test's defers run when it ends, last first; the script's at exit"
}

test_one_by_name()
{
	rm -f "$TMP/log"
	TMP=$TMP run scope TESTS=t_b
	[ "$RC" -eq 0 ] && [ "$(tr '\n' ' ' <"$TMP/log")" = "b-body b1 script " ]
	check_err $? "exit $RC, ran: $(tr '\n' ' ' <"$TMP/log")"
	log_test "TESTS=t_b runs t_b alone"
}

test_unknown_name()
{
	rm -f "$TMP/log"
	TMP=$TMP run scope TESTS="t_b t_nope"
	[ "$RC" -eq 1 ]
	check_err $? "exit $RC, not 1"
	grep -q "unknown test 't_nope'" <<<"$OUT"
	check_err $? "no message naming t_nope: $OUT"
	[ "$(cat "$TMP/log" 2>/dev/null)" = script ]
	check_err $? "tests ran before the check: $(tr '\n' ' ' <"$TMP/log")"
	# A helper function of the suite is not a test.
	TMP=$TMP run scope TESTS=defer
	[ "$RC" -eq 1 ]
	check_err $? "TESTS=defer: exit $RC, not 1"
	log_test "TESTS with an unknown name: exit 1 before any test runs"
}

suite failing '
ALL_TESTS="t_fail t_after t_unlogged"
t_fail()
{
	defer "echo fail-cleanup >>$TMP/log"
	false
	check_err $? "false failed"
	log_test
}
t_after()
{
	[ "$RET" -eq 0 ]
	check_err $? "RET not cleared"
	log_test
}
t_unlogged()
{
	check_err 1 "never logged"
}
'

test_failing()
{
	rm -f "$TMP/log"
	TMP=$TMP run failing
	[ "$RC" -eq 1 ]
	check_err $? "exit $RC, not 1"
	grep -q "^TEST: t_fail .*\[FAIL\]" <<<"$OUT" && grep -q "false failed" <<<"$OUT"
	check_err $? "no FAIL line for t_fail: $OUT"
	grep -q "^TEST: t_after .*\[ OK \]" <<<"$OUT"
	check_err $? "the next test did not start clean: $OUT"
	grep -q "^TEST: t_unlogged .*\[FAIL\]" <<<"$OUT"
	check_err $? "an unreported check was lost: $OUT"
	[ "$(cat "$TMP/log")" = fail-cleanup ]
	check_err $? "the failing test's cleanup did not run"
	log_test "a failing test: exit 1, its cleanup runs, the next starts clean"
}

suite skipping '
ALL_TESTS="t_skip"
t_skip()
{
	echo "SKIP: not here"
	exit $ksft_skip
}
defer "echo script >>$TMP/log"
'

test_skip()
{
	rm -f "$TMP/log"
	TMP=$TMP run skipping
	[ "$RC" -eq 4 ] && [ "$(cat "$TMP/log")" = script ]
	check_err $? "exit $RC, not 4, or no cleanup"
	log_test "a suite that skips exits 4 and still cleans up"
}

ALL_TESTS="test_scope_order test_scope_cleanup test_one_by_name test_unknown_name
	   test_failing test_skip"
tests_run
exit $EXIT_STATUS
