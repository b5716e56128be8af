#!/usr/bin/env bash
# Usage: deploy/local/with-servers.sh CMD [ARGS...]
#
# Starts the local test servers (servers.sh start), runs CMD with the
# RANKSTREAM_TEST_* variables in its environment, stops the servers whatever
# happens (failure, Ctrl-C, TERM) and exits with CMD's status.
#
# Each run gets servers of its own in a fresh state folder, so that two runs
# at once (two people's `make test` on one machine) never stop each other's
# servers. Set RANKSTREAM_SERVERS_DIR to use (and afterwards stop) the
# servers of that folder instead.
set -euo pipefail

servers=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)/servers.sh
(($# > 0)) || {
	echo "usage: $0 CMD [ARGS...]" >&2
	exit 2
}

private=0
if [[ -z ${RANKSTREAM_SERVERS_DIR:-} ]]; then
	RANKSTREAM_SERVERS_DIR=$(mktemp -d /tmp/rankstream-servers.XXXXXX)
	private=1
fi
export RANKSTREAM_SERVERS_DIR

# shellcheck disable=SC2317 # run by the EXIT trap
cleanup() {
	"$servers" stop || echo "with-servers: stopping the servers failed" >&2
	if ((private)); then
		rm -rf "$RANKSTREAM_SERVERS_DIR" "$RANKSTREAM_SERVERS_DIR.lock"
	fi
}
trap cleanup EXIT
"$servers" start >/dev/null
eval "$("$servers" env)"

# CMD runs in the background so that a TERM or INT sent to this script alone
# is passed on to it, and the EXIT trap still stops the servers afterwards.
set +e
"$@" &
child=$!
trap 'kill -TERM "$child" 2>/dev/null' INT TERM
while kill -0 "$child" 2>/dev/null; do
	wait "$child"
done
wait "$child"
exit $?
