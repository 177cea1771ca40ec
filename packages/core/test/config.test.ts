import { test } from 'node:test';
import assert from 'node:assert/strict';
import { blake3 as nobleBlake3 } from '@noble/hashes/blake3.js';
import {
  ExperimentalConfiguration,
  NodeLabel,
  VersionFreshness,
  WhatsAppV1Configuration,
  configurationByName,
  fromHex,
  setVrfArithmetic,
  toHex,
  utf8,
} from '@akd-ts/core';

const HARD_CODED_SK = fromHex('c9afa9d845ba75166b5c215767b1d6934e50c3db36e89b127b8a622b120f6721');

/**
 * BLAKE3's official vectors (BLAKE3-team/BLAKE3 test_vectors/test_vectors.json, `hash`, first
 * 32 bytes): the input is the bytes 0, 1, ..., 250 repeated. Lengths up to 4096 cover one
 * block, chunk boundaries and a tree of four chunks in the module's BLAKE3; 4097 and 5121 take
 * the blake3-jit path on both arithmetics.
 */
const BLAKE3_VECTORS: [number, string][] = [
  [0, 'af1349b9f5f9a1a6a0404dea36dcc9499bcb25c9adc112b7cc9a93cae41f3262'],
  [1, '2d3adedff11b61f14c886e35afa036736dcd87a74d27b5c1510225d0f592e213'],
  [1023, '10108970eeda3eb932baac1428c7a2163b0e924c9a9e25b35bba72b28f70bd11'],
  [1024, '42214739f095a406f3fc83deb889744ac00df831c10daa55189b5d121c855af7'],
  [1025, 'd00278ae47eb27b34faecf67b4fe263f82d5412916c1ffd97c8cb7fb814b8444'],
  [2048, 'e776b6028c7cd22a4d0ba182a8bf62205d2ef576467e838ed6f2529b85fba24a'],
  [2049, '5f4d72f40d7a5f82b15ca2b2e44b1de3c2ef86c426c95c1af0b6879522563030'],
  [3072, 'b98cb0ff3623be03326b373de6b9095218513e64f1ee2edd2525c7ad1e5cffd2'],
  [3073, '7124b49501012f81cc7f11ca069ec9226cecb8a2c850cfe644e327d22d3e1cd3'],
  [4096, '015094013f57a5277b59d8475c0501042c0b642e531b0a1c8f58d2163229e969'],
  [4097, '9b4052b38f1c5fc8b1f9ff7ac7b27cd242487b3d890d15c96a1c25b8aa0fb995'],
  [5121, '628bd2cb2004694adaab7bbd778a25df25c47b9d4155a55f8fbd79f2fe154cff'],
];

/** The configuration's hash on one arithmetic: the module's BLAKE3 (wasm) or blake3-jit. */
function hashOn(arithmetic: 'wasm' | 'noble', data: Uint8Array): string {
  setVrfArithmetic(arithmetic);
  try {
    return toHex(new WhatsAppV1Configuration().hash(data));
  } finally {
    setVrfArithmetic('auto');
  }
}

test("BLAKE3 (the module's and blake3-jit) gives the official test vectors", () => {
  for (const [len, hash] of BLAKE3_VECTORS) {
    const data = Uint8Array.from({ length: len }, (_, i) => i % 251);
    for (const arithmetic of ['wasm', 'noble'] as const) {
      assert.equal(hashOn(arithmetic, data), hash, `${arithmetic} ${len}`);
    }
  }
});

test("BLAKE3 (the module's and blake3-jit) agrees with @noble/hashes on random inputs", () => {
  const lengths = [...Array(300).keys(), 511, 512, 1024, 1025, 2047, 3000, 4095, 4096];
  for (const len of [...lengths, 4097, 5000, 65536]) {
    const data = crypto.getRandomValues(new Uint8Array(len));
    const expected = toHex(nobleBlake3(data));
    assert.equal(hashOn('wasm', data), expected, `wasm, length ${len}`);
    assert.equal(hashOn('noble', data), expected, `blake3-jit, length ${len}`);
  }
});

