# rankstream: see README.md.
#
#   make run    the whole pipeline on embedded defaults (kfake, miniredis) with demo traffic
#   make test   install and start the real servers (Kafka, Redis, ClickHouse on
#               127.0.0.1), run every test against them and kfake, stop them
#   make bench  the benchmarks, on the same servers
#   make bench-peers  rankstream against its Kafka Streams peers (steps, hot search), on the same servers
#   make lint   gofmt, go vet, the words check (deploy/local/lint-words.sh), staticcheck, govulncheck
#   make screenshots  the pages' screenshots in docs/screenshots/, from their browser test

SHELL := /bin/bash
GO    ?= go
PKGS  ?= ./...
# The Go release every target builds with (go.mod's toolchain line, which a GOTOOLCHAIN=local
# environment ignores): the go command fetches it from the module proxy once. 1.26.10 carries the standard library's security fixes that
# 1.26.8 lacks (crypto/x509, crypto/tls, net/http, net/textproto, os: govulncheck).
export GOTOOLCHAIN := go1.26.10
# govulncheck's database: the advisories of golang.org/x/vulndb at this version, indexed once
# into VULNDB (the advisories are a module like any other; vuln.go.dev need not be reachable).
VULNDB_VERSION ?= v0.0.0-20261105234957-e22db6528018
VULNDB         ?= $(HOME)/.cache/rankstream/vulndb-$(VULNDB_VERSION)

# Starts the servers, exports RANKSTREAM_TEST_*, runs the command, always stops them.
WITH_SERVERS := deploy/local/with-servers.sh
# With it, a test whose server is missing fails instead of skipping.
REQUIRE      := RANKSTREAM_REQUIRE_SERVERS=1

.PHONY: run test bench bench-peers lint fuzz servers-start servers-stop screenshots

run:
	$(GO) run ./cmd/rankstream dev

test:
	$(WITH_SERVERS) env $(REQUIRE) $(GO) test -race -count=1 -timeout 25m $(PKGS)

# Benchmarks: the steps slice on the real broker and redis-server (reports/s, raw franz-go
# consume rate, ratio, goka no-op ceiling), score updates through the scores slice (updates/s
# beside the raw consume rate and the steps slice of the same run), the write gateway (accepted requests/s and p50/p99
# at a fixed rate beside the raw franz-go produce rate; the 10k simultaneous reports), the hot-search path on the real broker, Redis and
# ClickHouse (queries/s, raw consume rate, ratio, CPU per query; and, live, the snapshot
# freshness p50/p99), friends boards through serve (p50/p99 at a fixed rate, vegeta, beside the
# raw Redis cost), the sketch against its Go peers on the same streams, and the sinks and
# decoders. benchstat prints the medians of BENCH_COUNT runs; the freshness benchmark measures
# 90 s of live traffic per run, so it runs BENCH_FRESHNESS_COUNT times. The read path through
# `rankstream serve` on 1M-member boards beside the same Redis commands sent directly (closed
# loop req/s and ratio; open-model p50/p99 at half the raw rate and at 5k req/s) builds its
# boards and measures about 3 minutes per run, so it runs BENCH_READ_COUNT times.
BENCH_COUNT           ?= 5
BENCH_FRESHNESS_COUNT ?= 1
BENCH_READ_COUNT      ?= 1
BENCH_OUT             ?= bench.txt
bench:
	$(WITH_SERVERS) env $(REQUIRE) bash -c 'set -o pipefail; { \
	  $(GO) test -run "^$$" -bench "SliceThroughput|MidnightSurge" -benchtime 1x -count $(BENCH_COUNT) ./internal/e2e/steps/ && \
	  $(GO) test -run "^$$" -bench ScoreThroughput -benchtime 1x -count $(BENCH_COUNT) -timeout 60m ./internal/e2e/scores/ && \
	  $(GO) test -run "^$$" -bench "GatewayRate|TenThousandReports" -benchtime 1x -count $(BENCH_COUNT) ./internal/e2e/gateway/ && \
	  $(GO) test -run "^$$" -bench HotThroughput -benchtime 1x -count $(BENCH_COUNT) ./internal/e2e/hot/ && \
	  $(GO) test -run "^$$" -bench HotFreshness -benchtime 1x -count $(BENCH_FRESHNESS_COUNT) ./internal/e2e/hot/ && \
	  $(GO) test -run "^$$" -bench ReadPath -benchtime 1x -count $(BENCH_READ_COUNT) -timeout 30m ./internal/e2e/serve/ && \
	  $(GO) test -run "^$$" -bench FriendsBoard -benchtime 1x -count $(BENCH_COUNT) ./internal/e2e/friends/ && \
	  $(GO) test -run "^$$" -bench . -benchmem -count $(BENCH_COUNT) ./sketch/ ./sinks/... ./topics/ ./internal/service/api/ ; \
	} | tee $(BENCH_OUT)'
	$(GO) tool benchstat $(BENCH_OUT)

