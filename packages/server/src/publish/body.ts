/**
 * A publish request's body: `{"updates": [{"label": "alice", "value": "key-1"}, {"labelHex":
 * "00ff", "valueHex": "a1b2"}]}`, the same shape as `akd publish`'s update file. Read and
 * checked by whoever publishes (the writer), never by a thread that answers proof requests:
 * a 100,000-update body takes seconds to parse and check.
 */

import { AkdError } from '@akd-ts/core';
import type { Update } from '@akd-ts/directory';
import { HttpError } from '../errors.js';
import { parseBytesField } from '../params.js';

/** The limits a publish body is checked against. */
export interface PublishBodyLimits {
  maxPublishUpdates: number;
  maxLabelBytes: number;
  maxValueBytes: number;
}

/**
 * The updates of a parsed JSON body, each label and value within the limits.
 *
 * @throws HttpError `HTTP_BAD_REQUEST` for a malformed body or update; AkdError
 * `DIRECTORY_LIMIT` naming the update for too many updates or a label or value too long.
 * @example parseUpdates({ updates: [{ label: 'alice', value: 'k1' }] }, DEFAULT_SERVER_LIMITS)
 */
export function parseUpdates(body: unknown, limits: PublishBodyLimits): Update[] {
  const list = (body as { updates?: unknown } | null)?.updates;
  if (body === null || typeof body !== 'object' || !Array.isArray(list)) {
    throw new HttpError(
      'HTTP_BAD_REQUEST',
      'expected a JSON body {"updates": [{"label": ..., "value": ...}, ...]}',
    );
  }
  if (list.length > limits.maxPublishUpdates) {
    throw new AkdError(
      'DIRECTORY_LIMIT',
      `updates: at most ${limits.maxPublishUpdates} in one request, got ${list.length}`,
      { field: 'updates' },
    );
  }
  return list.map((item: unknown, i) => {
    const where = `updates[${i}]`;
    if (item === null || typeof item !== 'object' || Array.isArray(item)) {
      throw new HttpError(
        'HTTP_BAD_REQUEST',
        `${where}: expected an object with a label and a value`,
      );
    }
    const record = item as Record<string, unknown>;
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
