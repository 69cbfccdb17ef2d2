/**
 * Process-wide capabilities of the API server, as kube's `pkg/capabilities` holds them: set once
 * from the command line at start-up (`--allow-privileged`) and read by validation, which has no
 * other way to see the server's flags (kube reads `capabilities.Get().AllowPrivileged` in
 * ValidateSecurityContext and for Windows host-process containers).
 */

/** What the server's flags allow every object to ask for. */
export interface Capabilities {
  /** `--allow-privileged`: containers may run privileged (kube's default: false). */
  readonly allowPrivileged: boolean;
}

let current: Capabilities = { allowPrivileged: false };

/** Sets the capabilities (kube's capabilities.Setup); the server calls it before serving. */
export function setCapabilities(c: Capabilities): void {
  current = { ...c };
}

/** The capabilities in force (kube's capabilities.Get). */
export function capabilities(): Capabilities {
  return current;
}
