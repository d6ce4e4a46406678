#!/usr/bin/env bash
# The idempo benchmark: builds idempo-benchmark, starts it once per store and measures the same
# handler with and without @Idempotent with wrk, next to the store's own round trip and write
# ceiling, on Spring MVC (default) or Spring WebFlux (--stack webflux). See benchmark/README.md. Loads only the servers configured below (127.0.0.1 by default).
set -euo pipefail

usage() {
	cat <<'EOF'
Usage: benchmark/run.sh [options]

  --stores LIST      comma-separated stores to measure: memory,redis,postgres,mysql (default: all four)
  --stack servlet|webflux
                     the web stack of the application (default servlet: Spring MVC on Tomcat;
                     webflux: the same handlers on Spring WebFlux and Reactor Netty, protected by
                     idempo's IdempotencyWebFilter and its reactive store); webflux has no
                     transactional case (pay-tx, skipped) and names its report webflux.*
  --duration SECONDS length of each load run (default 6)
  --rounds N         interleaved rounds; the report shows medians (default 3)
  --records N        pre-populate N unexpired records in the store before measuring (redis,
                     postgres, mysql; memory ignores it) and delete them afterwards
  --smoke            a quick sanity run of one store (the first of --stores, default memory):
                     every case once for 1 second at 32 clients; exits non-zero if any check fails
  --observations on|off
                     whether the application has an ObservationRegistry (default off: idempo's
                     cost without one; on: with Boot's, as an Actuator application has)
  --local-cache on|off
                     whether the application keeps completed records in idempo's local replay
                     cache (idempo.local-cache.enabled; default off); on: the report is named
                     local-cache.* unless --smoke or --records name it
  --redis-client lettuce|jedis
                     the Redis client of the application (spring.data.redis.client-type; default
                     lettuce, Boot's default; jedis: calls complete on the request thread)
  --cases LIST       comma-separated cases to measure (default: all); baseline, the unprotected
                     handler the others are compared with, always runs
  --clients LIST     comma-separated client counts, from 1 and 32 (default: 1,32)
  --out DIR          where the report goes (default benchmark/results): latest.md and latest.csv,
                     smoke.* for --smoke, scale-<N>.* with --records; with --stack webflux
                     webflux.md and webflux.csv, webflux-smoke.*, webflux-scale-<N>.*,
                     webflux-local-cache.*
  -h, --help         this text

Servers (defaults in brackets):
  IDEMPO_BENCH_PG_URL [jdbc:postgresql://127.0.0.1:5432/test], IDEMPO_BENCH_PG_USER [postgres],
  IDEMPO_BENCH_PG_PASSWORD []
  IDEMPO_BENCH_MYSQL_URL [jdbc:mariadb://127.0.0.1:3306/test], IDEMPO_BENCH_MYSQL_USER [root],
  IDEMPO_BENCH_MYSQL_PASSWORD []
  IDEMPO_BENCH_REDIS_URL [redis://127.0.0.1:6379]
  IDEMPO_BENCH_JAVA_OPTS [-Xms512m -Xmx512m -XX:+UseG1GC]

Exit status: 0 if every check passed, 1 if a check failed (the report says which), 2 on a usage
or environment error (a missing tool names the Debian package to install).
EOF
}

die() {
	echo "run.sh: $*" >&2
	exit 2
}

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
BENCH="$ROOT/benchmark"
STORES="memory,redis,postgres,mysql"
DURATION=6
ROUNDS=3
RECORDS=0
SMOKE=0
OUT="$BENCH/results"
WARMUP=5
WARMUP_MAX=60
REPLAY_KEYS=2000
CLIENTS=(1 32)
OBSERVATIONS=off
LOCAL_CACHE=off
REDIS_CLIENT=lettuce
ONLY_CASES=""
STACK=servlet

while [ $# -gt 0 ]; do
	case $1 in
		--stores) STORES=${2:?--stores needs a list}; shift 2 ;;
		--stack) STACK=${2:?--stack needs servlet or webflux}; shift 2 ;;
		--duration) DURATION=${2:?--duration needs seconds}; shift 2 ;;
		--rounds) ROUNDS=${2:?--rounds needs a number}; shift 2 ;;
		--records) RECORDS=${2:?--records needs a number}; shift 2 ;;
		--smoke) SMOKE=1; shift ;;
		--out) OUT=${2:?--out needs a directory}; shift 2 ;;
		--observations) OBSERVATIONS=${2:?--observations needs on or off}; shift 2 ;;
		--local-cache) LOCAL_CACHE=${2:?--local-cache needs on or off}; shift 2 ;;
		--redis-client) REDIS_CLIENT=${2:?--redis-client needs lettuce or jedis}; shift 2 ;;
		--cases) ONLY_CASES=${2:?--cases needs a list}; shift 2 ;;
		--clients) IFS=, read -r -a CLIENTS <<<"${2:?--clients needs a list}"; shift 2 ;;
		-h | --help) usage; exit 0 ;;
		*) usage >&2; die "unknown option '$1'" ;;
	esac
done

[[ $DURATION =~ ^[1-9][0-9]{0,3}$ ]] || die "--duration must be 1 to 9999 seconds"
[[ $ROUNDS =~ ^[1-9][0-9]?$ ]] || die "--rounds must be 1 to 99"
[[ $RECORDS =~ ^[0-9]{1,8}$ ]] || die "--records must be 0 to 99999999"
[[ $OBSERVATIONS =~ ^(on|off)$ ]] || die "--observations must be on or off"
[[ $LOCAL_CACHE =~ ^(on|off)$ ]] || die "--local-cache must be on or off"
[[ $REDIS_CLIENT =~ ^(lettuce|jedis)$ ]] || die "--redis-client must be lettuce or jedis"
[[ $STACK =~ ^(servlet|webflux)$ ]] || die "--stack must be servlet or webflux"
for clients in "${CLIENTS[@]}"; do
	case $clients in 1 | 32) ;; *) die "--clients takes 1 and 32" ;; esac
