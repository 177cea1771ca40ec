/**
 * The page's behaviour (bundled into app.js): check the server's head against the one this
 * browser verified on its last visit (head-view.ts, with @akd-ts/client), and on submit fetch
 * the label's lookup proof (protobuf) and optionally its history, verify them here with core
 * (check.ts) against that verified head, and show the verdict, the value and the path to the
 * root. Everything shown that came from the server is set as text, never as HTML.
 */

import { AkdError, initVrfWasm, toHex, vrfArithmetic, type VerifyResult } from '@akd-ts/core';
import {
  checkHistory,
  checkLookup,
  display,
  labelPath,
  parseLabel,
  trustedRoot,
  type PathView,
  type TrustedRoot,
  type Verdict,
} from './check.js';
import { $, el, fact, input, setVerdict } from './dom.js';
import { headCheckFailure, servedInfo, startHeadView, verifiedRoot } from './head-view.js';

const PROTOBUF = 'application/x-protobuf';

/** An API error body, or a description of a response that is not one. */
async function apiError(res: Response): Promise<{ code: string; message: string }> {
  try {
    const body = (await res.json()) as { error?: { code?: string; message?: string } };
    if (body.error?.code) return { code: body.error.code, message: body.error.message ?? '' };
  } catch {
    // not JSON: fall through
  }
  return { code: `HTTP_${res.status}`, message: res.statusText || 'unexpected answer' };
}

function showPath(path: PathView | undefined, trusted: TrustedRoot): void {
  const list = $('path');
  list.replaceChildren();
  $('path-section').hidden = path === undefined;
  if (path === undefined) return;
  const leaf = el('li');
  leaf.append(
    'Leaf value (commitment to the value, bound to its epoch): ',
    el('code', path.leafValue),
  );
  list.append(leaf);
  for (const level of path.levels) {
    const li = el('li');
    li.append(
      'Node ',
      el('code', level.node),
      `, the ${level.side} child, with sibling `,
      el('code', level.sibling),
      ' of hash ',
      el('code', level.siblingHash),
      ' → parent value ',
      el('code', level.parentValue),
    );
    list.append(li);
  }
  const root = el('li');
  root.append('Root hash from this path: ', el('code', path.computedRoot), ' ');
  root.append(
    path.matchesTrustedRoot
      ? el('span', '= the trusted root hash ✔', 'match')
      : el('span', `≠ the trusted root hash ${toHex(trusted.rootHash)} ✘`, 'mismatch'),
  );
  list.append(root);
}

function versionLine(r: VerifyResult): string {
  const value = r.value.length === 0 ? '(erased)' : display(r.value);
  return `Version ${r.version}, published in epoch ${r.epoch}: ${value}`;
}

function showHistory(verdict: Verdict<VerifyResult[]>): void {
  const list = $('history');
  list.replaceChildren();
  $('history-section').hidden = false;
  if (verdict.verified) {
    const n = verdict.result.length;
    setVerdict(
      $('history-verdict'),
      'verified',
      `✔ History verified: ${n} version${n === 1 ? '' : 's'}, newest first`,
    );
    for (const r of verdict.result) list.append(el('li', versionLine(r)));
  } else {
    setVerdict(
      $('history-verdict'),
      'failed',
      `✘ History NOT verified: ${verdict.code}`,
      verdict.reason,
    );
  }
}

/** The root to verify against: the one pasted, else the head this browser verified. */
async function chooseRoot(
  servedEpoch: string | null,
): Promise<{ trusted: TrustedRoot; source: string }> {
  const pastedRoot = input('trusted-root').value.trim();
  const pastedEpoch = input('trusted-epoch').value.trim();
  if (pastedRoot === '' && pastedEpoch === '') return verifiedRoot(servedEpoch);
  const info = servedInfo();
  if (info === undefined) {
    throw new AkdError('CLIENT_RESPONSE', "the server's key and configuration are not known");
  }
  const epoch = pastedEpoch !== '' ? pastedEpoch : (servedEpoch ?? info.epoch);
  return {
    trusted: trustedRoot(info, { rootHash: pastedRoot, epoch }),
    source: 'the root hash you pasted',
  };
}

/**
 * Brings the settled verdict into view and moves focus to it: the result section starts below
 * the form, out of sight on a laptop screen, and a screen reader should read the outcome next.
 * `data-presented` tells tests (and scripts) that the lookup is over.
 */
