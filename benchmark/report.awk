# Turns benchmark/run.sh's raw measurements into the Markdown report and the CSV.
# POSIX awk (mawk and gawk). Inputs, in this order:
#   info.tsv       key<TAB>value: the machine and run settings, in display order
#   baselines.tsv  store<TAB>name<TAB>value: the store baselines
#   raw.tsv        one line per load run (see FIELDS below)
# Variables: md=<path of the Markdown output>, csv=<path of the CSV output>.
# The Markdown is also printed to standard output.

BEGIN {
	FS = "\t"
	ncases = split("baseline fresh replay nokey conflict pay-plain pay-idem pay-tx", CASES, " ")
	LABEL["baseline"] = "baseline `POST /plain`"
	LABEL["fresh"] = "fresh key `POST /idem`"
	LABEL["replay"] = "replay `POST /idem`"
	LABEL["nokey"] = "no key `POST /idem`"
	LABEL["conflict"] = "in flight, 409 `POST /slow-idem`"
	LABEL["pay-plain"] = "pay baseline `POST /pay-plain`"
	LABEL["pay-idem"] = "pay fresh key `POST /pay-idem`"
	LABEL["pay-tx"] = "pay fresh key, transactional `POST /pay-tx`"
	split("baseline /plain fresh /idem replay /idem nokey /idem conflict /slow-idem pay-plain /pay-plain pay-idem /pay-idem pay-tx /pay-tx", e, " ")
	for (i = 1; i < 16; i += 2) ENDPOINT[e[i]] = "POST " e[i + 1]
	BASE["fresh"] = "baseline"; BASE["replay"] = "baseline"; BASE["nokey"] = "baseline"
	BASE["conflict"] = "baseline"; BASE["pay-idem"] = "pay-plain"; BASE["pay-tx"] = "pay-plain"
	nstores = 0
	ninfo = 0
}

FILENAME == ARGV[1] {
	ninfo++
	INFOKEY[ninfo] = $1
	INFO[$1] = $2
	next
}

FILENAME == ARGV[2] {
	SB[$1, $2] = $3
	next
}

# FIELDS of raw.tsv:
# 1 store, 2 round, 3 case, 4 clients, 5 requests, 6 duration_us, 7 rps, 8 p50_us, 9 p99_us,
# 10 unexpected, 11 unexpected statuses, 12 socket errors, 13 timeouts, 14 replayed,
# 15 handler executions, 16 failed store operations, 17 problems ("-" if none)
{
	s = $1; r = $2; c = $3; k = $4
	if (!(s in SEEN)) {
		SEEN[s] = 1
		nstores++
		STORES[nstores] = s
	}
	if (!((s, k) in SEENK)) {
		SEENK[s, k] = 1
		NK[s]++
		KS[s, NK[s]] = k
	}
	if (!((s, c, k, r) in RPS)) {
		N[s, c, k]++
		ROUND[s, c, k, N[s, c, k]] = r
	}
	RPS[s, c, k, r] = $7
	P50[s, c, k, r] = $8
	P99[s, c, k, r] = $9
	UNEXP[s, c, k] += $10
	SOCK[s, c, k] += $12 + $13
	FAILED[s, c, k] += $16
	if ($17 != "-") {
		PROBLEMS[s, c, k] = PROBLEMS[s, c, k] ((PROBLEMS[s, c, k] == "") ? "" : "; ") "round " r ": " $17
		NPROBLEMS++
	}
}

function median(list, n,    i, j, v, a) {
	# list: values separated by spaces; n: how many
	split(list, a, " ")
	for (i = 2; i <= n; i++) {
		v = a[i] + 0
		for (j = i - 1; j >= 1 && a[j] + 0 > v; j--) {
			a[j + 1] = a[j]
		}
		a[j + 1] = v
	}
	if (n == 0) {
		return ""
	}
	if (n % 2 == 1) {
		return a[(n + 1) / 2] + 0
	}
	return (a[n / 2] + a[n / 2 + 1]) / 2
}

# the median over rounds of one figure: what = rps, p50, p99, rps_ratio, p50_ratio, p99_ratio, added
function figure(s, c, k, what,    i, r, b, v, list, n) {
	list = ""
	n = 0
	for (i = 1; i <= N[s, c, k]; i++) {
		r = ROUND[s, c, k, i]
		b = BASE[c]
		if (what == "rps") {
			v = RPS[s, c, k, r]
		} else if (what == "p50") {
			v = P50[s, c, k, r]
		} else if (what == "p99") {
			v = P99[s, c, k, r]
		} else {
			if (b == "" || !((s, b, k, r) in RPS)) {
				continue
			}
			if (what == "rps_ratio") {
				if (RPS[s, b, k, r] <= 0) continue
				v = RPS[s, c, k, r] / RPS[s, b, k, r]
			} else if (what == "p50_ratio") {
				if (P50[s, b, k, r] <= 0) continue
				v = P50[s, c, k, r] / P50[s, b, k, r]
			} else if (what == "p99_ratio") {
				if (P99[s, b, k, r] <= 0) continue
				v = P99[s, c, k, r] / P99[s, b, k, r]
			} else if (what == "added") {
				v = P50[s, c, k, r] - P50[s, b, k, r]
			}
		}
		list = list " " v
		n++
	}
	return median(list, n)
}