# rankstream against its Kafka Streams peers (internal/e2e/peers, see its README.md): builds the
# peers' jars with Maven (offline when the local repository already holds every dependency, else
# from Maven Central), runs their tests (they decode and validate like ours; the steps peer
# commits only after Redis acknowledged), then, on the same pre-produced inputs, the steps job of
# both (fails unless their Redis contents are identical; records/s, CPU µs/record, peak RSS and
# redis-server CPU µs/record) and the hot-search job of both (fails unless every window's proven
# Top-K is the same; queries/s, CPU µs/query, peak RSS), BENCH_PEERS_COUNT runs each (medians),
# and once the steps peer's heap sweep (records/s and peak RSS per -Xmx of RANKSTREAM_PEERS_XMX,
# 500k reports each: the smallest heap keeping 95% of -Xmx1g's throughput).
BENCH_PEERS_COUNT ?= 3
BENCH_PEERS_OUT   ?= internal/e2e/peers/bench.txt
PEERS             := internal/e2e/peers
bench-peers:
	for p in kstreams-steps kstreams-hot; do \
	  (cd $(PEERS)/$$p && { mvn -q -B -o package >/dev/null 2>&1 || mvn -q -B package; }) || exit 1; \
	done
	$(WITH_SERVERS) env $(REQUIRE) bash -c 'set -o pipefail; \
	  $(GO) test -tags peers -count=1 -run "^Test(Steps|Hot)Peer" -timeout 10m ./$(PEERS)/ && { \
	  $(GO) test -tags peers -run "^$$" -bench "StepsPeers|HotPeers" -benchtime 1x -count $(BENCH_PEERS_COUNT) -timeout 60m ./$(PEERS)/ && \
	  $(GO) test -tags peers -run "^$$" -bench StepsPeerHeap -benchtime 1x -count 1 -timeout 30m ./$(PEERS)/ ; \
	  } | tee $(BENCH_PEERS_OUT)'
	$(GO) tool benchstat $(BENCH_PEERS_OUT)

# The screenshots of the pages in docs/screenshots/ (README, docs/pages.md), taken by their browser
# test (headless Chromium against rankstream dev with demo traffic, and serve --history).
screenshots:
	$(WITH_SERVERS) env $(REQUIRE) RANKSTREAM_SCREENSHOTS=$(CURDIR)/docs/screenshots \
	  $(GO) test -count=1 -run '^TestPages$$' -timeout 10m ./internal/e2e/web/

lint:
	@files=$$(find . -name '*.go' -not -path './.*' -not -path '*/testdata/*'); \
	unformatted=$$(gofmt -l $$files); \
	if [ -n "$$unformatted" ]; then echo "gofmt needed:"; echo "$$unformatted"; exit 1; fi
	$(GO) vet $(PKGS)
	deploy/local/lint-words.sh
	$(GO) run honnef.co/go/tools/cmd/staticcheck@v0.8.2 $(PKGS)
	@if [ ! -f $(VULNDB)/index/db.json ]; then \
	  echo "govulncheck: indexing the advisories of golang.org/x/vulndb@$(VULNDB_VERSION) into $(VULNDB)"; \
	  rm -rf $(VULNDB).tmp && \
	  $(GO) run golang.org/x/vulndb/cmd/indexdb@$(VULNDB_VERSION) \
	    -vulns $$($(GO) env GOMODCACHE)/golang.org/x/vulndb@$(VULNDB_VERSION)/data/osv -out $(VULNDB).tmp && \
	  mv $(VULNDB).tmp $(VULNDB); fi
	$(GO) run golang.org/x/vuln/cmd/govulncheck@v1.9.0 -db file://$(VULNDB) $(PKGS)