done
IFS=, read -r -a SELECTED <<<"$STORES"
[ ${#SELECTED[@]} -gt 0 ] || die "--stores is empty"
for store in "${SELECTED[@]}"; do
	case $store in memory | redis | postgres | mysql) ;; *) die "unknown store '$store' (memory, redis, postgres, mysql)" ;; esac
done
NAME=latest
[ "$LOCAL_CACHE" = on ] && NAME=local-cache
if [ "$SMOKE" = 1 ]; then
	SELECTED=("${SELECTED[0]}")
	[ "$STORES" = "memory,redis,postgres,mysql" ] && SELECTED=(memory)
	DURATION=1
	ROUNDS=1
	WARMUP=1
	WARMUP_MAX=0
	REPLAY_KEYS=200
	CLIENTS=(32)
	NAME=smoke
elif [ "$RECORDS" -gt 0 ]; then
	if ((RECORDS % 1000000 == 0)); then NAME="scale-$((RECORDS / 1000000))m"
	elif ((RECORDS % 1000 == 0)); then NAME="scale-$((RECORDS / 1000))k"
	else NAME="scale-$RECORDS"; fi
fi
if [ "$STACK" = webflux ]; then
	# the servlet reports keep their names; the WebFlux ones never overwrite them
	if [ "$NAME" = latest ]; then NAME=webflux; else NAME="webflux-$NAME"; fi
fi

# ---------------------------------------------------------------------------------------------
# Servers and tools