test('WhatsAppV1 worked values (spec 3.5)', () => {
  const c = new WhatsAppV1Configuration();
  assert.equal(
    toHex(c.hash(new Uint8Array(0))),
    'af1349b9f5f9a1a6a0404dea36dcc9499bcb25c9adc112b7cc9a93cae41f3262',
  );
  assert.equal(
    toHex(c.emptyRootValue),
    '2d3adedff11b61f14c886e35afa036736dcd87a74d27b5c1510225d0f592e213',
  );
  assert.equal(toHex(c.staleAzksValue), toHex(c.emptyRootValue));
  assert.equal(toHex(c.emptyLabel.toBytes()), '00000000' + '01'.repeat(32));
  assert.equal(
    toHex(c.nodeLabelValue(c.emptyLabel)),
    'af0af37cd5f4b0e068e612ad6327d79066fd9fdcd9ea360b438059abafd1d992',
  );
  assert.equal(
    toHex(c.emptyNodeHash),
    '8d0447ac34e4607db4d20d403824e7dd4d384dab5ee5c11bbdebf0df9be57e6d',
  );
  assert.equal(
    toHex(c.nodeLabelValue(NodeLabel.root())),
    '245097bfbd7049db2fb9a8004cb070f1175011ba47b11ed9240864cc87072d33',
  );
  assert.equal(
    toHex(c.computeRootHashFromVal(c.emptyRootValue)),
    'f48ded419214732a2c610c1e280543744bab3c17aec33e444997fa2d8f79792a',
  );
  const half = new Uint8Array(32);
  half[0] = 0x80;
  assert.equal(
    toHex(c.nodeLabelValue(new NodeLabel(half, 1))),
    'bddaa514f712b2effefa66c607fe55f28529ae0f67f3b7b2b33b363ce7726319',
  );
  assert.equal(
    toHex(c.commitmentKey(HARD_CODED_SK)),
    '1ec16faa07c5e5024f95a339e395f8c1299a3d1c3f65e4bd9246ff33ada10a65',
  );
  assert.equal(
    toHex(c.getHashFromLabelInput(utf8('hello'), VersionFreshness.Fresh, 1n)),
    '8fefb2a552d5a71e7f1463a25db936b49604e5e85fc74c8bb618614ca758b8c0',
  );
  assert.equal(
    toHex(c.getHashFromLabelInput(utf8('hello'), VersionFreshness.Stale, 1n)),
    'd306ddf1693d4de56f9918b9fe35dded40a09d3f15cbb8eb1a94ad2e37b4ea4c',
  );
  const ck = c.commitmentKey(HARD_CODED_SK);
  const nl = new NodeLabel(
    fromHex('35973b407c2f9bbd7258e4b827ce6374ada8cdb306616f4698a2324a14ac2be2'),
    256,
  );
  const nonce = c.getCommitmentNonce(ck, nl, 1n, utf8('world'));
  assert.equal(toHex(nonce), '7915ab06197dda3d13fcdb0c47f719a8f3aabb85c7dd04ef1b77b639d77decd5');
  const fresh = c.computeFreshAzksValue(ck, nl, 1n, utf8('world'));
  assert.equal(toHex(fresh), '91ef2e35879be7cd133d187e6a08a9eba8925b18f406be9ffe17c4eee79b29f7');
  assert.equal(
    toHex(c.hashLeafWithCommitment(fresh, 1n)),
    'c808614ea61081d33722259ac79b3d589b52ec14deea8b3a7b371ab240ccf037',
  );
  assert.equal(
    toHex(c.hashLeafWithValue(utf8('world'), 1n, nonce)),
    'c808614ea61081d33722259ac79b3d589b52ec14deea8b3a7b371ab240ccf037',
  );
});