# Each fuzz target for a fixed number of executions (a -fuzztime in seconds can end in a
# spurious "context deadline exceeded" on Go 1.26, golang/go#75804).
FUZZ_EXECS ?= 500000x
fuzz:
	$(GO) test -run '^$$' -fuzz '^FuzzUnmarshalBinary$$' -fuzztime $(FUZZ_EXECS) ./sketch/
	$(GO) test -run '^$$' -fuzz '^FuzzStateUnmarshalBinary$$' -fuzztime $(FUZZ_EXECS) ./processors/steps/
	$(GO) test -run '^$$' -fuzz '^FuzzDecodeReusesRoom$$' -fuzztime $(FUZZ_EXECS) ./processors/steps/
	$(GO) test -run '^$$' -fuzz '^FuzzStateUnmarshalBinary$$' -fuzztime $(FUZZ_EXECS) ./processors/scores/
	$(GO) test -run '^$$' -fuzz '^FuzzStateUnmarshalBinary$$' -fuzztime $(FUZZ_EXECS) ./processors/friends/
	$(GO) test -run '^$$' -fuzz '^FuzzStepReportJSONMatchesStdlib$$' -fuzztime $(FUZZ_EXECS) ./topics/
	$(GO) test -run '^$$' -fuzz '^FuzzNormalize$$' -fuzztime $(FUZZ_EXECS) ./topics/
	$(GO) test -run '^$$' -fuzz '^FuzzDecodeStepReport$$' -fuzztime $(FUZZ_EXECS) ./topics/
	$(GO) test -run '^$$' -fuzz '^FuzzStepReportScanMatchesDecoder$$' -fuzztime $(FUZZ_EXECS) ./topics/
	$(GO) test -run '^$$' -fuzz '^FuzzDecodeSearchQuery$$' -fuzztime $(FUZZ_EXECS) ./topics/
	$(GO) test -run '^$$' -fuzz '^FuzzSearchQueryScanMatchesDecoder$$' -fuzztime $(FUZZ_EXECS) ./topics/
	$(GO) test -run '^$$' -fuzz '^FuzzSmallIntMatchesParseInt$$' -fuzztime $(FUZZ_EXECS) ./topics/
	$(GO) test -run '^$$' -fuzz '^FuzzDecodeScoreOp$$' -fuzztime $(FUZZ_EXECS) ./topics/
	$(GO) test -run '^$$' -fuzz '^FuzzDeadLetter$$' -fuzztime $(FUZZ_EXECS) ./topics/
	$(GO) test -run '^$$' -fuzz '^FuzzTimestamp$$' -fuzztime $(FUZZ_EXECS) ./topics/
	$(GO) test -run '^$$' -fuzz '^FuzzTopKSnapshotJSON$$' -fuzztime $(FUZZ_EXECS) ./topics/
	$(GO) test -run '^$$' -fuzz '^FuzzDecodeCheckpoint$$' -fuzztime $(FUZZ_EXECS) ./topics/
	$(GO) test -run '^$$' -fuzz '^FuzzParseBoardQuery$$' -fuzztime $(FUZZ_EXECS) ./internal/service/api/
	$(GO) test -run '^$$' -fuzz '^FuzzParseMemberQuery$$' -fuzztime $(FUZZ_EXECS) ./internal/service/api/
	$(GO) test -run '^$$' -fuzz '^FuzzParseHotQuery$$' -fuzztime $(FUZZ_EXECS) ./internal/service/api/
	$(GO) test -run '^$$' -fuzz '^FuzzParseScoreBoardQuery$$' -fuzztime $(FUZZ_EXECS) ./internal/service/api/
	$(GO) test -run '^$$' -fuzz '^FuzzParseScoreMemberQuery$$' -fuzztime $(FUZZ_EXECS) ./internal/service/api/
	$(GO) test -run '^$$' -fuzz '^FuzzParseParamsAsNetURL$$' -fuzztime $(FUZZ_EXECS) ./internal/service/api/
	$(GO) test -run '^$$' -fuzz '^FuzzDecodeLoopRecord$$' -fuzztime $(FUZZ_EXECS) ./topics/
	$(GO) test -run '^$$' -fuzz '^FuzzMergeCodecs$$' -fuzztime $(FUZZ_EXECS) ./processors/hot/merge/

# For working by hand: start the servers, then `. <(deploy/local/servers.sh env)`.
servers-start:
	deploy/local/servers.sh start

servers-stop:
	deploy/local/servers.sh stop

# The heavy-hitters sketch against exact sliding-window counts (see sketch/ACCURACY.md).
.PHONY: accuracy
accuracy:
	RANKSTREAM_ACCURACY=1 $(GO) test -run '^TestAccuracy$$' -count=1 -v -timeout 30m ./sketch/