PG_URL=${IDEMPO_BENCH_PG_URL:-jdbc:postgresql://127.0.0.1:5432/test}
PG_USER=${IDEMPO_BENCH_PG_USER:-postgres}
PG_PASSWORD=${IDEMPO_BENCH_PG_PASSWORD:-}
MY_URL=${IDEMPO_BENCH_MYSQL_URL:-jdbc:mariadb://127.0.0.1:3306/test}
MY_USER=${IDEMPO_BENCH_MYSQL_USER:-root}
MY_PASSWORD=${IDEMPO_BENCH_MYSQL_PASSWORD:-}
REDIS_URL=${IDEMPO_BENCH_REDIS_URL:-redis://127.0.0.1:6379}
read -r -a JAVA_OPTS <<<"${IDEMPO_BENCH_JAVA_OPTS:--Xms512m -Xmx512m -XX:+UseG1GC}"

[[ $PG_URL =~ ^jdbc:postgresql://([^:/?]+)(:([0-9]+))?/([A-Za-z0-9_]+) ]] \
	|| die "IDEMPO_BENCH_PG_URL must look like jdbc:postgresql://host:port/database"
PG_HOST=${BASH_REMATCH[1]} PG_PORT=${BASH_REMATCH[3]:-5432} PG_DB=${BASH_REMATCH[4]}
[[ $MY_URL =~ ^jdbc:(mariadb|mysql)://([^:/?]+)(:([0-9]+))?/([A-Za-z0-9_]+) ]] \
	|| die "IDEMPO_BENCH_MYSQL_URL must look like jdbc:mariadb://host:port/database"
MY_HOST=${BASH_REMATCH[2]} MY_PORT=${BASH_REMATCH[4]:-3306} MY_DB=${BASH_REMATCH[5]}
[[ $REDIS_URL =~ ^redis://(([^:@/]*):([^@/]*)@)?([^:@/]+)(:([0-9]+))?(/([0-9]+))?$ ]] \
	|| die "IDEMPO_BENCH_REDIS_URL must look like redis://[user:password@]host:port[/db]"
REDIS_AUTH=() REDIS_HOST=${BASH_REMATCH[4]} REDIS_PORT=${BASH_REMATCH[6]:-6379} REDIS_DBNUM=${BASH_REMATCH[8]:-0}
if [ -n "${BASH_REMATCH[3]}" ]; then
	REDIS_AUTH=(-a "${BASH_REMATCH[3]}" --no-auth-warning)
	[ -n "${BASH_REMATCH[2]}" ] && REDIS_AUTH+=(--user "${BASH_REMATCH[2]}")
fi

need() { # need TOOL DEBIAN_PACKAGE
	command -v "$1" >/dev/null 2>&1 || die "'$1' is missing: install the Debian package $2 (sudo apt-get install $2)"
}
uses() { # uses STORE: whether STORE is selected
	local store
	for store in "${SELECTED[@]}"; do [ "$store" = "$1" ] && return 0; done
	return 1
}
# PostgreSQL is the application database of the memory and redis runs as well
NEED_PG=0
{ uses memory || uses redis || uses postgres; } && NEED_PG=1
need java "openjdk-17-jdk-headless (or any JDK 17+)"
need wrk wrk
need timeout coreutils
if [ "$NEED_PG" = 1 ]; then need psql postgresql-client; need pgbench postgresql-client; fi
if uses redis; then need redis-cli redis-tools; need redis-benchmark redis-tools; fi
if uses mysql; then need mariadb mariadb-client; need mariadb-slap mariadb-client; fi

export PGPASSWORD=$PG_PASSWORD
export PGOPTIONS="-c client_min_messages=warning"
psql_() { psql -X -q -v ON_ERROR_STOP=1 -h "$PG_HOST" -p "$PG_PORT" -U "$PG_USER" -d "$PG_DB" "$@"; }
MY_ARGS=(-h "$MY_HOST" -P "$MY_PORT" -u "$MY_USER" --protocol=TCP)
[ -n "$MY_PASSWORD" ] && MY_ARGS+=("-p$MY_PASSWORD")
mariadb_() { mariadb "${MY_ARGS[@]}" -D "$MY_DB" -N -B "$@"; }
rcli() { redis-cli -h "$REDIS_HOST" -p "$REDIS_PORT" -n "$REDIS_DBNUM" "${REDIS_AUTH[@]}" "$@"; }

if [ "$NEED_PG" = 1 ]; then
	psql_ -Atc "SELECT 1" >/dev/null || die "PostgreSQL at $PG_URL does not accept user $PG_USER"
fi
if uses mysql; then
	mariadb_ -e "SELECT 1" >/dev/null || die "MySQL/MariaDB at $MY_URL does not accept user $MY_USER"
fi
if uses redis; then
	[ "$(rcli PING 2>/dev/null)" = PONG ] || die "Redis at $REDIS_URL does not answer PING"
fi

# ---------------------------------------------------------------------------------------------
# Run identity, work directory, cleanup

RUN_ID=$(date -u +%Y%m%d%H%M%S)$(printf '%04x' $((RANDOM)))
WORK="$OUT/runs/$RUN_ID"
mkdir -p "$WORK"
BODY="$BENCH/request.json"
RAW="$WORK/raw.tsv"
BASELINES="$WORK/baselines.tsv"
INFO="$WORK/info.tsv"
: >"$RAW"
: >"$BASELINES"
: >"$INFO"
IDEMPO_TABLE="idempo_bench_$RUN_ID"
PAYMENT_TABLE="bench_payment_$RUN_ID"
SCRATCH_TABLE="idempo_bench_scratch_$RUN_ID"
REDIS_PREFIX="idempo-bench-$RUN_ID:"
APP_PID=""
APP_PORT=""
CLEANUPS=()

log() { printf '[%s] %s\n' "$(date +%H:%M:%S)" "$*" >&2; }

stop_app() {
	[ -n "$APP_PID" ] || return 0
	kill -TERM "$APP_PID" 2>/dev/null || true
	local i
	for ((i = 0; i < 150; i++)); do
		kill -0 "$APP_PID" 2>/dev/null || break
		sleep 0.2
	done
	kill -KILL "$APP_PID" 2>/dev/null || true
	wait "$APP_PID" 2>/dev/null || true
	APP_PID=""
}

cleanup_redis_keys() {
	# the benchmark's keys (its records, locks and pre-populated records) all start with the run's prefix
	rcli --scan --pattern "${REDIS_PREFIX}*" | xargs -r -n 1000 redis-cli -h "$REDIS_HOST" -p "$REDIS_PORT" \
		-n "$REDIS_DBNUM" "${REDIS_AUTH[@]}" UNLINK >/dev/null
}

run_cleanups() {
	local command
	stop_app
	for command in "${CLEANUPS[@]}"; do
		eval "$command" || log "cleanup failed: $command"
	done
	CLEANUPS=()
}
trap 'run_cleanups' EXIT
trap 'exit 130' INT TERM

# ---------------------------------------------------------------------------------------------
# The application's HTTP interface, over bash's /dev/tcp (no HTTP client needed)

http() { # http METHOD PATH [BODY_FILE [HEADER...]]: prints the raw response (CR removed)
	local method=$1 path=$2 body=${3:-}
	shift 2
	[ $# -gt 0 ] && shift
	timeout "${HTTP_TIMEOUT:-30}" bash -c '
		port=$1 method=$2 path=$3 body=$4
		shift 4
		exec 3<>"/dev/tcp/127.0.0.1/$port" || exit 7
		{
			printf "%s %s HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n" "$method" "$path"
			for header in "$@"; do printf "%s\r\n" "$header"; done
			if [ -n "$body" ]; then
				printf "Content-Type: application/json\r\nContent-Length: %s\r\n\r\n" "$(wc -c <"$body")"
				cat "$body"
			else
				printf "Content-Length: 0\r\n\r\n"
			fi
		} >&3
		cat <&3
	' http "$APP_PORT" "$method" "$path" "$body" "$@" 2>/dev/null | tr -d '\r'
}

status_of() { head -n 1 | awk '{ print $2 }'; }
body_of() { sed '1,/^$/d'; }

control() { # control METHOD PATH [BODY_FILE]: the body of a 200 answer, else fails
	local response
	response=$(http "$@") || true
	if [ "$(status_of <<<"$response")" != 200 ]; then
		log "$1 $2 answered: $(head -n 1 <<<"$response")"
		return 1
	fi
	body_of <<<"$response"
}

counters_to() { # counters_to FILE: the application's counters
	control GET /bench/counters >"$1" || die "the application does not answer (log: $WORK)"
}

value() { # value FILE NAME: NAME's value in a name=value file (0 if absent)
	awk -F= -v name="$2" '$1 == name { print $2; found = 1 } END { if (!found) print 0 }' "$1"
}

settle() { # waits until no measured request is in flight
	local i counters
	for ((i = 0; i < 300; i++)); do
		counters=$(control GET /bench/counters) || return 1
		[ "$(awk -F= '$1 == "inflight" { print $2 }' <<<"$counters")" = 0 ] && return 0
		sleep 0.2
	done
	log "requests still in flight after 60 s"
	return 1
}

start_app() { # start_app STORE
	local store=$1 port_file="$WORK/port-$1" i
	local args=(--server.port=0 "--bench.port-file=$port_file" "--bench.payment-table=$PAYMENT_TABLE"
		"--idempo.store.type=$store")
	local excludes=()
	local redis_off=org.springframework.boot.data.redis.autoconfigure.DataRedisAutoConfiguration
	if [ "$LOCAL_CACHE" = on ]; then
		args+=(--idempo.local-cache.enabled=true)
	fi
	if [ "$STACK" = webflux ]; then
		# the jar has both web starters; Boot starts a servlet application unless told otherwise
		args+=(--spring.main.web-application-type=reactive)
	fi
	if [ "$OBSERVATIONS" = off ]; then
		# no ObservationRegistry: what idempo costs without one
		excludes+=(org.springframework.boot.micrometer.observation.autoconfigure.ObservationAutoConfiguration)
	fi
	case $store in
		memory | redis | postgres)
			args+=("--spring.datasource.url=$PG_URL" "--spring.datasource.username=$PG_USER"
				"--spring.datasource.password=$PG_PASSWORD") ;;
		mysql)
			args+=("--spring.datasource.url=$MY_URL" "--spring.datasource.username=$MY_USER"
				"--spring.datasource.password=$MY_PASSWORD") ;;
	esac
	case $store in
		redis) args+=("--spring.data.redis.url=$REDIS_URL" "--idempo.store.redis.key-prefix=$REDIS_PREFIX"
			"--spring.data.redis.client-type=$REDIS_CLIENT")
			# Jedis holds a pooled connection per call in flight: as many as the clients
			[ "$REDIS_CLIENT" = jedis ] && args+=(--spring.data.redis.jedis.pool.max-active=64
				--spring.data.redis.jedis.pool.max-idle=64) ;;
		postgres | mysql) excludes+=("$redis_off"); args+=("--idempo.store.jdbc.table-name=$IDEMPO_TABLE"
			--idempo.store.jdbc.initialize-schema=always) ;;
		memory) excludes+=("$redis_off") ;;
	esac
	if [ ${#excludes[@]} -gt 0 ]; then
		args+=("--spring.autoconfigure.exclude=$(IFS=,; echo "${excludes[*]}")")
	fi
	rm -f "$port_file"
	java "${JAVA_OPTS[@]}" -jar "$JAR" "${args[@]}" >"$WORK/app-$store.log" 2>&1 &
	APP_PID=$!
	for ((i = 0; i < 600; i++)); do
		kill -0 "$APP_PID" 2>/dev/null || { tail -n 40 "$WORK/app-$store.log" >&2; APP_PID=""; die "the application exited while starting (log: $WORK/app-$store.log)"; }
		if [ -s "$port_file" ]; then
			APP_PORT=$(cat "$port_file")
			control GET /bench/counters >/dev/null 2>&1 && return 0
		fi
		sleep 0.2
	done
	tail -n 40 "$WORK/app-$store.log" >&2
	die "the application did not become ready within 120 s (log: $WORK/app-$store.log)"
}

check_stack() { # check_stack STORE: the application runs the stack asked for; the report names it and the store
	local store=$1 info flow server flow_store
	info=$(control GET /bench/info) || die "the application does not answer GET /bench/info (log: $WORK)"
	flow=$(value <(echo "$info") flow)
	server=$(value <(echo "$info") server)
	flow_store=$(value <(echo "$info") store)
	[ "$flow" = "$STACK" ] || die "asked for --stack $STACK, but the application runs idempo's $flow flow on $server"
	baseline "$store" app "$server, idempo's $([ "$STACK" = webflux ] && echo "IdempotencyWebFilter over $flow_store" \
		|| echo "servlet flow over $flow_store")"
	log "$store: $server, idempo's $flow flow over $flow_store"
}

# ---------------------------------------------------------------------------------------------
# Load runs

WRK_LAST=()

wrk_run() { # wrk_run CLIENTS DURATION PATH MODE EXPECT PREFIX KEYS LOGNAME: sets WRK_LAST
	local clients=$1 duration=$2 path=$3 mode=$4 expect=$5 prefix=$6 keys=$7 logname=$8
	local threads=$((clients >= 2 ? 2 : 1))
	local output="$WORK/wrk-$logname.txt"
	timeout $((duration + 60)) wrk -t"$threads" -c"$clients" -d"${duration}s" --timeout 10s --latency \
		-s "$BENCH/bench.lua" "http://127.0.0.1:$APP_PORT$path" -- "$mode" "$expect" "$prefix" "$keys" "$BODY" "$threads" \
		>"$output" 2>&1 || { cat "$output" >&2; return 1; }
	local line
	line=$(grep '^RESULT' "$output") || { cat "$output" >&2; return 1; }
	IFS=$'\t' read -r -a WRK_LAST <<<"$line"
}

measure() { # measure STORE ROUND CASE CLIENTS: one load run, appended to raw.tsv
	local store=$1 round=$2 case=$3 clients=$4
	local tag="$RUN_ID-$store-r$round-$case-c$clients"
	local path mode=plain expect=201 handler prefix=- keys=1
	case $case in
		baseline) path=/plain handler=plain ;;
		fresh) path=/idem handler=idem mode=fresh prefix=$tag ;;
		replay) path=/idem handler=idem mode=cycle prefix=$tag keys=$REPLAY_KEYS ;;
		nokey) path=/idem handler=idem ;;
		conflict) path=/slow-idem handler=slow-idem mode=fixed expect=409 prefix=$tag ;;
		pay-plain) path=/pay-plain handler=pay-plain ;;
		pay-idem) path=/pay-idem handler=pay-idem mode=fresh prefix=$tag ;;
		pay-tx) path=/pay-tx handler=pay-tx mode=fresh prefix=$tag ;;
	esac
	local problems=() before="$WORK/before" after="$WORK/after" holder="" holder_out="$WORK/holder.txt"

	if [ "$case" = replay ]; then
		local primed
		primed=$(HTTP_TIMEOUT=300 control POST "/bench/prime?prefix=$tag&count=$keys&path=/idem" "$BODY") \
			|| die "priming $keys keys failed"
		[ "$(value <(echo "$primed") status.201)" = "$keys" ] && [ "$(value <(echo "$primed") replayed)" = 0 ] \
			|| problems+=("priming $keys keys answered $(tr '\n' ' ' <<<"$primed")")
		settle || die "requests still in flight after priming"
	fi
	if [ "$case" = conflict ]; then
		counters_to "$before"
		HTTP_TIMEOUT=150 http POST /slow-idem "$BODY" "Idempotency-Key: $prefix" >"$holder_out" &
		holder=$!
		local i entered=0
		for ((i = 0; i < 150; i++)); do
			counters_to "$after"
			if [ "$(value "$after" slow.entered)" -gt "$(value "$before" slow.entered)" ]; then entered=1; break; fi
			sleep 0.2
		done
		[ "$entered" = 1 ] || die "the request holding key $prefix never reached the handler"
	fi

	counters_to "$before"
	wrk_run "$clients" "$DURATION" "$path" "$mode" "$expect" "$prefix" "$keys" "$store-r$round-$case-c$clients" \
		|| die "wrk failed ($store, round $round, $case, $clients clients)"
	if [ -n "$holder" ]; then
		control POST /bench/slow/release >/dev/null
		wait "$holder" || true
		local held_status
		held_status=$(status_of <"$holder_out")
		[ "$held_status" = 201 ] || problems+=("the request holding the key answered ${held_status:-nothing}, not 201")
	fi
	settle || problems+=("requests still in flight 60 s after the run")
	counters_to "$after"

	local requests=${WRK_LAST[1]} duration_us=${WRK_LAST[2]} p50=${WRK_LAST[3]} p99=${WRK_LAST[4]}
	local ok=${WRK_LAST[5]} unexpected=${WRK_LAST[6]} replayed=${WRK_LAST[7]} socket=${WRK_LAST[8]}
	local timeouts=${WRK_LAST[9]} statuses=${WRK_LAST[10]}
	local rps
	rps=$(awk -v n="$requests" -v us="$duration_us" 'BEGIN { printf "%.1f", (us > 0) ? n * 1e6 / us : 0 }')
	delta() { echo $(($(value "$after" "$1") - $(value "$before" "$1"))); }
	local executed failed name
	executed=$(delta "executed.$handler")
	failed=0
	for name in claim complete release renew; do failed=$((failed + $(delta "store.failed.$name"))); done

	[ "$requests" -gt 0 ] || problems+=("no request completed")
	[ "$unexpected" = 0 ] || problems+=("$unexpected unexpected statuses ($statuses)")
	[ "$socket" = 0 ] || problems+=("$socket socket errors")
	[ "$timeouts" = 0 ] || problems+=("$timeouts requests timed out (10 s)")
	[ "$failed" = 0 ] || problems+=("$failed failed store operations (claim $(delta store.failed.claim), complete $(delta store.failed.complete), release $(delta store.failed.release), renew $(delta store.failed.renew))")
	local lost store_errors
	lost=$(delta response.lock_lost)
	store_errors=$(($(delta response.store_error) + $(delta request.store_error)))
	[ "$lost" = 0 ] || problems+=("$lost responses lost their lock")
	[ "$store_errors" = 0 ] || problems+=("$store_errors store errors")
	case $case in
		baseline | fresh | nokey | pay-plain | pay-idem | pay-tx)
			# requests cut off when wrk stops still run on the server: at most one per connection
			if [ "$executed" -lt "$ok" ] || [ "$executed" -gt $((ok + clients)) ]; then
				problems+=("handler ran $executed times for $ok completed requests")
			fi ;;
		replay)
			[ "$executed" = 0 ] || problems+=("handler ran $executed times during the replay run")
			[ "$replayed" = "$requests" ] || problems+=("$replayed of $requests responses were replayed") ;;
		conflict)
			[ "$executed" = 1 ] || problems+=("handler ran $executed times, expected only the held request")
			[ "$(delta slow.entered)" = 0 ] || problems+=("$(delta slow.entered) duplicates reached the handler") ;;
	esac
	case $case in
		fresh | nokey | pay-idem | pay-tx | baseline | pay-plain)
			[ "$replayed" = 0 ] || problems+=("$replayed responses were replayed") ;;
	esac

	local text=-
	if [ ${#problems[@]} -gt 0 ]; then
		text=$(printf '%s; ' "${problems[@]}")
		text=${text%; }
	fi
	printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$store" "$round" "$case" "$clients" \
		"$requests" "$duration_us" "$rps" "$p50" "$p99" "$unexpected" "$statuses" "$socket" "$timeouts" "$replayed" \
		"$executed" "$failed" "$text" >>"$RAW"
	log "$(printf '%-8s r%s %-9s %2s clients: %9s req/s  p50 %6s µs  p99 %7s µs  %s' "$store" "$round" "$case" "$clients" \
		"$rps" "$p50" "$p99" "$([ "$text" = - ] && echo ok || echo "FAILED: $text")")"
}

warm_up() { # warm_up STORE: WARMUP seconds of mixed load, then more until the JIT is quiet
	local store=$1 step=0 extra=0 compiled=0
	log "$store: warming up ($WARMUP s of mixed load, then up to $WARMUP_MAX s more until the JIT is quiet)"
	wrk_run 32 "$WARMUP" /plain mixed 201 "$RUN_ID-warmup-$store-0" 1 "$store-warmup-0" || die "warm-up failed"
	[ "${WRK_LAST[6]}" = 0 ] && [ "${WRK_LAST[8]}" = 0 ] && [ "${WRK_LAST[9]}" = 0 ] \
		|| log "$store: warm-up had ${WRK_LAST[6]} unexpected statuses (${WRK_LAST[10]}), ${WRK_LAST[8]} socket errors, ${WRK_LAST[9]} timeouts"
	settle || die "requests still in flight after the warm-up"
	case $store-$STACK in
		postgres-servlet | mysql-servlet)
			# the transactional handler is not in the mixed load (it exists only here)
			wrk_run 32 "$WARMUP" /pay-tx fresh 201 "$RUN_ID-warmup-tx-$store" 1 "$store-warmup-tx" || die "warm-up failed"
			settle || die "requests still in flight after the warm-up" ;;
	esac
	while ((extra < WARMUP_MAX)); do
		# 2-second steps until the JIT spends less than 5 % of a step compiling
		step=$((step + 1))
		counters_to "$WORK/jit-before"
		wrk_run 32 2 /plain mixed 201 "$RUN_ID-warmup-$store-$step" 1 "$store-warmup-$step" || die "warm-up failed"
		settle || die "requests still in flight after the warm-up"
		counters_to "$WORK/jit-after"
		extra=$((extra + 2))
		compiled=$(($(value "$WORK/jit-after" jit.ms) - $(value "$WORK/jit-before" jit.ms)))
		((compiled < 100)) && break
	done
	log "$store: warmed up for $((WARMUP + extra)) s$( ((extra > 0)) && echo " (the JIT compiled for $compiled ms in the last 2 s)")"
	baseline "$store" warmup "$((WARMUP + extra)) s"
}

