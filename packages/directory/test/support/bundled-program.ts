/**
 * The entry point bundled.test.ts bundles with esbuild: runs the workload its argument names
 * and prints the result as one JSON line. No top-level await, so it bundles as CommonJS too.
 */

import { runWorkload, type WorkloadMode } from './bundled-workload.js';

runWorkload((process.argv[2] ?? 'default') as WorkloadMode).then(
  (result) => process.stdout.write(`${JSON.stringify(result)}\n`),
  (error: unknown) => {
    process.stderr.write(`${String((error as Error).stack ?? error)}\n`);
    process.exitCode = 1;
  },
);
