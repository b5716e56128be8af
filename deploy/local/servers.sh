#!/usr/bin/env bash
# Real servers for the test suite, on 127.0.0.1 only, with free ports and a
# temporary data folder:
#   - Apache Kafka 4.4.0 (KRaft, one combined broker+controller) from Maven Central jars
#   - Debian's redis-server
#   - Debian's clickhouse-server (18.16)
#
# Usage: deploy/local/servers.sh install|start|stop|env
#   install  install what is missing (apt packages, Kafka jars into a cache); idempotent
#   start    install, then start the three servers and wait until they answer;
#            reuses servers that are already running; writes $STATE/env
#   stop     stop what start started and remove $STATE; safe to call twice
#   env      print $STATE/env (lines `export RANKSTREAM_TEST_...=127.0.0.1:PORT`)
#
# Environment:
#   RANKSTREAM_SERVERS_DIR      state folder (default /tmp/rankstream-servers)
#   RANKSTREAM_SERVERS_TIMEOUT  seconds to wait for each server to answer (default 60)
#   RANKSTREAM_KAFKA_HEAP       the broker's heap flags (default -Xms256m -Xmx1G)
#   XDG_CACHE_HOME              the Kafka jars go to ${XDG_CACHE_HOME:-$HOME/.cache}/rankstream/
#
# Servers started here run detached (setsid) and outlive this script; only
# `stop` ends them. deploy/local/with-servers.sh wraps a command in start/stop.
set -euo pipefail

export PATH="$PATH:/usr/local/sbin:/usr/sbin:/sbin" # clickhouse-server lives in /usr/sbin
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
STATE=${RANKSTREAM_SERVERS_DIR:-/tmp/rankstream-servers}
KAFKA_VERSION=4.4.0
KAFKA_POM=$ROOT/deploy/local/kafka/pom.xml
KAFKA_CACHE=${XDG_CACHE_HOME:-${HOME:-/root}/.cache}/rankstream/kafka-$KAFKA_VERSION
KAFKA_LIBS=$KAFKA_CACHE/libs
KAFKA_HEAP=${RANKSTREAM_KAFKA_HEAP:--Xms256m -Xmx1G}
START_TIMEOUT=${RANKSTREAM_SERVERS_TIMEOUT:-60} # seconds per server
MARKER=.rankstream-servers                      # only folders holding it are ever removed
SERVERS=(kafka redis redis-c1 redis-c2 redis-c3 clickhouse) # redis-cN: a 3-master Redis Cluster

log() { printf 'servers: %s\n' "$*" >&2; }
die() {
	log "ERROR: $*"
	exit 1
}

# Phase timing: `phase NAME` starts a phase, `phase_done` prints how long it took.
PHASE_NAME='' PHASE_START=''
phase() { PHASE_NAME=$1 PHASE_START=$EPOCHREALTIME; }
phase_done() {
	local ms=$(((${EPOCHREALTIME/./} - ${PHASE_START/./}) / 1000))
	log "$(printf '%-22s %d.%03ds' "$PHASE_NAME" $((ms / 1000)) $((ms % 1000)))"
}

# One start/stop/install at a time per state folder (the lock lives beside it,
# so that stop can remove the folder while holding it). Servers are started
# with `9>&-`: a server that inherited fd 9 would hold the lock for its life.
lock() {
	exec 9>"$STATE.lock"
	flock 9
}

# --- install ----------------------------------------------------------------

