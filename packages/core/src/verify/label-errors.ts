/**
 * Failures of a label's proof in the words of the person who asked about the label. Deep in
 * a proof, a failure only knows VRF outputs and tree positions; the client knows the label it
 * typed. A VRF proof that fails under the trusted key most often means the proof answers
 * another label, and a path that leads elsewhere means another root: the messages say so,
 * naming the label as text (see describeLabel). Codes and fields are unchanged.
 */

import { AkdError } from '../errors.js';
import { describeLabel } from '../label-text.js';

/**
 * Runs `check`, the verification of a proof about `label`, rewording the failures that a
 * mistaken label or root causes.
 *
 * @example withLabelContext(utf8('bob'), () => lookupChecks(...))
 */
export function withLabelContext<T>(label: Uint8Array, check: () => T): T {
  try {
    return check();
  } catch (e) {
    if (!(e instanceof AkdError)) throw e;
    const named = describeLabel(label);
    const options = { cause: e, ...(e.field === undefined ? {} : { field: e.field }) };
    if (e.code === 'VRF_VERIFY_FAILED') {
      throw new AkdError(
        e.code,
        `the VRF proof does not verify for label ${named} with this public key: most likely ` +
          `the proof is of another label; else the public key is not the directory's`,
        options,
      );
    }
    if (e.code === 'VERIFY_ROOT_MISMATCH') {
      throw new AkdError(
        e.code,
        `the proof of label ${named} does not lead to the trusted root: ${e.message} (the ` +
          `proof is of another epoch or directory, or the root is not the one it was served with)`,
        options,
      );
    }
    throw e;
  }
}
