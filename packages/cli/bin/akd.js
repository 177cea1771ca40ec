#!/usr/bin/env -S node --expose-gc
// The akd command. The TypeScript sources are built into dist/ by the root 'prepare' script,
// which npm install runs; this shim exists so npm can link the command before that build.
// --expose-gc: a publish collects a large epoch's garbage between its commit and its VRF
// proofs (@akd-ts/directory release-memory.ts), which lowers the writer's peak memory.
import '../dist/bin.js';
