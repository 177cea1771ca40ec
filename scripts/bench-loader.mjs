// Compiles the benchmark scripts (TypeScript) on the fly, on the main thread only: worker
// threads inherit this --import, but they run the packages' compiled JavaScript, and compiling
// every module they load would add seconds of CPU to the figures.
import { isMainThread } from 'node:worker_threads';

if (isMainThread) {
  const { register } = await import('tsx/esm/api');
  register();
}
