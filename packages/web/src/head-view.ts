/**
 * The page's memory of the directory: an `AkdClient` (@akd-ts/client) over the page's own
 * server with its state in the browser's storage, so that every visit checks the server's
 * head against the last one this browser verified (an append-only proof, or the signatures
 * of the witnesses the person trusts). This view shows the verdict, the head remembered, the
 * witness signatures relayed with the head and their age, the witness settings, and, when the
 * server is caught in a fork or a rollback, the evidence to download. Lookups are verified
 * against the head it verified (`verifiedRoot`).
 */

import { AkdError, configurationByName, fromHex, toHex } from '@akd-ts/core';
import {
  AkdClient,
  MemoryStore,
  WebStorageStore,
  type FetchLike,
  type StateStore,
  type VerifiedHead,
  type WebStorageLike,
} from '@akd-ts/client';
import type { EpochInfo, TrustedRoot } from './check.js';
import { $, el, fact, input, setVerdict } from './dom.js';
import {
  STATE_KEY,
  WITNESS_KEY,
  clientPolicy,
  evidenceFile,
  headFailure,
  headVerdict,
  loadWitnessSettings,
  parseWitnessSettings,
  witnessRows,
  type ClientPolicy,
  type HeadVerdict,
} from './head.js';

/** `GET /v1/epoch` as the client saw it. */
type EpochBody = EpochInfo & { witnesses?: unknown };

/** The browser's storage, or undefined when the browser refuses it (then nothing is kept). */
function browserStorage(): (WebStorageLike & { removeItem(k: string): void }) | undefined {
  try {
    localStorage.getItem(STATE_KEY);
    return localStorage;
  } catch {
    return undefined;
  }
}

const storage = browserStorage();
let client: AkdClient;
let policy: ClientPolicy | undefined;
let served: EpochBody | undefined;
let failure: HeadVerdict | undefined;
let evidenceUrl: string | undefined;

function makeClient(): void {
  const settings = storage && loadWitnessSettings(storage);
  policy = settings && clientPolicy(settings);
  // the client's own requests, kept: the page shows the very answer the client judged
  const keepEpoch: FetchLike = async (url, init) => {
    const res = await fetch(url, init);
    if (res.ok && new URL(url).pathname === '/v1/epoch') {
      served = (await res.clone().json()) as EpochBody;
    }
    return res;
  };
  const store: StateStore = storage ? new WebStorageStore(storage, STATE_KEY) : new MemoryStore();
  client = new AkdClient({
    server: location.origin,
    store,
    fetch: keepEpoch,
    witnesses: policy?.witnesses,
    maxAgeMs: policy?.maxAgeMs,
  });
}

const BASIS: Record<VerifiedHead['basis'], string> = {
  'first-use': 'trusted on first use',
  trusted: 'trusted',
  'append-only': 'proven to extend the one before (append-only proof)',
  witnesses: 'signed by your trusted witnesses',
  same: 'the same as the one before',
};

function headText(h: VerifiedHead): string {
  const date = new Date(h.verifiedAt).toISOString().replace('T', ' ').slice(0, 19);
  return `epoch ${h.epoch}, root hash ${toHex(h.rootHash)}, ${BASIS[h.basis]}, on ${date} UTC`;
}

function showServed(body: EpochBody): void {
  $('server-epoch').textContent = body.epoch;
  $('server-root-hash').textContent = body.rootHash;
  $('server-public-key').textContent = body.publicKey;
  $('server-config').textContent =
    body.configuration.domainLabel === null
      ? body.configuration.name
      : `${body.configuration.name} (domain label ${body.configuration.domainLabel})`;
  $('server-root').hidden = false;
  $('epoch-status').textContent = `The server's latest epoch is ${body.epoch}.`;
}

function showWitnesses(body: EpochBody | undefined): void {
  const list = $('witness-list');
  list.replaceChildren();
  const relayed = Array.isArray(body?.witnesses) ? body.witnesses : [];
  const keys = policy?.witnesses.keys.length ?? 0;
  const trust =
    policy === undefined
      ? 'You trust no witnesses yet: set their keys below to require their signatures.'
      : `You trust ${keys} witness${keys === 1 ? '' : 'es'}; a head needs ${policy.witnesses.quorum} of their signatures${policy.maxAgeMs === undefined ? '' : `, at most ${policy.maxAgeMs / 3_600_000} h old`}.`;
  $('witness-status').textContent =
    `${relayed.length === 0 ? 'The server relayed no witness signatures with its head.' : `The server relayed ${relayed.length} witness signature${relayed.length === 1 ? '' : 's'} with its head.`} ${trust}`;
  if (body === undefined) return;
  const head = { epoch: BigInt(body.epoch), rootHash: fromHex(body.rootHash) };
  for (const row of witnessRows(relayed, head, policy?.witnesses, Date.now())) {
    const li = el('li', row.text);
    li.dataset['status'] = row.status;
    list.append(li);
  }
}

