/**
 * A publish request's body: `{"updates": [{"label": "alice", "value": "key-1"}, {"labelHex":
 * "00ff", "valueHex": "a1b2"}]}`, the same shape as `akd publish`'s update file. Read and
 * checked by whoever publishes (the writer), never by a thread that answers proof requests:
 * a 100,000-update body takes seconds to parse and check.
 */

import { AkdError } from '@akd-ts/core';
import type { Update } from '@akd-ts/directory';
import { parseBytesField } from '../params.js';

/** The limits a publish body is checked against. */
export interface PublishBodyLimits {
  maxPublishUpdates: number;
  maxLabelBytes: number;
  maxValueBytes: number;
}

/** A publish body, as its schema (schemas/routes.ts) admits it. */
export interface PublishBody {
  updates: { label?: string; labelHex?: string; value?: string; valueHex?: string }[];
}

/**
 * The updates of a body the route's schema admitted (a list of at most maxPublishUpdates
 * objects whose fields are strings, hex where hex), each label and value within the limits.
 *
 * @throws HttpError `HTTP_BAD_REQUEST` for an update without its label or value, or with
 * both forms of one; AkdError `DIRECTORY_LIMIT` naming the update for a label or value too
 * long.
 * @example parseUpdates({ updates: [{ label: 'alice', value: 'k1' }] }, DEFAULT_SERVER_LIMITS)
 */
export function parseUpdates(body: PublishBody, limits: PublishBodyLimits): Update[] {
  return body.updates.map((record, i) => {
    const where = `updates[${i}]`;
    const update = {
      label: parseBytesField(record, 'label', where),
      value: parseBytesField(record, 'value', where),
    };
    // the directory checks these too; checking here names the update
    if (update.label.length === 0 || update.label.length > limits.maxLabelBytes) {
      throw new AkdError(
        'DIRECTORY_LIMIT',
        `${where}: a label has 1 to ${limits.maxLabelBytes} bytes, not ${update.label.length}`,
        { field: `${where}.label` },
      );
    }
    if (update.value.length > limits.maxValueBytes) {
      throw new AkdError(
        'DIRECTORY_LIMIT',
        `${where}: a value has at most ${limits.maxValueBytes} bytes, not ${update.value.length}`,
        { field: `${where}.value` },
      );
    }
    return update;
  });
}