# ---------------------------------------------------------------------------------------------
# Store baselines (the application is stopped)

PAYLOAD=$(head -c 615 /dev/urandom | od -An -v -tx1 | tr -d ' \n' | head -c 1229)

baseline() { printf '%s\t%s\t%s\n' "$1" "$2" "$3" >>"$BASELINES"; }

median_of_column() { # median_of_column N FILE...
	local column=$1
	shift
	cat "$@" | awk -v c="$column" '{ print $c }' | sort -n | awk '{ v[NR] = $1 } END { if (NR == 0) print ""; else if (NR % 2) print v[(NR + 1) / 2]; else print (v[NR / 2] + v[NR / 2 + 1]) / 2 }'
}

redis_baselines() {
	local n_ping=$((DURATION * 5000)) n_set=$((DURATION * 25000)) csv p50 rps
	baseline redis version "Redis $(rcli INFO server | awk -F: '$1 == "redis_version" { print $2 }' | tr -d '\r')"
	baseline redis durability "appendonly $(rcli CONFIG GET appendonly | tail -n 1), appendfsync $(rcli CONFIG GET appendfsync | tail -n 1)"
	csv=$(redis-benchmark -h "$REDIS_HOST" -p "$REDIS_PORT" --dbnum "$REDIS_DBNUM" "${REDIS_AUTH[@]}" -n "$n_ping" -c 1 -t ping --csv 2>/dev/null)
	p50=$(awk -F'"' '$2 == "PING_MBULK" { print $10 * 1000 }' <<<"$csv")
	[ -n "$p50" ] || die "redis-benchmark PING gave no p50: $csv"
	baseline redis rtt_us "$p50"
	baseline redis rtt_clients 1
	baseline redis rtt_how "redis-benchmark PING p50, 1 client"
	CLEANUPS+=("rcli DEL '${REDIS_PREFIX}write-ceiling' >/dev/null")
	csv=$(redis-benchmark -h "$REDIS_HOST" -p "$REDIS_PORT" --dbnum "$REDIS_DBNUM" "${REDIS_AUTH[@]}" -n "$n_set" -c 32 --csv \
		SET "${REDIS_PREFIX}write-ceiling" "$PAYLOAD" 2>/dev/null)
	rps=$(tail -n 1 <<<"$csv" | awk -F'"' '{ print $4 }')
	[ -n "$rps" ] || die "redis-benchmark SET gave no result: $csv"
	rcli DEL "${REDIS_PREFIX}write-ceiling" >/dev/null
	baseline redis ceiling32 "$rps"
	baseline redis ceiling_how "redis-benchmark SET of a 1.2 KiB value"
	log "redis: PING p50 $p50 µs, SET 1.2 KiB at 32 clients $rps/s"
}

