#!/usr/bin/env -S node --expose-gc --no-allocation-site-pretenuring
// The akd command. The TypeScript sources are built into dist/ by the root 'prepare' script,
// which npm install runs; this shim exists so npm can link the command before that build.
// --expose-gc: a publish collects a large epoch's garbage after its preload and between its
// commit and its VRF proofs (@akd-ts/directory release-memory.ts), which lowers the writer's
// peak memory. --no-allocation-site-pretenuring: a large commit's short-lived record objects
// otherwise get allocated straight into V8's old generation in some runs, which then grows by
// hundreds of megabytes between full collections (bench/RESULTS.md, "Writer memory").
import '../dist/bin.js';
