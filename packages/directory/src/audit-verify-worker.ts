/**
 * Worker-thread side of the audit verifier (audit-verifier.ts): verifies one blob with core's
 * pure per-blob step. Errors come back as data, so an AkdError keeps its code and field.
 */

import { verifyAuditBlob, type VerifiedAuditBlob, type VerifyAuditBlobOptions } from '@akd-ts/core';
import type { AuditBlobName } from '@akd-ts/core';
import { configOf, type ConfigDescription } from './worker-config.js';
import { taskError, type TaskError } from './tree/arena/tasks.js';

export interface AuditVerifyTask {
  config: ConfigDescription;
  name: AuditBlobName;
  data: Uint8Array;
  options: VerifyAuditBlobOptions;
}

/** Verifies one blob (piscina calls the default export). */
export default function run(task: AuditVerifyTask): VerifiedAuditBlob | { error: TaskError } {
  try {
    return verifyAuditBlob(
      configOf(task.config),
      { name: task.name, data: task.data },
      task.options,
    );
  } catch (e) {
    return { error: taskError(e) };
  }
}

/** Answers the pool's start-up probe (worker-pool.ts): this module and its imports loaded. */
export function probe(): true {
  return true;
}
