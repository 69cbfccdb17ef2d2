export { ApiserverMetrics, metricsOf, APISERVER_COMPONENT, type MetricsOptions, type WatchSeries } from './apiserver.js';
export { metricsHandler } from './handler.js';
export { etcdRequestObserver, storageObjectsSource, etcdTypeOf, qualifiedResource } from './storage.js';
export { validateShowHiddenMetricsVersion, exposureOf, describe, CURRENT_VERSION, type StabilityLevel } from './stability.js';
export { PROMETHEUS_CONTENT_TYPE } from './registry.js';
export { createPodSecurityMetrics } from './podsecurity.js';
export { createGarbageCollectorMetrics, type GarbageCollectorMetrics } from './garbage-collector.js';
