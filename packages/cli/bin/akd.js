#!/usr/bin/env node
// The akd command. The TypeScript sources are built into dist/ by the root 'prepare' script,
// which npm install runs; this shim exists so npm can link the command before that build.
import '../dist/bin.js';