pgbench_() { pgbench -h "$PG_HOST" -p "$PG_PORT" -U "$PG_USER" -n "$@" "$PG_DB"; }

postgres_baselines() {
	local dir="$WORK/pgbench" tps1 tps32 p50
	mkdir -p "$dir"
	baseline postgres version "PostgreSQL $(psql_ -Atc 'SHOW server_version')"
	baseline postgres durability "synchronous_commit $(psql_ -Atc 'SHOW synchronous_commit'), fsync $(psql_ -Atc 'SHOW fsync')"
	echo "SELECT 1;" >"$dir/select.sql"
	(cd "$dir" && pgbench_ -f select.sql -c 1 -j 1 -T "$DURATION" -l --log-prefix=select >select.out 2>&1) \
		|| { cat "$dir/select.out" >&2; die "pgbench SELECT 1 failed"; }
	p50=$(median_of_column 3 "$dir"/select.[0-9]*)
	baseline postgres rtt_us "$p50"
	baseline postgres rtt_clients 1
	baseline postgres rtt_how "pgbench SELECT 1 p50, 1 client"
	CLEANUPS+=("psql_ -c 'DROP TABLE IF EXISTS $SCRATCH_TABLE'")
	psql_ -c "CREATE TABLE $SCRATCH_TABLE (id BIGSERIAL PRIMARY KEY, payload TEXT NOT NULL)"
	echo "INSERT INTO $SCRATCH_TABLE (payload) VALUES ('$PAYLOAD');" >"$dir/insert.sql"
	(cd "$dir" && pgbench_ -f insert.sql -c 1 -j 1 -T "$DURATION" >insert1.out 2>&1) \
		|| { cat "$dir/insert1.out" >&2; die "pgbench INSERT failed"; }
	(cd "$dir" && pgbench_ -f insert.sql -c 32 -j 2 -T "$DURATION" >insert32.out 2>&1) \
		|| { cat "$dir/insert32.out" >&2; die "pgbench INSERT failed"; }
	psql_ -c "DROP TABLE IF EXISTS $SCRATCH_TABLE"
	tps1=$(awk '$1 == "tps" { print $3; exit }' "$dir/insert1.out")
	tps32=$(awk '$1 == "tps" { print $3; exit }' "$dir/insert32.out")
	baseline postgres ceiling1 "$tps1"
	baseline postgres ceiling32 "$tps32"
	baseline postgres ceiling_how "pgbench INSERT of a 1.2 KiB row, one commit each"
	log "postgres: SELECT 1 p50 $p50 µs, INSERT 1.2 KiB $tps1/s at 1 client, $tps32/s at 32 clients"
}

