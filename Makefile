# AsyncWebRL. The README's two commands are `make run` and `make test`.
SHELL := /bin/bash
RUN_DIR ?= $(CURDIR)/.run
export ASYNCWEBRL_RUN_DIR := $(RUN_DIR)
export ASYNCWEBRL_ONNXRUNTIME_LIB ?= $(RUN_DIR)/lib/libonnxruntime.so.1
# Loopback ports of the local services (infra/lib.sh reads the same names);
# override them to run a second stack beside the first.
export KAFKA_PORT ?= 19092
export KAFKA_CONTROLLER_PORT ?= 19093
export CLICKHOUSE_TCP_PORT ?= 19000
export CLICKHOUSE_HTTP_PORT ?= 18123
# `make up KAFKA_NODES=3`: a local three-broker cluster (infra/kafka.sh; node i
# on KAFKA_PORT+2(i-1)). The run dir remembers the node count, so later make
# commands (status, down, run, test) find every node without it; empty means
# that count, or one node on a fresh run dir. The topic catalog reads the
# broker count from the cluster: replication 3 and min.insync.replicas 2 on
# three brokers, 1 and 1 on one.
export KAFKA_NODES ?=
export ASYNCWEBRL_BROKERS ?= $(shell KAFKA_NODES=$(KAFKA_NODES) KAFKA_PORT=$(KAFKA_PORT) infra/kafka.sh brokers)
export ASYNCWEBRL_CLICKHOUSE_ADDR ?= 127.0.0.1:$(CLICKHOUSE_TCP_PORT)
BIN := bin/asyncwebrl
# Packages whose code is concurrent (goroutines, locks, channels) run their
# unit tests under the race detector too (the integration tests ran once
# above). Listed one by one: each race test binary links libtorch and ONNX
# Runtime, and the packages of pure functions (action, catalog,
# config, frame, the CLI's flag parsing...) bought none of it.
RACE_PKGS := ./services/internal/admin ./services/internal/app ./services/internal/kafka ./topics/... ./services/joiner/... \
	./loadtest/... ./services/policy/... ./services/recorder/... ./services/webenv ./services/webenv/env ./services/reporter \
	./services/cmd/asyncwebrl/bench ./services/cmd/asyncwebrl/drill ./infra/netlab

.PHONY: run setup gotch buf up down lm-server status build test test-unit test-integration test-python bench lint fmt clean help

help: ## list targets
	@grep -hE '^[a-z-]+:.*## ' $(MAKEFILE_LIST) | awk -F':.*## ' '{printf "  %-18s %s\n", $$1, $$2}'

# The main job trains from random init on fresh topics (a prefix per run),
# so no earlier run's weights or tasks leak in; DURATION and ARGS override.
DURATION ?= 20m
EXECUTORS ?= 8
# EVAL_EPISODES per family: the held-out evaluation of the final policy
# (and of the random-init one on the same seeds) after training; 0 skips it.
# It gets ARGS too, so that it evaluates the run's suite (-suite) and tiers
# (-max-tier).
EVAL_EPISODES ?= 10
ifndef RUN_ID
RUN_ID := $(shell date -u +%Y%m%d-%H%M%S)
endif
run: setup up build ## install what is missing, start Kafka and ClickHouse, train end to end for DURATION (20m), evaluate on held-out sites, write the reports
	$(BIN) -target=all -run-dir=$(RUN_DIR) -topic-prefix=run-$(RUN_ID). -duration=$(DURATION) -executors=$(EXECUTORS) $(ARGS)
	@if [ "$(EVAL_EPISODES)" != 0 ]; then \
	  $(BIN) replay eval -run-dir=$(RUN_DIR) -topic-prefix=run-$(RUN_ID). -executors=$(EXECUTORS) --episodes $(EVAL_EPISODES) --random $(ARGS); fi

setup: ## idempotent install: apt packages, Kafka jars, ONNX Runtime, gotch patch, Go modules, protoc-gen-go and buf, MiniWoB++ pages, the Python venv, SmolLM2 and llama-server
	infra/setup.sh

# go.mod replaces gotch with .run/gotch (patched for Debian's libtorch), so
# nothing that loads the module graph works before this step has run once.
gotch: ## the patched gotch copy go.mod's replace points at (part of setup)
	infra/setup.sh gotch