function showEvidence(v: HeadVerdict): void {
  if (evidenceUrl !== undefined) URL.revokeObjectURL(evidenceUrl);
  evidenceUrl = undefined;
  const link = $('evidence-download') as HTMLAnchorElement;
  $('evidence-actions').hidden = v.evidence === undefined;
  if (v.evidence === undefined) return;
  const file = evidenceFile(v.evidence);
  evidenceUrl = URL.createObjectURL(new Blob([file.text], { type: 'application/json' }));
  link.href = evidenceUrl;
  link.download = file.name;
  link.textContent = `Download the evidence (${file.name})`;
}

/**
 * Fetches the server's head and has the client check it against the one this browser
 * remembers; shows the outcome.
 */
export async function checkHead(): Promise<void> {
  const verdictEl = $('head-verdict');
  delete verdictEl.dataset['settled'];
  setVerdict(verdictEl, 'checking', "Checking the server's head against your last visit…");
  served = undefined;
  let verdict: HeadVerdict;
  try {
    verdict = headVerdict(await client.refresh());
    failure = undefined;
  } catch (e) {
    verdict = headFailure(e);
    failure = verdict;
  }
  if (served !== undefined) showServed(served);
  else $('epoch-status').textContent = "Could not load the server's head.";
  setVerdict(verdictEl, verdict.kind, verdict.headline, verdict.reason);
  showEvidence(verdict);
  showWitnesses(served);
  const remembered = $('remembered');
  remembered.replaceChildren();
  let head: VerifiedHead | undefined;
  try {
    head = await client.head();
  } catch {
    head = undefined; // a saved state the client cannot read: the verdict says why
  }
  fact(remembered, 'Kept by', storage ? "this browser's local storage" : 'nothing (storage off)');
  fact(remembered, 'Last verified head', head === undefined ? 'none' : headText(head), true);
  verdictEl.dataset['settled'] = 'true';
}

/** The head check's failure, if it failed: then nothing the server says is trusted. */
export function headCheckFailure(): HeadVerdict | undefined {
  return failure;
}

/**
 * The root to verify a proof of epoch `servedEpoch` against: the head this browser verified,
 * advanced first when the server has published since (that is checked like any new head).
 * @throws AkdError with the head check's code when the server's head did not verify
 */
export async function verifiedRoot(
  servedEpoch: string | null,
): Promise<{ trusted: TrustedRoot; source: string }> {
  let head = failure === undefined ? await client.head() : undefined;
  const newer = head !== undefined && servedEpoch !== null && BigInt(servedEpoch) > head.epoch;
  if (failure === undefined && (head === undefined || newer)) {
    await checkHead();
    head = await client.head();
  }
  const state = await client.state();
  if (failure !== undefined || head === undefined || state === undefined) {
    const code = (failure?.code ?? 'CLIENT_NOT_EXTENDED') as 'CLIENT_NOT_EXTENDED';
    throw new AkdError(code, "the server's head did not pass its check");
  }
  const { name, domainLabel } = state.configuration;
  return {
    trusted: {
      config: configurationByName(name, domainLabel ?? undefined),
      epoch: head.epoch,
      rootHash: head.rootHash,
      publicKey: fromHex(state.publicKey),
    },
    source: `the head this browser verified (${BASIS[head.basis]})`,
  };
}

/** The server's answer to `GET /v1/epoch` the client last judged (for a pasted root). */
export function servedInfo(): EpochInfo | undefined {
  return served;
}

function witnessForm(): void {
  const form = $('witness-form') as HTMLFormElement;
  const status = $('witness-form-status');
  const saved = storage && loadWitnessSettings(storage);
  if (saved !== undefined) {
    input('witness-keys').value = saved.keys.join('\n');
    input('witness-quorum').value = String(saved.quorum);
    input('witness-namespace').value = saved.namespace;
    input('witness-max-age').value = saved.maxAgeHours === 0 ? '' : String(saved.maxAgeHours);
  }
  form.addEventListener('submit', (event) => {
    event.preventDefault();
    try {
      const settings = parseWitnessSettings({
        keys: input('witness-keys').value,
        quorum: input('witness-quorum').value,
        namespace: input('witness-namespace').value,
        maxAgeHours: input('witness-max-age').value,
      });
      if (storage === undefined) throw new Error('this browser does not let the page keep them');
      storage.setItem(WITNESS_KEY, JSON.stringify(settings));
      status.textContent = 'Saved. The head is checked again with these witnesses.';
    } catch (e) {
      status.textContent = `Not saved: ${(e as Error).message}`;
      return;
    }
    makeClient();
    void checkHead();
  });
  $('witness-clear').addEventListener('click', () => {
    storage?.removeItem(WITNESS_KEY);
    status.textContent = 'Forgotten: heads no longer need witness signatures.';
    makeClient();
    void checkHead();
  });
  $('forget-head').addEventListener('click', () => {
    storage?.removeItem(STATE_KEY);
    makeClient();
    void checkHead();
  });
}

/** Starts the view: the client, the forms, and the first check of the server's head. */
export function startHeadView(): Promise<void> {
  makeClient();
  witnessForm();
  return checkHead();
}