slap() { mariadb-slap "${MY_ARGS[@]}" --create-schema="$MY_DB" --no-drop --iterations=1 "$@"; }

slap_seconds() { awk '/Average number of seconds to run all queries/ { print $(NF - 1) }'; }

mysql_baselines() {
	local n_select=$((DURATION * 5000)) n_insert=$((DURATION * 400)) out seconds rtt rate
	baseline mysql version "$(mariadb_ -e 'SELECT VERSION()')"
	baseline mysql durability "innodb_flush_log_at_trx_commit $(mariadb_ -e 'SELECT @@innodb_flush_log_at_trx_commit'), sync_binlog $(mariadb_ -e 'SELECT @@sync_binlog'), log_bin $(mariadb_ -e 'SELECT @@log_bin')"
	out=$(slap --concurrency=1 --number-of-queries="$n_select" --query="SELECT 1") || die "mariadb-slap SELECT 1 failed: $out"
	seconds=$(slap_seconds <<<"$out")
	rtt=$(awk -v s="$seconds" -v n="$n_select" 'BEGIN { printf "%.0f", s * 1e6 / n }')
	baseline mysql rtt_us "$rtt"
	baseline mysql rtt_clients 1
	baseline mysql rtt_how "mariadb-slap SELECT 1 mean, 1 client"
	CLEANUPS+=("mariadb_ -e 'DROP TABLE IF EXISTS $SCRATCH_TABLE'")
	mariadb_ -e "CREATE TABLE $SCRATCH_TABLE (id BIGINT AUTO_INCREMENT PRIMARY KEY, payload TEXT NOT NULL) ENGINE = InnoDB"
	local clients queries
	for clients in 1 32; do
		queries=$((clients == 1 ? n_insert : n_insert * 8))
		out=$(slap --concurrency="$clients" --number-of-queries="$queries" --query="INSERT INTO $SCRATCH_TABLE (payload) VALUES ('$PAYLOAD')") \
			|| die "mariadb-slap INSERT failed: $out"
		seconds=$(slap_seconds <<<"$out")
		rate=$(awk -v s="$seconds" -v n="$queries" 'BEGIN { printf "%.1f", n / s }')
		baseline mysql "ceiling$clients" "$rate"
		log "mysql: INSERT 1.2 KiB at $clients client(s) $rate/s"
	done
	mariadb_ -e "DROP TABLE IF EXISTS $SCRATCH_TABLE"
	baseline mysql ceiling_how "mariadb-slap INSERT of a 1.2 KiB row, autocommit"
	log "mysql: SELECT 1 mean $rtt µs"
}

