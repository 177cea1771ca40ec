/**
 * The demo directory's contents (`akd serve --demo`, the load benchmark): a few epochs of
 * sample users whose keys rotate, so lookups, histories and audits all have something to
 * show. Values look like public keys (`ed25519:<64 hex>`), derived from the user and version
 * so every demo directory holds the same data.
 */

import { createHash } from 'node:crypto';
import { utf8 } from '@akd-ts/core';
import type { Update } from '@akd-ts/directory';

/** A sample key value: `ed25519:` and 32 bytes derived from the user and version. */
export function demoKey(user: string, version: number): string {
  return `ed25519:${createHash('sha256').update(`akd-ts demo ${user} v${version}`).digest('hex')}`;
}

const update = (user: string, version: number): Update => ({
  label: utf8(user),
  value: utf8(demoKey(user, version)),
});

/** The demo's people, who rotate keys; `extraUsers` more fill the tree out. */
export const DEMO_PEOPLE = ['alice', 'bob', 'carol', 'dave', 'erin', 'frank', 'grace'] as const;

/**
 * The demo's epochs, oldest first: epoch 1 brings alice to erin and `extraUsers` numbered
 * users (user-001@example.com, ...), epoch 2 rotates alice's key and adds frank, epoch 3
 * rotates bob's and carol's and adds grace.
 *
 * @example for (const updates of demoEpochs()) await directory.publish(updates);
 */
export function demoEpochs(extraUsers = 50): Update[][] {
  const numbered = Array.from({ length: extraUsers }, (_, i) =>
    update(`user-${String(i + 1).padStart(3, '0')}@example.com`, 1),
  );
  return [
    [...['alice', 'bob', 'carol', 'dave', 'erin'].map((u) => update(u, 1)), ...numbered],
    [update('alice', 2), update('frank', 1)],
    [update('bob', 2), update('carol', 2), update('grace', 1)],
  ];
}