buf: ## the pinned schema linter in the run dir's bin/ (part of setup; lint runs the step first)
	infra/setup.sh buf

up: ## start the local Kafka broker (KAFKA_NODES=3: a three-broker cluster) and ClickHouse server
	infra/up.sh

down: ## stop them (and the language-model server, when it runs)
	infra/down.sh

lm-server: ## start llama.cpp's OpenAI-compatible server with SmolLM2-135M on 127.0.0.1:18090, for -policy-backend=openai
	infra/setup.sh lm
	infra/lm-server.sh start

status: ## show whether they run, every Kafka node
	infra/kafka.sh status; infra/clickhouse.sh status

# -buildvcs=auto: the binary carries its commit (bench train --record writes it
# down) even where the environment's GOFLAGS say -buildvcs=false, as on the
# development machine; auto leaves it out where there is no git.
build: gotch ## build bin/asyncwebrl
	go build -buildvcs=auto -o $(BIN) ./services/cmd/asyncwebrl

test: setup up ## every test: unit, race, integration against the real Kafka, ClickHouse and Chromium
	go vet ./...
	go test -count=1 -timeout 30m ./...
	go test -count=1 -race -skip '^TestIntegration' -timeout 30m $(RACE_PKGS)

test-unit: gotch ## unit tests only (no real services)
	ASYNCWEBRL_SKIP_INTEGRATION=1 go test -count=1 ./...

test-integration: setup up ## integration tests only
	go test -count=1 -run 'TestIntegration' -timeout 30m ./...

# `make test` runs these too (go test ./...); setup installs the venv
# (.run/pyenv) they run, and under CI=true they fail when it is missing.
test-python: setup up ## analytics/python against the real broker: the transitions reader and the ONNX check against Go
	go test -count=1 -run 'TestIntegrationPython|TestGeneratedPython' -v ./services/cmd/asyncwebrl/cli ./schemas/eventspb

bench: setup up ## benchmarks that print their baseline side by side
	go test -run '^$$' -bench . -benchtime 3x ./...

# go mod tidy -diff: go.mod and go.sum say exactly what the code imports
# (direct requirements unmarked); go mod verify: the module cache is as
# downloaded (gotch is patched in .run/gotch, never in the cache).
# The schema: buf lint (STANDARD rules, schemas/buf.yaml) and the breaking
# checks: the golden test that holds every field and enum value of
# events.proto that ever shipped (renumbered, retyped, renamed or removed
# without reservation fails), with the tests that the committed Go and
# Python code is what the .proto files generate (a .proto edit without
# schemas/gen.sh fails there); and buf breaking against the local main
# branch (both .proto files, joinstate.proto too), skipped with a note in a
# clone that has no local main.
SCHEMA_TESTS := TestSchemaCompatible|TestSchemaGoldenCurrent|TestGeneratedMatchesProto|TestGeneratedPythonMatchesProto
# protoc-gen-go too: without it the generated-code tests skip.
lint: gotch ## gofmt, vet, go.mod tidy and verified, compose config, buf lint and the schema breaking checks
	infra/setup.sh protoc buf
	@test -z "$$(gofmt -l $$(git ls-files '*.go'))" || { gofmt -l $$(git ls-files '*.go'); exit 1; }
	go vet ./...
	go mod tidy -diff
	go mod verify
	docker-compose -f compose.yaml config -q
	cd schemas && $(RUN_DIR)/bin/buf lint
	go test -count=1 -run '^($(SCHEMA_TESTS))$$' ./schemas/eventspb/
	@if git rev-parse -q --verify refs/heads/main >/dev/null; then \
	  echo "$(RUN_DIR)/bin/buf breaking schemas --against '.git#branch=main,subdir=schemas'"; \
	  $(RUN_DIR)/bin/buf breaking schemas --against '.git#branch=main,subdir=schemas'; \
	else echo "lint: no local main branch; buf breaking skipped (the golden test above still ran)"; fi

fmt: ## gofmt every file
	gofmt -w $$(git ls-files '*.go')

clean: down ## stop services and delete local state
	rm -rf $(RUN_DIR) bin