# ---------------------------------------------------------------------------------------------
# Pre-populated records (--records)

populate() { # populate STORE: RECORDS unexpired records in the store's own table or key prefix
	local store=$1 batch from to
	log "$store: pre-populating $RECORDS records"
	case $store in
		redis)
			# the store's layout: <prefix>{<hex digest>}:record, a hash of fingerprint and response
			local script='
				local n = 0
				for i = tonumber(ARGV[2]), tonumber(ARGV[3]) do
					local digest = redis.sha1hex("record-" .. i)
					local key = ARGV[1] .. "{" .. digest .. string.sub(redis.sha1hex(digest), 1, 24) .. "}:record"
					redis.call("HSET", key, "fingerprint", digest, "response", ARGV[4])
					redis.call("PEXPIRE", key, 86400000)
					n = n + 1
				end
				return n'
			local response
			response=$(head -c 1100 /dev/zero | tr '\0' 'r')
			batch=10000
			for ((from = 0; from < RECORDS; from += batch)); do
				to=$((from + batch < RECORDS ? from + batch - 1 : RECORDS - 1))
				rcli EVAL "$script" 0 "$REDIS_PREFIX" "$from" "$to" "$response" >/dev/null
			done
			log "redis: $(rcli --scan --pattern "${REDIS_PREFIX}{*}:record" | wc -l) records under $REDIS_PREFIX"
			;;
		postgres)
			batch=100000
			for ((from = 0; from < RECORDS; from += batch)); do
				to=$((from + batch < RECORDS ? from + batch - 1 : RECORDS - 1))
				psql_ -c "INSERT INTO $IDEMPO_TABLE (storage_key, fingerprint, response, created_at, expires_at)
					SELECT encode(sha256(('record-' || i)::bytea), 'hex'), md5(i::text),
						decode(repeat(md5(i::text), 69), 'hex'), now(), now() + INTERVAL '1 day'
					FROM generate_series($from, $to) AS i"
			done
			psql_ -c "ANALYZE $IDEMPO_TABLE"
			log "postgres: $(psql_ -Atc "SELECT count(*) FROM $IDEMPO_TABLE WHERE expires_at > now()") unexpired rows in $IDEMPO_TABLE"
			;;
		mysql)
			batch=100000
			for ((from = 0; from < RECORDS; from += batch)); do
				to=$((from + batch < RECORDS ? from + batch - 1 : RECORDS - 1))
				mariadb_ -e "INSERT INTO $IDEMPO_TABLE (storage_key, fingerprint, response, created_at, expires_at)
					WITH RECURSIVE n (i) AS (SELECT 0 UNION ALL SELECT i + 1 FROM n WHERE i < 999)
					SELECT SHA2(CONCAT('record-', a.i * 1000 + b.i), 256), MD5(a.i * 1000 + b.i),
						UNHEX(REPEAT(MD5(a.i * 1000 + b.i), 69)), UTC_TIMESTAMP(6), UTC_TIMESTAMP(6) + INTERVAL 1 DAY
					FROM n AS a CROSS JOIN n AS b WHERE a.i * 1000 + b.i BETWEEN $from AND $to
						AND a.i BETWEEN $((from / 1000)) AND $((to / 1000))"
			done
			mariadb_ -e "ANALYZE TABLE $IDEMPO_TABLE" >/dev/null
			log "mysql: $(mariadb_ -e "SELECT count(*) FROM $IDEMPO_TABLE WHERE expires_at > UTC_TIMESTAMP(6)") unexpired rows in $IDEMPO_TABLE"
			;;
	esac
	baseline "$store" records "$RECORDS (unexpired, 1.1 KiB responses)"
}

# ---------------------------------------------------------------------------------------------
# One store

ALL_CASES=(baseline fresh replay nokey conflict pay-plain pay-idem)
# transactional handlers exist only with the SQL stores
SQL_CASES=("${ALL_CASES[@]}" pay-tx)

