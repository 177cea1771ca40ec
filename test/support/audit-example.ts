/**
 * The spec 10.5 audit example for both configurations: publish [hello->world] (epoch 1), then
 * [hello->world2, hi->there] (epoch 2); the append-only proof of audit(1, 2) and both roots.
 * Plain data (it imports only a type), shared by the Node tests, the in-browser test and the
 * benchmarks.
 */

import type { ConfigurationName } from '@akd-ts/core';

export interface AuditExample {
  configuration: ConfigurationName;
  root1: string;
  root2: string;
  proof: string;
}

export const AUDIT_EXAMPLES: readonly AuditExample[] = [
  {
    configuration: 'whatsapp_v1',
    root1: 'b8d31596e8603a24f3a94bf42ecdcd8f87aee41f798220eb37ea02b4365e7bb4',
    root2: '565a0cf104305cddd624f7fd1cd8799148f2dd94c1ad6d1229118e78279c25ec',
    proof:
      '0aac020a490a250a20b0eb5864ae16a797ae0ffb2ad9073d57581c24c4f602f53cdabd58836291ac901080021220f0fcc7e8' +
      'bd6d86fac0d0b108eb2f6adc024513743769a0617717a3b9360c070b0a490a250a20b2bf229926955cb4f0af54ebef90d724' +
      'a552fb721b40a1c220658e1b6730fa9c10800212202d3adedff11b61f14c886e35afa036736dcd87a74d27b5c1510225d0f5' +
      '92e2130a490a250a20f3e5f535007982bb233742bf46ef575ee64529491cc1c8dd4e28f40d585cfbf01080021220ab314685' +
      'c563af7f23fea85cef35feed883490a5614014c955d159ef21f100b312490a250a2035973b407c2f9bbd7258e4b827ce6374' +
      'ada8cdb306616f4698a2324a14ac2be21080021220c808614ea61081d33722259ac79b3d589b52ec14deea8b3a7b371ab240' +
      'ccf0371001',
  },
  {
    configuration: 'experimental',
    root1: '794858bdd9e5057338815ce11b40b0ccbd1211e90fab10a4c43c0a608cb57fad',
    root2: '0dda6c0a34e8ee4683b5acb052bf127e91bad9dffe20aa822e2fa9a2c93bf624',
    proof:
      '0aac020a490a250a20479f2e2207236b59950445ee326c032b5fa53fd80bbaeaa83537c5d968bdb5d41080021220000000' +
      '00000000000000000000000000000000000000000000000000000000000a490a250a20b9ac121b2af1e5912df1f233afe900' +
      '87f204169c1042bed5fb9401e43f8e8f761080021220e73418c154676b03e5cdd2bec15e9f51960ae4b1eae9172fc879f731' +
      '00ba76640a490a250a20fe79c12d0f4cc19cbcab36ac3004a0a242ad4d2e538dff82cb89ebd96b38e3951080021220189a64' +
      '2babe44e75120a12e7f596826e93c21a8b2c4a9625e356b0cffe70778f12490a250a20e2be063020e44fedb3a3a884112cef' +
      'e21099ae8cd0bb5401e3dd4bb0f246c34d1080021220d7875c515584973ae13b18af01a4e129ba0eee994ee0d6690a1af9e5' +
      'ae1aaf041001',
  },
];