function presentVerdict(): void {
  const verdictEl = $('verdict');
  $('result').scrollIntoView({ block: 'start' }); // its heading, then the verdict
  verdictEl.focus({ preventScroll: true });
  verdictEl.dataset['presented'] = 'true';
}

async function lookUp(event: SubmitEvent): Promise<void> {
  event.preventDefault();
  try {
    await settle();
  } finally {
    presentVerdict();
  }
}

/** Runs one lookup until its verdict is settled (history included). */
async function settle(): Promise<void> {
  const verdictEl = $('verdict');
  delete verdictEl.dataset['presented'];
  const details = $('details');
  $('result').hidden = false;
  details.replaceChildren();
  $('path-section').hidden = true;
  $('history-section').hidden = true;
  let label: Uint8Array;
  try {
    label = parseLabel(input('label').value);
  } catch (e) {
    setVerdict(verdictEl, 'error', 'Not a label', (e as Error).message);
    return;
  }
  const failed = headCheckFailure();
  const pasted = input('trusted-root').value.trim() !== '' || input('trusted-epoch').value !== '';
  if (failed !== undefined && !pasted) {
    setVerdict(
      verdictEl,
      'failed',
      `✘ NOT verified: the server's head failed its check (${failed.code})`,
      'A proof is only as good as the root hash it is checked against, and this server did not show a head this browser can trust: see above. Do not use its answers.',
    );
    return;
  }
  const button = $('submit') as HTMLButtonElement;
  button.disabled = true;
  setVerdict(verdictEl, 'checking', 'Fetching and verifying the proof…');
  $('result').scrollIntoView({ block: 'start' }); // the progress shows where the verdict will
  try {
    const res = await fetch(`/v1/lookup/${labelPath(label)}`, { headers: { accept: PROTOBUF } });
    if (!res.ok) {
      const { code, message } = await apiError(res);
      if (code === 'DIRECTORY_LABEL_NOT_FOUND') {
        setVerdict(
          verdictEl,
          'not-found',
          `Not found: no key is published for ${display(label)}`,
          "This is the server's statement, not a proof: akd answers a lookup of a label it never published with an error and no proof.",
        );
      } else {
        setVerdict(verdictEl, 'error', `The server refused the lookup: ${code}`, message);
      }
      return;
    }
    const servedEpoch = res.headers.get('x-akd-epoch');
    const bytes = new Uint8Array(await res.arrayBuffer());
    const { trusted, source } = await chooseRoot(servedEpoch);
    // the WebAssembly VRF arithmetic has been compiling since the page loaded; without it
    // (no WebAssembly, or a policy refusing it) noble's verifies the same way, only slower
    await initVrfWasm();
    const verdict = checkLookup(trusted, label, bytes);
    document.documentElement.dataset['vrf'] = vrfArithmetic();
    fact(details, 'Label', display(label));
    if (verdict.verified) {
      const r = verdict.result;
      setVerdict(
        verdictEl,
        'verified',
        `✔ Verified: ${display(label)} has this value at epoch ${trusted.epoch}`,
      );
      fact(details, 'Value', r.value.length === 0 ? '(erased)' : display(r.value), true);
      fact(details, 'Version', r.version.toString());
      fact(details, 'Published in epoch', r.epoch.toString());
    } else {
      setVerdict(
        verdictEl,
        'failed',
        `✘ NOT verified: ${verdict.code}`,
        `${verdict.reason}. Do not use the value this server sent.`,
      );
    }
    fact(details, 'Checked against epoch', trusted.epoch.toString());
    fact(details, 'Trusted root hash', toHex(trusted.rootHash), true);
    fact(details, 'Root hash from', source);
    fact(details, 'Proof size', `${bytes.length} bytes`);
    showPath(verdict.path, trusted);

    if (input('with-history').checked) {
      const hist = await fetch(`/v1/history/${labelPath(label)}`, {
        headers: { accept: PROTOBUF },
      });
      if (hist.ok) {
        showHistory(checkHistory(trusted, label, new Uint8Array(await hist.arrayBuffer())));
      } else {
        const { code, message } = await apiError(hist);
        showHistory({ verified: false, code, reason: message });
      }
    }
  } catch (e) {
    const code = e instanceof AkdError ? e.code : 'ERROR';
    setVerdict(verdictEl, 'error', `Could not check the proof: ${code}`, (e as Error).message);
  } finally {
    button.disabled = false;
  }
}

function start(): void {
  ($('lookup-form') as HTMLFormElement).addEventListener('submit', (e) => void lookUp(e));
  void startHeadView();
  document.documentElement.dataset['ready'] = 'true';
}

start();
