import { after, test } from 'node:test';
import assert from 'node:assert/strict';
import {
  AkdError,
  AuditChain,
  ExperimentalConfiguration,
  WhatsAppV1Configuration,
  formatAuditBlobName,
  walkAuditBlobs,
  type AuditBlob,
  type Configuration,
  type WalkOptions,
} from '@akd-ts/core';
import { createAuditBlobVerifier, type AuditBlobVerifier } from '@akd-ts/directory';
import {
  LeafHistory,
  forgedBlob,
  memorySource,
} from '../../core/test/support/audit-blob-history.js';

const keyed = (blobs: AuditBlob[]) =>
  blobs.map((b) => ({ key: formatAuditBlobName(b.name), data: b.data }));

/** What a walk did: its result or error, and where it left the chain. */
async function walkOutcome(
  config: Configuration,
  blobs: { key: string; data: Uint8Array }[],
  options: WalkOptions,
  chainOptions: ConstructorParameters<typeof AuditChain>[1] = {},
) {
  const chain = new AuditChain(config, chainOptions);
  const seen: string[] = [];
  let result: unknown;
  try {
    result = await walkAuditBlobs(chain, memorySource(blobs), {
      ...options,
      onVerified: (v, key) => {
        seen.push(`${key}:${v.naming}:${v.inserted}:${v.unchanged}:${v.bytes}`);
        return options.onVerified?.(v, key);
      },
    });
  } catch (e) {
    assert.ok(e instanceof AkdError, String(e));
    result = { code: e.code, message: e.message, field: e.field };
  }
  return { result, seen, head: chain.head, verified: chain.verified, naming: chain.naming };
}

const verifiers: AuditBlobVerifier[] = [];
after(() => Promise.all(verifiers.map((v) => v.close())));

for (const config of [new WhatsAppV1Configuration(), new ExperimentalConfiguration()]) {
  const history = new LeafHistory(config, 11).publishMany(12, 30);
  const verifier = createAuditBlobVerifier(config, { threads: 2, minBlobBytes: 0 });
  verifiers.push(verifier);

  test(`${config.name}: walks verifying on worker threads give the results, errors and heads of one thread`, async () => {
    const honest = keyed(history.blobs('end'));
    const corrupt = honest.map((b, i) => {
      if (i !== 6) return b;
      const data = b.data.slice();
      data[data.length - 5]! ^= 0x40; // a value byte: the proof no longer rebuilds the root
      return { ...b, data };
    });
    const truncated = honest.map((b, i) => (i === 4 ? { ...b, data: b.data.subarray(0, 9) } : b));
    const forged = honest.slice();
    forged[8] = keyed([
      forgedBlob(history.step(8n), 9n, history.roots[8]!, history.roots[10]!),
    ])[0]!;
    const gap = honest.filter((_, i) => i !== 5);
    const fork = [...honest, keyed([history.blob(3n, 'start')])[0]!];
    const cases: [string, { key: string; data: Uint8Array }[], WalkOptions, object?][] = [
      ['honest', honest, {}],
      [
        'start-named from an anchor',
        keyed(history.blobs('start')),
        {},
        {
          anchor: { epoch: 3n, rootHash: history.roots[3]! },
        },
      ],
      ['a corrupted proof', corrupt, {}],
      ['a truncated blob', truncated, {}],
      ['a wrong current root', forged, {}],
      ['a missing epoch', gap, {}],
      ['two blobs for one epoch', fork, {}],
      ['a limit', honest, { limit: 5 }],
      ['read-ahead', honest, { prefetch: 3 }],
    ];
    for (const [what, blobs, options, chainOptions] of cases) {
      const alone = await walkOutcome(config, blobs, options, chainOptions);
      for (const concurrency of [1, 2, 5]) {
        const spread = await walkOutcome(
          config,
          blobs,
          { ...options, verifier: verifier.verify, concurrency },
          chainOptions,
        );
        assert.deepEqual(spread, alone, `${what}, ${concurrency} at once`);
      }
    }
  });

  test(`${config.name}: an abort stops a walk with verifications in flight where it stands`, async () => {
    const controller = new AbortController();
    const r = await walkOutcome(config, keyed(history.blobs('end')), {
      verifier: verifier.verify,
      concurrency: 4,
      signal: controller.signal,
      onVerified: (v) => {
        if (v.endEpoch === 3n) controller.abort();
      },
    });
    assert.deepEqual(r.result, { verified: 3, ended: 'aborted' });
    assert.equal(r.head!.epoch, 3n);
  });
}

test('a verifier keeps small blobs, and every blob of a configuration workers cannot rebuild, on the calling thread', async () => {
  const config = new WhatsAppV1Configuration();
  const history = new LeafHistory(config, 3).publishMany(3, 4);
  const blob = history.blob(1n);
  for (const verifier of [
    createAuditBlobVerifier(config, { threads: 2 }),
    createAuditBlobVerifier(config, { threads: 0 }),
    // not an instance of a built-in configuration, so not one a worker can rebuild
    createAuditBlobVerifier(new Proxy(config, { getPrototypeOf: () => Object.prototype }), {
      threads: 2,
      minBlobBytes: 0,
    }),
  ]) {
    const v = await verifier.verify(blob, { naming: 'end' });
    assert.equal(v.endEpoch, 2n);
    await assert.rejects(verifier.verify(blob, { naming: 'start' }), { code: 'AUDIT_BLOB_EPOCH' });
    await verifier.close();
  }
});
