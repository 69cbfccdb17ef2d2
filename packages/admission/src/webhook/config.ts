/**
 * The webhooks of the stored Mutating/ValidatingWebhookConfigurations, in kube's call order:
 * configurations sorted by name, webhooks in their listed order (kube's
 * {mutating,validating}WebhookConfigurationManager and its ByName sorters).
 */
import { isPlainObject, type StoredObject } from '@plinth/api';

/** One webhook of a configuration, defaulted as stored (kube's WebhookAccessor). */
export interface Webhook {
  /** Unique per configuration and position (kube's accessor UID): `<configuration>/<webhook>/<index>`. */
  uid: string;
  configurationName: string;
  name: string;
  clientConfig: { url?: string; service?: { namespace: string; name: string; path?: string; port?: number }; caBundle?: string };
  rules: Array<Record<string, unknown>>;
  failurePolicy: string;
  matchPolicy: string;
  namespaceSelector: unknown;
  objectSelector: unknown;
  sideEffects: string | undefined;
  timeoutSeconds: number;
  admissionReviewVersions: string[];
  reinvocationPolicy: string;
}

/** Lists every stored configuration of one kind, from the watch cache (never a per-request etcd read). */
export type ConfigurationLister = () => Promise<StoredObject[]>;

function str(v: unknown, fallback = ''): string {
  return typeof v === 'string' ? v : fallback;
}

/** The webhooks of `configurations`, in call order. */
export function webhooksOf(configurations: StoredObject[]): Webhook[] {
  const sorted = [...configurations].sort((a, b) => {
    const x = a.metadata.name ?? '';
    const y = b.metadata.name ?? '';
    return x < y ? -1 : x > y ? 1 : 0;
  });
  const out: Webhook[] = [];
  for (const c of sorted) {
    const configurationName = c.metadata.name ?? '';
    const hooks = Array.isArray(c['webhooks']) ? c['webhooks'] : [];
    hooks.forEach((h: unknown, i: number) => {
      if (!isPlainObject(h)) return;
      const cc = isPlainObject(h['clientConfig']) ? h['clientConfig'] : {};
      const service = isPlainObject(cc['service']) ? cc['service'] : undefined;
      const name = str(h['name']);
      out.push({
        uid: `${configurationName}/${name}/${i}`,
        configurationName,
        name,
        clientConfig: {
          ...(typeof cc['url'] === 'string' ? { url: cc['url'] } : {}),
          ...(service
            ? {
                service: {
                  namespace: str(service['namespace']),
                  name: str(service['name']),
                  ...(typeof service['path'] === 'string' ? { path: service['path'] } : {}),
                  ...(typeof service['port'] === 'number' ? { port: service['port'] } : {}),
                },
              }
            : {}),
          ...(typeof cc['caBundle'] === 'string' && cc['caBundle'] !== '' ? { caBundle: cc['caBundle'] } : {}),
        },
        rules: Array.isArray(h['rules']) ? h['rules'].filter(isPlainObject) : [],
        failurePolicy: str(h['failurePolicy'], 'Fail'),
        matchPolicy: str(h['matchPolicy'], 'Equivalent'),
        namespaceSelector: h['namespaceSelector'],
        objectSelector: h['objectSelector'],
        sideEffects: typeof h['sideEffects'] === 'string' ? h['sideEffects'] : undefined,
        timeoutSeconds: typeof h['timeoutSeconds'] === 'number' ? h['timeoutSeconds'] : 10,
        admissionReviewVersions: Array.isArray(h['admissionReviewVersions']) ? h['admissionReviewVersions'].filter((v): v is string => typeof v === 'string') : [],
        reinvocationPolicy: str(h['reinvocationPolicy'], 'Never'),
      });
    });
  }
  return out;
}
