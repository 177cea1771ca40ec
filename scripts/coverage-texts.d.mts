// Types of coverage-texts.mjs, for the test that checks it.
export function keepOneTextPerUrl(dir: string): Map<string, number>;