test('Experimental worked values (spec 3.5)', () => {
  const c = new ExperimentalConfiguration();
  assert.equal(
    toHex(c.hash(new Uint8Array(0))),
    '491bf950d50bdfe210cd85f9691385be532299c0dad8c3d8ce740af099f766c1',
  );
  assert.equal(
    toHex(c.hash(Uint8Array.of(0))),
    '776d19fd0c3fdfb3c717d269f57255ba2b138ca4f69e696a9bdb5b4c82624da8',
  );
  for (const v of [c.emptyRootValue, c.emptyNodeHash, c.staleAzksValue])
    assert.equal(toHex(v), '00'.repeat(32));
  assert.equal(toHex(c.nodeLabelValue(c.emptyLabel)), '00000000' + '01' + '00'.repeat(31));
  assert.equal(toHex(c.computeRootHashFromVal(c.emptyRootValue)), '00'.repeat(32));
  const ck = c.commitmentKey(HARD_CODED_SK);
  assert.equal(toHex(ck), '268214effba46cc5f0b7cb976cf47c177aa061c8aa6e84a8e542088a17982889');
  assert.equal(
    toHex(c.getHashFromLabelInput(utf8('hello'), VersionFreshness.Fresh, 1n)),
    '6a2092cdc1939bb48e612dfaff54bf71c211d81fbedbd475323dd510aafef2bd',
  );
  assert.equal(
    toHex(c.getHashFromLabelInput(utf8('hello'), VersionFreshness.Stale, 1n)),
    '3c37ed3fd00186b0be16853830cc45195fe7e07603f96669dca26afce09a5a2e',
  );
  const nl = new NodeLabel(
    fromHex('e2be063020e44fedb3a3a884112cefe21099ae8cd0bb5401e3dd4bb0f246c34d'),
    256,
  );
  const nonce = c.getCommitmentNonce(ck, nl, 1n, utf8('world'));
  assert.equal(toHex(nonce), '033c0162b204c5a5f61cbcb5cfebb0f22bb3a84fc306dd0ee15e3e95d8f9496d');
  assert.equal(
    toHex(c.computeFreshAzksValue(ck, nl, 1n, utf8('world'))),
    'ebd0399e519404b47c5cb76784a4b9cc19e7ae6fd0bbfbfd0e3f77fd5855abe2',
  );
  assert.equal(
    toHex(c.hashLeafWithValue(utf8('world'), 1n, nonce)),
    'd7875c515584973ae13b18af01a4e129ba0eee994ee0d6690a1af9e5ae1aaf04',
  );
});

test('a different domain label changes every hash; names resolve', () => {
  const a = new ExperimentalConfiguration();
  const b = new ExperimentalConfiguration('OtherLabel');
  assert.notEqual(toHex(a.hash(Uint8Array.of(1))), toHex(b.hash(Uint8Array.of(1))));
  assert.equal(configurationByName('whatsapp_v1').name, 'whatsapp_v1');
  assert.equal(configurationByName('experimental').name, 'experimental');
  assert.throws(() => configurationByName('sha256'), RangeError);
});

test('the scratch-buffer fast paths equal the plain formulas, and odd lengths take the plain path', () => {
  const plain = (c: WhatsAppV1Configuration | ExperimentalConfiguration) => ({
    parent: (a: Uint8Array, b: Uint8Array, x: Uint8Array, y: Uint8Array) =>
      c.name === 'whatsapp_v1'
        ? c.hash(
            new Uint8Array([
              ...c.hash(new Uint8Array([...a, ...b])),
              ...c.hash(new Uint8Array([...x, ...y])),
            ]),
          )
        : c.hash(new Uint8Array([...a, ...b, ...x, ...y])),
    leaf: (v: Uint8Array, epoch: bigint) => {
      const e = new Uint8Array(8);
      new DataView(e.buffer).setBigUint64(0, epoch);
      return c.hash(new Uint8Array([...v, ...e]));
    },
  });
  const rnd = (n: number) => crypto.getRandomValues(new Uint8Array(n));
  for (const c of [
    new WhatsAppV1Configuration(),
    new ExperimentalConfiguration(),
    new ExperimentalConfiguration('x'),
  ]) {
    const ref = plain(c);
    const labelLen = c.name === 'whatsapp_v1' ? 32 : 36;
    for (const [vl, ll] of [
      [32, labelLen],
      [31, labelLen],
      [32, labelLen + 1],
      [0, 0],
    ] as const) {
      const args = [rnd(vl), rnd(ll), rnd(vl), rnd(ll)] as const;
      assert.equal(
        toHex(c.computeParentHashFromChildren(...args)),
        toHex(ref.parent(...args)),
        `${c.name} ${vl}/${ll}`,
      );
    }
    for (const n of [32, 33, 0]) {
      const v = rnd(n);
      assert.equal(
        toHex(c.hashLeafWithCommitment(v, 0xfedcba9876543210n)),
        toHex(ref.leaf(v, 0xfedcba9876543210n)),
      );
    }
  }
});
