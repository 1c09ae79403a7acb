# SPDX-License-Identifier: GPL-2.0-only
#
# bash completion for qosctl(8). The candidates come from qosctl itself,
# `qosctl __complete WORD... CURRENT`, which reads them from its command
# table (commands, keys, options), the profile directories, the
# interfaces of the network namespace and the profile applied on the
# "dev" given (classes, for rule add ... class). Nothing is listed here
# twice.

_qosctl()
{
	local cur words cword line prog
	local -a cands=()

	if declare -F _get_comp_words_by_ref >/dev/null; then
		_get_comp_words_by_ref -n =: cur words cword
	else
		cur=${COMP_WORDS[COMP_CWORD]}
		words=("${COMP_WORDS[@]}")
		cword=$COMP_CWORD
	fi
	COMPREPLY=()
	# A word with a slash is a profile given by its path.
	if [[ $cur == */* ]]; then
		compopt -o filenames 2>/dev/null
		mapfile -t COMPREPLY < <(compgen -f -- "$cur")
		return 0
	fi
	# qosctl lives in sbin, which a user's PATH may lack.
	prog=${words[0]}
	type -P "$prog" >/dev/null || prog=/usr/sbin/qosctl
	while IFS= read -r line; do
		cands+=("${line%%$'\t'*}")
	done < <("$prog" __complete "${words[@]:1:cword}" 2>/dev/null)
	COMPREPLY=("${cands[@]}")
	return 0
}

complete -F _qosctl qosctl