function thousands(x,    s, neg, out) {
	x = sprintf("%.0f", x)
	neg = (substr(x, 1, 1) == "-")
	s = neg ? substr(x, 2) : x
	out = ""
	while (length(s) > 3) {
		out = "," substr(s, length(s) - 2) out
		s = substr(s, 1, length(s) - 3)
	}
	return (neg ? "-" : "") s out
}

function micros(x) {
	if (x == "") return "—"
	if (x >= 10000) return sprintf("%.1f ms", x / 1000)
	if (x >= 1000) return sprintf("%.2f ms", x / 1000)
	return sprintf("%.0f µs", x)
}

function ratio(x) {
	if (x == "") return ""
	return sprintf(" (%.2f×)", x)
}

function has(s, c, k) {
	return ((s, c, k) in N) && N[s, c, k] > 0
}

function cell(s, c, k, what) {
	if (!has(s, c, k)) return "—"
	if (what == "rps") return thousands(figure(s, c, k, "rps")) ratio(figure(s, c, k, "rps_ratio"))
	return micros(figure(s, c, k, what)) ratio(figure(s, c, k, what "_ratio"))
}

function out(line) {
	print line
	print line > md
}

function csvq(x) {
	if (x ~ /[",]/) {
		gsub(/"/, "\"\"", x)
		return "\"" x "\""
	}
	return x
}

function fmt(x, f) {
	return (x == "") ? "" : sprintf(f, x)
}

function verdict(ok) {
	return ok ? "met" : "**not met**"
}

# the targets of the WebFlux flow (issue 21): memory, fresh key >= 0.90x and replay >= 1.00x of the
# baseline's req/s at 32 clients; Redis, a fresh key at 1 client adds <= 2 round trips + 50 us
function webflux_targets(s, rtt,    fresh, replay, added, limit, line) {
	if (s == "memory" && has(s, "fresh", 32) && has(s, "replay", 32)) {
		fresh = figure(s, "fresh", 32, "rps_ratio")
		replay = figure(s, "replay", 32, "rps_ratio")
		if (fresh == "" || replay == "") return
		line = sprintf("- WebFlux targets, 32 clients: fresh key %.2f× the baseline's req/s (at least 0.90×: %s), replay %.2f× (at least 1.00×: %s)", fresh, verdict(fresh >= 0.9), replay, verdict(replay >= 1.0))
		out(line)
	}
	if (s == "redis" && has(s, "fresh", 1) && rtt > 0) {
		added = figure(s, "fresh", 1, "added")
		limit = 2 * rtt + 50
		line = sprintf("- WebFlux target, 1 client: a fresh key adds %s (at most 2 round trips + 50 µs = %s: %s)", micros(added), micros(limit), verdict(added <= limit))
		out(line)
	}
}

END {
	out("# idempo benchmark" ((INFO["stack"] ~ /^Spring WebFlux/) ? ", Spring WebFlux" : ""))
	out("")
	for (i = 1; i <= ninfo; i++) {
		out("- " INFOKEY[i] ": " INFO[INFOKEY[i]])
	}
	print "store,case,endpoint,clients,rounds,rps,rps_ratio,p50_us,p50_ratio,p99_us,p99_ratio,added_p50_us,added_p50_round_trips,unexpected_statuses,socket_errors,failed_store_operations,problems" > csv
	for (si = 1; si <= nstores; si++) {
		s = STORES[si]
		rtt = SB[s, "rtt_us"]
		out("")
		out("## " s)
		out("")
		if (SB[s, "app"] != "") out("- application: " SB[s, "app"])
		if (SB[s, "version"] != "") out("- server: " SB[s, "version"] ((SB[s, "durability"] != "") ? " (" SB[s, "durability"] ")" : ""))
		if (rtt != "") out("- round trip: " micros(rtt) " (" SB[s, "rtt_how"] ")")
		if (SB[s, "ceiling1"] != "") out("- write ceiling, 1 client: " thousands(SB[s, "ceiling1"]) "/s (" SB[s, "ceiling_how"] ")")
		if (SB[s, "ceiling32"] != "") out("- write ceiling, 32 clients: " thousands(SB[s, "ceiling32"]) "/s (" SB[s, "ceiling_how"] ")")
		if (SB[s, "ceiling1"] > 0) {
			write1 = 1e6 / SB[s, "ceiling1"]
			line = "- one durable write at 1 client: " micros(write1) " (1 / the write ceiling at 1 client)"
			if (has(s, "fresh", 1)) line = line sprintf("; a fresh key adds %.2f of them", figure(s, "fresh", 1, "added") / write1)
			out(line)
		}
		if (SB[s, "app_db"] != "") out("- application database (pay cases): " SB[s, "app_db"])
		if (SB[s, "warmup"] != "") out("- warm-up: " SB[s, "warmup"] " of mixed load at 32 clients")
		if (SB[s, "records"] != "") out("- pre-populated records: " SB[s, "records"])
		failed = 0
		for (ci = 1; ci <= ncases; ci++) for (ki = 1; ki <= NK[s]; ki++) failed += FAILED[s, CASES[ci], KS[s, ki]]
		out("- failed or timed-out store operations (claim, complete, release, renew) during the load runs: " failed)
		share = ""
		if (SB[s, "ceiling32"] > 0 && has(s, "fresh", 32)) {
			share = figure(s, "fresh", 32, "rps") / SB[s, "ceiling32"]
			out(sprintf("- fresh keys at 32 clients: %s req/s = %.1f %% of the write ceiling", thousands(figure(s, "fresh", 32, "rps")), 100 * share))
		}
		if (INFO["stack"] ~ /^Spring WebFlux/) webflux_targets(s, rtt)
		out("")
		out("| case | req/s, 1 client | req/s, 32 clients | p50, 1 | p99, 1 | p50, 32 | p99, 32 | added p50, 1 | round trips | checks |")
		out("| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | --- |")
		for (ci = 1; ci <= ncases; ci++) {
			c = CASES[ci]
			if (!has(s, c, 1) && !has(s, c, 32)) continue
			added = (BASE[c] != "" && has(s, c, 1)) ? figure(s, c, 1, "added") : ""
			trips = (added != "" && rtt > 0) ? sprintf("%.1f", added / rtt) : ""
			problems = 0
			check = ""
			for (ki = 1; ki <= NK[s]; ki++) {
				k = KS[s, ki]
				if (PROBLEMS[s, c, k] != "") {
					check = check ((check == "") ? "" : "; ") k " clients, " PROBLEMS[s, c, k]
				}
			}
			if (check == "") check = "ok"
			else check = "**FAILED**: " check
			out("| " LABEL[c] " | " cell(s, c, 1, "rps") " | " cell(s, c, 32, "rps") " | " cell(s, c, 1, "p50") " | " cell(s, c, 1, "p99") " | " cell(s, c, 32, "p50") " | " cell(s, c, 32, "p99") " | " ((added == "") ? "" : ((added >= 0) ? "+" : "") thousands(added) " µs") " | " trips " | " check " |")
			for (ki = 1; ki <= NK[s]; ki++) {
				k = KS[s, ki]
				if (!has(s, c, k)) continue
				a = (BASE[c] != "") ? figure(s, c, k, "added") : ""
				t = (a != "" && rtt > 0) ? sprintf("%.2f", a / rtt) : ""
				print s "," c "," ENDPOINT[c] "," k "," N[s, c, k] "," fmt(figure(s, c, k, "rps"), "%.1f") "," fmt(figure(s, c, k, "rps_ratio"), "%.3f") "," fmt(figure(s, c, k, "p50"), "%.0f") "," fmt(figure(s, c, k, "p50_ratio"), "%.3f") "," fmt(figure(s, c, k, "p99"), "%.0f") "," fmt(figure(s, c, k, "p99_ratio"), "%.3f") "," fmt(a, "%.0f") "," t "," UNEXP[s, c, k] + 0 "," SOCK[s, c, k] + 0 "," FAILED[s, c, k] + 0 "," csvq(PROBLEMS[s, c, k]) > csv
			}
		}
		if (rtt != "") print s ",store-round-trip,," SB[s, "rtt_clients"] ",1,,," rtt ",,,,,,,,," > csv
		if (SB[s, "ceiling1"] != "") print s ",store-write-ceiling,,1,1," SB[s, "ceiling1"] ",,,,,,,,,,," > csv
		if (SB[s, "ceiling1"] > 0) print s ",store-write-latency,,1,1,,," sprintf("%.0f", 1e6 / SB[s, "ceiling1"]) ",,,,,,,,," > csv
		if (SB[s, "ceiling32"] != "") print s ",store-write-ceiling,,32,1," SB[s, "ceiling32"] ",,,,,,,,,,," > csv
		if (share != "") print s ",fresh-share-of-write-ceiling,,32,," sprintf("%.1f", figure(s, "fresh", 32, "rps")) "," sprintf("%.4f", share) ",,,,,,,,,," > csv
	}
	out("")
	out("Cells: the median over rounds; in parentheses the median of each round's ratio to its baseline in the same round (`/plain`, or `/pay-plain` for the pay case). Latencies are wrk's. *added p50, 1*: the median over rounds of p50 minus the baseline's p50 at 1 client; *round trips*: that divided by the store's round trip.")
	out("")
	if (NPROBLEMS > 0) {
		out("**" NPROBLEMS " load run(s) failed a check; see the checks column.**")
	} else {
		out("Every check passed: only expected statuses, no socket errors or timeouts, no failed store operations, handler executions as expected.")
	}
}