run_store() {
	local store=$1 round clients case order
	log "=== $store ==="
	case $store in
		postgres | mysql) CASES=("${SQL_CASES[@]}") ;;
		*) CASES=("${ALL_CASES[@]}") ;;
	esac
	if [ "$STACK" = webflux ] && [ "${CASES[*]}" != "${ALL_CASES[*]}" ]; then
		# WebFlux handlers cannot be transactional: idempo fails such an application at start-up
		[[ -z $ONLY_CASES || ",$ONLY_CASES," = *",pay-tx,"* ]] \
			&& log "$store: skipping pay-tx with --stack webflux (a WebFlux handler cannot be transactional)"
		CASES=("${ALL_CASES[@]}")
	fi
	if [ -n "$ONLY_CASES" ]; then
		local wanted=() c
		for c in "${CASES[@]}"; do
			[[ $c = baseline || ",$ONLY_CASES," = *",$c,"* ]] && wanted+=("$c")
		done
		CASES=("${wanted[@]}")
	fi
	case $store in
		redis) redis_baselines ;;
		postgres) postgres_baselines ;;
		mysql) mysql_baselines ;;
		memory) baseline memory version "in-process (one JVM)" ;;
	esac
	case $store in
		memory | redis) baseline "$store" app_db "PostgreSQL $(psql_ -Atc 'SHOW server_version')" ;;
		postgres) baseline "$store" app_db "the same PostgreSQL" ;;
		mysql) baseline "$store" app_db "the same MariaDB/MySQL" ;;
	esac
	case $store in
		memory | redis | postgres) CLEANUPS+=("psql_ -c 'DROP TABLE IF EXISTS $PAYMENT_TABLE'") ;;
		mysql) CLEANUPS+=("mariadb_ -e 'DROP TABLE IF EXISTS $PAYMENT_TABLE'") ;;
	esac
	case $store in
		redis) CLEANUPS+=(cleanup_redis_keys) ;;
		postgres) CLEANUPS+=("psql_ -c 'DROP TABLE IF EXISTS $IDEMPO_TABLE'") ;;
		mysql) CLEANUPS+=("mariadb_ -e 'DROP TABLE IF EXISTS $IDEMPO_TABLE'") ;;
	esac

	start_app "$store"
	log "$store: application on port $APP_PORT (pid $APP_PID)"
	check_stack "$store"
	if [ "$RECORDS" -gt 0 ]; then
		if [ "$store" = memory ]; then log "memory: --records does not apply"; else populate "$store"; fi
	fi
	warm_up "$store"
	for ((round = 1; round <= ROUNDS; round++)); do
		# interleaved: every case once per round and client count, the order reversed every other round
		order=("${CASES[@]}")
		if ((round % 2 == 0)); then
			order=()
			for ((i = ${#CASES[@]} - 1; i >= 0; i--)); do order+=("${CASES[i]}"); done
		fi
		for clients in "${CLIENTS[@]}"; do
			for case in "${order[@]}"; do
				measure "$store" "$round" "$case" "$clients"
			done
		done
	done
	log "$store: $(control GET /bench/counters | awk -F= '$1 ~ /^store\.failed\./ { s += $2 } END { print s + 0 }') failed store operations in all"
	run_cleanups
}

# ---------------------------------------------------------------------------------------------
# Main

log "building idempo-benchmark"
(cd "$ROOT" && ./mvnw -q -B -Pbenchmark -pl idempo-benchmark -am package -DskipTests) || die "the build failed"
JAR=$(ls "$ROOT"/idempo-benchmark/target/idempo-benchmark-*.jar 2>/dev/null | grep -v original | head -n 1)
[ -f "$JAR" ] || die "no idempo-benchmark jar in idempo-benchmark/target"

info() { printf '%s\t%s\n' "$1" "$2" >>"$INFO"; }
info date "$(date -u '+%Y-%m-%d %H:%M UTC')"
if [ "$STACK" = webflux ]; then
	info stack "Spring WebFlux on Reactor Netty (idempo's IdempotencyWebFilter; the blocking handlers, /pay-* and /slow-idem, on a 64-thread executor)"
else
	info stack "Spring MVC on Tomcat"
fi
info machine "$(nproc) CPUs, $(awk -F': ' '/^model name/ { print $2; exit }' /proc/cpuinfo), $(awk '/^MemTotal/ { printf "%.1f GiB", $2 / 1048576 }' /proc/meminfo) memory, $(uname -sr)"
info JDK "$(java -version 2>&1 | sed -n 2p) $(printf '%s' "${JAVA_OPTS[*]}")"
info wrk "$(wrk -v 2>&1 | head -n 1 | awk '{ print $1, $2 }')"
info settings "stores $(IFS=,; echo "${SELECTED[*]}"), $DURATION s per load run, $ROUNDS round(s), warm-up $WARMUP s of mixed load then up to $WARMUP_MAX s more until the JIT is quiet, clients $(IFS=,; echo "${CLIENTS[*]}") (1 = wrk -t1 -c1, 32 = wrk -t2 -c32), replay over $REPLAY_KEYS keys, observations $OBSERVATIONS, local cache $LOCAL_CACHE, Redis client $REDIS_CLIENT$([ "$RECORDS" -gt 0 ] && echo ", $RECORDS pre-populated records")$([ "$SMOKE" = 1 ] && echo ", smoke run")"
info run "$RUN_ID (raw data: $(realpath --relative-to="$ROOT" "$WORK" 2>/dev/null || echo "$WORK"))"

for store in "${SELECTED[@]}"; do
	run_store "$store"
done

awk -v md="$OUT/$NAME.md" -v csv="$OUT/$NAME.csv" -f "$BENCH/report.awk" "$INFO" "$BASELINES" "$RAW"
log "written: $OUT/$NAME.md, $OUT/$NAME.csv"
if awk -F'\t' '$17 != "-" { found = 1 } END { exit !found }' "$RAW"; then
	log "FAILED: at least one check failed (see the checks column)"
	exit 1
fi