install_apt_packages() {
	local missing=()
	command -v redis-server >/dev/null || missing+=(redis-server)
	command -v redis-cli >/dev/null || missing+=(redis-tools)
	command -v clickhouse-server >/dev/null || missing+=(clickhouse-server)
	command -v clickhouse-client >/dev/null || missing+=(clickhouse-client)
	command -v java >/dev/null || missing+=(openjdk-17-jre-headless)
	command -v mvn >/dev/null || missing+=(maven)
	command -v flock >/dev/null || missing+=(util-linux)
	command -v chromium >/dev/null || missing+=(chromium) # the pages' browser tests
	command -v promtool >/dev/null || missing+=(prometheus) # deploy/observability's checks
	((${#missing[@]} == 0)) && return 0

	log "apt-get install ${missing[*]}"
	# Package scripts must not start the system services on the default ports:
	# a policy-rc.d that answers 101 forbids every invoke-rc.d start.
	local policy=/usr/sbin/policy-rc.d own_policy=0
	if [[ ! -e $policy ]]; then
		printf '#!/bin/sh\nexit 101\n' >"$policy"
		chmod 755 "$policy"
		own_policy=1
	fi
	local rc=0
	{
		DEBIAN_FRONTEND=noninteractive apt-get update -qq &&
			DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends \
				-o Dpkg::Options::=--force-confold "${missing[@]}"
	} >"/tmp/rankstream-apt.log" 2>&1 || rc=$?
	((own_policy)) && rm -f "$policy"
	if ((rc != 0)); then
		tail -n 30 /tmp/rankstream-apt.log >&2
		die "apt-get install ${missing[*]} failed (full log: /tmp/rankstream-apt.log)"
	fi
	# Belt and braces: if a package started its service anyway, stop and disable it.
	local svc
	for svc in redis-server clickhouse-server prometheus; do
		if service "$svc" status >/dev/null 2>&1; then
			log "stopping the system service $svc that the package started"
			service "$svc" stop >/dev/null 2>&1 || true
		fi
		if command -v systemctl >/dev/null && [[ -d /run/systemd/system ]]; then
			systemctl disable --now "$svc" >/dev/null 2>&1 || true
		fi
	done
}

# Assembles the broker's classpath from Maven Central once; the pom's checksum
# in a stamp file tells whether the cached jars are complete and current.
install_kafka_jars() {
	local want have=''
	want=$(sha256sum "$KAFKA_POM" | cut -d' ' -f1)
	[[ -f $KAFKA_CACHE/libs.sha256 ]] && have=$(<"$KAFKA_CACHE/libs.sha256")
	[[ $want == "$have" && -d $KAFKA_LIBS ]] && return 0

	log "assembling Kafka $KAFKA_VERSION from Maven Central into $KAFKA_LIBS"
	mkdir -p "$KAFKA_CACHE"
	rm -rf "$KAFKA_LIBS.tmp"
	if ! mvn -q -B -f "$KAFKA_POM" dependency:copy-dependencies \
		-DincludeScope=runtime -DoutputDirectory="$KAFKA_LIBS.tmp" >"$KAFKA_CACHE/mvn.log" 2>&1; then
		tail -n 30 "$KAFKA_CACHE/mvn.log" >&2
		die "mvn dependency:copy-dependencies failed (full log: $KAFKA_CACHE/mvn.log)"
	fi
	[[ -f $KAFKA_LIBS.tmp/kafka_2.13-$KAFKA_VERSION.jar ]] || die "kafka_2.13-$KAFKA_VERSION.jar missing after mvn"
	rm -rf "$KAFKA_LIBS"
	mv "$KAFKA_LIBS.tmp" "$KAFKA_LIBS"
	echo "$want" >"$KAFKA_CACHE/libs.sha256"
}

cmd_install() {
	phase "install apt packages"
	install_apt_packages
	phase_done
	phase "install kafka jars"
	install_kafka_jars
	phase_done
}

# --- process helpers ----------------------------------------------------------

# pid_of NAME prints the pid recorded for a server if that process is still
# ours (alive and its command line names the server); fails otherwise.
pid_of() {
	local file=$STATE/$1.pid pid pattern
	[[ -f $file ]] || return 1
	pid=$(<"$file")
	[[ $pid =~ ^[0-9]+$ ]] || return 1
	case $1 in
	kafka) pattern='kafka\.Kafka' ;;
	redis | redis-c*) pattern='redis-server' ;;
	clickhouse) pattern='clickhouse' ;;
	esac
	[[ -r /proc/$pid/cmdline ]] || return 1
	tr '\0' ' ' <"/proc/$pid/cmdline" | grep -q "$pattern" || return 1
	echo "$pid"
}

