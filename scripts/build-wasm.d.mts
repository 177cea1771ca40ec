// Types of build-wasm.mjs, for the test that rebuilds the module.
export const FLAGS: string[];
export function clangVersion(): string | undefined;
export function buildWasm(): Buffer;
export function committedWasm(): Buffer;
export const CLANG_VERSION: string;
export function clangMismatch(version: string | undefined): string | undefined;
