import { test } from 'node:test';
import assert from 'node:assert/strict';
import { toHex } from '@akd-ts/core';
import { MemoryDatabase, recordFullKey } from '@akd-ts/storage';
import { assertRecordEqual } from '@akd-ts/storage/conformance';
import { loadFixture } from '../../../test/support/fixtures.js';
import { CONFIG_NAMES, openDirectory } from './support/build.js';

const EXPECTED_ROOT = {
  whatsapp_v1: 'f076e47b7f910ceab406ea1637bf575d9cfb4e5bbadd498f7c7d084c706a7e9f',
  experimental: '4da1df2c3b1540ec2c9f2435ef5ce56bd1b365d3f2c7f0519acb481d2a6820e8',
};

for (const name of CONFIG_NAMES) {
  test(`${name}: loading fixture state 9 and publishing delta 10 yields exactly state 10`, async () => {
    const fixture = loadFixture(name);
    assert.equal(fixture.state9.length, 48);
    assert.equal(fixture.state10.length, 51);
    const db = new MemoryDatabase();
    await db.batchSet(fixture.state9);
    const { dir } = await openDirectory(name, { db });
    const { epoch, hash } = await dir.publish(fixture.delta10);
    assert.equal(epoch, 9n);
    assert.equal(toHex(hash), EXPECTED_ROOT[name]);
    await dir.close();

    const actual = new Map(db.allRecords().map((r) => [recordFullKey(r), r]));
    assert.equal(actual.size, fixture.state10.length);
    for (const expected of fixture.state10) {
      const key = recordFullKey(expected);
      const got = actual.get(key);
      assert.ok(got, `record ${key} is missing`);
      assertRecordEqual(got, expected);
    }
  });
}