# alive PID: the process exists and is not a zombie. Daemons end up as
# children of pid 1, which may reap them late; kill -0 succeeds on zombies.
alive() {
	local stat
	# (not $(<file): under set -e its failure ends the script despite ||)
	read -r stat 2>/dev/null <"/proc/$1/stat" || return 1
	stat=${stat##*) }
	[[ ${stat%% *} != Z ]]
}

# stop_servers NAME... ends every server at once with KILL and waits until they are gone: stop
# removes $STATE right after, so a clean shutdown would buy nothing (Kafka's took 10-25 s
# after a `make test`, flushing the suite's thousands of partitions).
stop_servers() {
	local name pid pids=()
	for name in "$@"; do
		if pid=$(pid_of "$name"); then
			kill -KILL "$pid" 2>/dev/null || true
			pids+=("$pid")
		fi
		rm -f "$STATE/$name.pid"
	done
	for pid in "${pids[@]}"; do
		while alive "$pid"; do
			sleep 0.05
		done
	done
}

port_in_use() {
	if command -v ss >/dev/null; then
		[[ -n $(ss -Htln "sport = :$1") ]]
	else
		(exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null
	fi
}

# pick_port sets PORT to a free TCP port on 127.0.0.1 below the ephemeral
# range (so that no outgoing connection takes it meanwhile), distinct from
# the ports already picked by this run.
PICKED=' '
pick_port() {
	local p i
	for ((i = 0; i < 200; i++)); do
		p=$((20000 + RANDOM % 12000))
		[[ $PICKED == *" $p "* ]] && continue
		port_in_use "$p" && continue
		PICKED+="$p "
		PORT=$p
		return 0
	done
	die "no free port found"
}

# wait_healthy NAME LOG CHECK... runs CHECK until it succeeds, the server dies,
# or START_TIMEOUT passes; on failure it prints the log's tail and exits.
wait_healthy() {
	local name=$1 logfile=$2
	shift 2
	local deadline=$((SECONDS + START_TIMEOUT))
	until "$@" >/dev/null 2>&1; do
		local why=''
		if ! pid_of "$name" >/dev/null; then
			why="exited"
		elif ((SECONDS >= deadline)); then
			why="did not become healthy within ${START_TIMEOUT}s"
		fi
		if [[ -n $why ]]; then
			log "$name $why; last lines of $logfile:"
			tail -n 40 "$logfile" >&2 || true
			stop_all
			die "$name could not start: it $why (all servers stopped, $STATE removed)"
		fi
		sleep 0.1
	done
}

# --- kafka --------------------------------------------------------------------

# kafka_metadata_ok HOST PORT sends a Metadata v4 request (all topics) over
# /dev/tcp and succeeds when the reply lists exactly one broker.
kafka_metadata_ok() {
	local reply
	exec 3<>"/dev/tcp/$1/$2" || return 1
	# size=17 | api_key=3 api_version=4 correlation_id=1 client_id="rs" | topics=null allow_auto_create=false
	printf '\x00\x00\x00\x11\x00\x03\x00\x04\x00\x00\x00\x01\x00\x02rs\xff\xff\xff\xff\x00' >&3
	# size(4) correlation_id(4) throttle_time_ms(4) brokers_count(4)
	reply=$(timeout 5 head -c 16 <&3 | od -An -tx1 | tr -d ' \n')
	exec 3>&-
	[[ ${reply:8:8} == 00000001 && ${reply:24:8} == 00000001 ]]
}

kafka_started() {
	grep -q 'Kafka Server started' "$STATE/kafka/server.log" &&
		kafka_metadata_ok 127.0.0.1 "$KAFKA_PORT"
}

write_kafka_config() {
	local dir=$STATE/kafka
	mkdir -p "$dir/data"
	cat >"$dir/server.properties" <<EOF
# Generated by deploy/local/servers.sh: one combined broker+controller (KRaft).
process.roles=broker,controller
node.id=1
listeners=PLAINTEXT://127.0.0.1:$KAFKA_PORT,CONTROLLER://127.0.0.1:$KAFKA_CONTROLLER_PORT
advertised.listeners=PLAINTEXT://127.0.0.1:$KAFKA_PORT
listener.security.protocol.map=PLAINTEXT:PLAINTEXT,CONTROLLER:PLAINTEXT
inter.broker.listener.name=PLAINTEXT
controller.listener.names=CONTROLLER
controller.quorum.bootstrap.servers=127.0.0.1:$KAFKA_CONTROLLER_PORT
log.dirs=$dir/data
num.partitions=8
auto.create.topics.enable=false
offsets.topic.replication.factor=1
transaction.state.log.replication.factor=1
transaction.state.log.min.isr=1
share.coordinator.state.topic.replication.factor=1
share.coordinator.state.topic.min.isr=1
group.initial.rebalance.delay.ms=0
EOF
	# Kafka logs through slf4j -> log4j2; without a configuration log4j2 prints
	# only errors. The system property kafka.root.level quiets the storage tool.
	cat >"$dir/log4j2.yaml" <<'EOF'
Configuration:
  Appenders:
    Console:
      name: STDOUT
      PatternLayout:
        pattern: "[%d] %p %m (%c)%n"
  Loggers:
    Root:
      level: "${sys:kafka.root.level:-INFO}"
      AppenderRef:
        - ref: STDOUT
EOF
}

# A KRaft cluster id is a random UUID in URL-safe base64 without padding;
# Kafka's own generator also avoids ids that start with '-'.
new_cluster_id() {
	local id
	while :; do
		id=$(head -c 16 /dev/urandom | base64 | tr '+/' '-_' | tr -d '=')
		[[ $id != -* ]] && break
	done
	echo "$id"
}

start_kafka() {
	local dir=$STATE/kafka java_opts
	write_kafka_config
	java_opts=(-XX:+UseG1GC -XX:MaxGCPauseMillis=20 -XX:+ExitOnOutOfMemoryError
		-Djava.awt.headless=true -Dlog4j2.configurationFile="$dir/log4j2.yaml"
		-cp "$KAFKA_LIBS/*")
	if ! java -Xmx256m -Dkafka.root.level=WARN "${java_opts[@]}" kafka.tools.StorageTool format \
		--standalone --cluster-id "$(new_cluster_id)" --config "$dir/server.properties" \
		>"$dir/format.log" 2>&1; then
		cat "$dir/format.log" >&2
		die "kafka storage format failed"
	fi
	# shellcheck disable=SC2086 # KAFKA_HEAP is a list of JVM flags
	setsid java $KAFKA_HEAP "${java_opts[@]}" kafka.Kafka "$dir/server.properties" \
		</dev/null >"$dir/server.log" 2>&1 9>&- &
	echo $! >"$STATE/kafka.pid"
}

# --- redis --------------------------------------------------------------------

# start_redis NAME PORT [ARGS...] starts a redis-server whose state lives in $STATE/NAME.
start_redis() {
	local name=$1 port=$2 dir=$STATE/$1
	shift 2
	mkdir -p "$dir"
	redis-server --port "$port" --bind 127.0.0.1 --save "" --appendonly no \
		--daemonize yes --dir "$dir" --pidfile "$STATE/$name.pid" --logfile "$dir/server.log" \
		"$@" >/dev/null 9>&-
	# --daemonize writes the pid file right after forking; wait for it.
	local i
	for ((i = 0; i < 50; i++)); do
		[[ -s $STATE/$name.pid ]] && return 0
		sleep 0.1
	done
	tail -n 20 "$dir/server.log" >&2 || true
	die "$name (redis-server) wrote no pid file"
}

redis_ok() { [[ $(redis-cli -h 127.0.0.1 -p "$1" ping) == PONG ]]; }

# start_redis_cluster makes a Redis Cluster of three masters (no replicas) on
# REDIS_CLUSTER_PORTS: the slots split evenly, as `redis-cli --cluster create` does.
start_redis_cluster() {
	local i port nodes=()
	for i in 1 2 3; do
		port=${REDIS_CLUSTER_PORTS[i - 1]}
		start_redis "redis-c$i" "$port" --cluster-enabled yes \
			--cluster-config-file "$STATE/redis-c$i/nodes.conf" --cluster-node-timeout 5000
		wait_healthy "redis-c$i" "$STATE/redis-c$i/server.log" redis_ok "$port"
		nodes+=("127.0.0.1:$port")
	done
	redis-cli --cluster create "${nodes[@]}" --cluster-replicas 0 --cluster-yes >"$STATE/redis-c1/create.log" 2>&1 ||
		{ cat "$STATE/redis-c1/create.log" >&2; stop_all; die "redis-cli --cluster create failed"; }
	wait_healthy redis-c1 "$STATE/redis-c1/server.log" redis_cluster_ok
}

redis_cluster_ok() {
	local port
	for port in "${REDIS_CLUSTER_PORTS[@]}"; do
		redis-cli -h 127.0.0.1 -p "$port" cluster info | grep -q '^cluster_state:ok' || return 1
	done
}

# --- clickhouse ---------------------------------------------------------------

write_clickhouse_config() {
	local dir=$STATE/clickhouse
	mkdir -p "$dir/data" "$dir/tmp" "$dir/user_files" "$dir/format_schemas"
	cat >"$dir/config.xml" <<EOF
<?xml version="1.0"?>
<!-- Generated by deploy/local/servers.sh -->
<yandex>
    <logger>
        <level>information</level>
        <log>$dir/server.log</log>
        <errorlog>$dir/server.err.log</errorlog>
        <size>100M</size>
        <count>1</count>
    </logger>
    <listen_host>127.0.0.1</listen_host>
    <tcp_port>$CLICKHOUSE_PORT</tcp_port>
    <http_port>$CLICKHOUSE_HTTP_PORT</http_port>
    <path>$dir/data/</path>
    <tmp_path>$dir/tmp/</tmp_path>
    <user_files_path>$dir/user_files/</user_files_path>
    <format_schema_path>$dir/format_schemas/</format_schema_path>
    <users_config>$dir/users.xml</users_config>
    <default_profile>default</default_profile>
    <default_database>default</default_database>
    <timezone>UTC</timezone>
    <mark_cache_size>67108864</mark_cache_size>
    <uncompressed_cache_size>67108864</uncompressed_cache_size>
    <max_concurrent_queries>100</max_concurrent_queries>
    <mlock_executable>false</mlock_executable>
</yandex>
EOF
	cat >"$dir/users.xml" <<'EOF'
<?xml version="1.0"?>
<!-- Generated by deploy/local/servers.sh -->
<yandex>
    <profiles>
        <default>
            <allow_experimental_low_cardinality_type>1</allow_experimental_low_cardinality_type>
        </default>
    </profiles>
    <users>
        <default>
            <password></password>
            <networks>
                <ip>127.0.0.1</ip>
                <ip>::1</ip>
            </networks>
            <profile>default</profile>
            <quota>default</quota>
        </default>
    </users>
    <quotas>
        <default>
            <interval>
                <duration>3600</duration>
                <queries>0</queries>
                <errors>0</errors>
                <result_rows>0</result_rows>
                <read_rows>0</read_rows>
                <execution_time>0</execution_time>
            </interval>
        </default>
    </quotas>
</yandex>
EOF
}

start_clickhouse() {
	local dir=$STATE/clickhouse
	write_clickhouse_config
	(cd "$dir" && exec setsid clickhouse-server --config-file="$dir/config.xml" \
		</dev/null >"$dir/stdout.log" 2>&1 9>&-) &
	echo $! >"$STATE/clickhouse.pid"
}

clickhouse_ok() {
	[[ $(clickhouse-client --host 127.0.0.1 --port "$CLICKHOUSE_PORT" -q 'SELECT 1') == 1 ]]
}

# --- commands -----------------------------------------------------------------

all_running() {
	local name
	[[ -f $STATE/env ]] || return 1
	for name in "${SERVERS[@]}"; do
		pid_of "$name" >/dev/null || return 1
	done
}

stop_all() {
	stop_servers "${SERVERS[@]}"
	if [[ -d $STATE ]]; then
		if [[ -f $STATE/$MARKER ]]; then
			rm -rf "$STATE"
		elif [[ -z $(ls -A "$STATE") ]]; then
			rmdir "$STATE"
		else
			log "not removing $STATE: it was not made by this script"
		fi
	fi
}

cmd_start() {
	lock
	cmd_install
	if all_running; then
		log "servers already running; reusing them ($STATE/env)"
		cat "$STATE/env"
		return 0
	fi
	if [[ -d $STATE && ! -f $STATE/$MARKER && -n $(ls -A "$STATE") ]]; then
		die "$STATE exists and was not made by this script; set RANKSTREAM_SERVERS_DIR to an empty folder"
	fi
	stop_all # whatever is left of an earlier, partial start
	mkdir -p "$STATE"
	touch "$STATE/$MARKER"

	pick_port && KAFKA_PORT=$PORT
	pick_port && KAFKA_CONTROLLER_PORT=$PORT
	pick_port && REDIS_PORT=$PORT
	REDIS_CLUSTER_PORTS=()
	local i
	for i in 1 2 3; do
		# A cluster node also listens on its port + 10000 (the cluster bus).
		until pick_port && [[ $PICKED != *" $((PORT + 10000)) "* ]] && ! port_in_use $((PORT + 10000)); do :; done
		PICKED+="$((PORT + 10000)) "
		REDIS_CLUSTER_PORTS+=("$PORT")
	done
	pick_port && CLICKHOUSE_PORT=$PORT
	pick_port && CLICKHOUSE_HTTP_PORT=$PORT

	# Redis is up in milliseconds; ClickHouse and Kafka start side by side
	# and are waited for afterwards, as the JVM dominates the time.
	phase "start redis"
	start_redis redis "$REDIS_PORT" --databases 1024
	wait_healthy redis "$STATE/redis/server.log" redis_ok "$REDIS_PORT"
	start_redis_cluster
	phase_done

	phase "start clickhouse"
	start_clickhouse
	local clickhouse_phase=$PHASE_START
	phase "start kafka"
	start_kafka
	local kafka_phase=$PHASE_START

	PHASE_NAME="start clickhouse" PHASE_START=$clickhouse_phase
	wait_healthy clickhouse "$STATE/clickhouse/server.err.log" clickhouse_ok
	phase_done
	PHASE_NAME="start kafka" PHASE_START=$kafka_phase
	wait_healthy kafka "$STATE/kafka/server.log" kafka_started
	phase_done

	cat >"$STATE/env.tmp" <<EOF
export RANKSTREAM_TEST_KAFKA=127.0.0.1:$KAFKA_PORT
export RANKSTREAM_TEST_REDIS=127.0.0.1:$REDIS_PORT
export RANKSTREAM_TEST_REDIS_CLUSTER=127.0.0.1:${REDIS_CLUSTER_PORTS[0]},127.0.0.1:${REDIS_CLUSTER_PORTS[1]},127.0.0.1:${REDIS_CLUSTER_PORTS[2]}
export RANKSTREAM_TEST_CLICKHOUSE=127.0.0.1:$CLICKHOUSE_PORT
EOF
	mv "$STATE/env.tmp" "$STATE/env"
	log "servers ready ($STATE/env)"
	cat "$STATE/env"
}

cmd_stop() {
	lock
	phase "stop"
	stop_all
	phase_done
}

cmd_env() {
	[[ -f $STATE/env ]] || die "no servers running ($STATE/env missing); run: $0 start"
	cat "$STATE/env"
}

main() {
	case ${1:-} in
	install)
		lock
		cmd_install
		;;
	start) cmd_start ;;
	stop) cmd_stop ;;
	env) cmd_env ;;
	*)
		echo "usage: $0 install|start|stop|env" >&2
		exit 2
		;;
	esac
}

main "$@"
