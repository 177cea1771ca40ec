/**
 * The few DOM helpers the page's views share. Everything that came from the server is set
 * as text (`textContent`), never as HTML.
 */

export function $(id: string): HTMLElement {
  const el = document.getElementById(id);
  if (el === null) throw new Error(`the page has no #${id}`);
  return el;
}

export const input = (id: string) => $(id) as HTMLInputElement;

/** An element with text content (and optional class). */
export function el(tag: string, text?: string, className?: string): HTMLElement {
  const node = document.createElement(tag);
  if (text !== undefined) node.textContent = text;
  if (className !== undefined) node.className = className;
  return node;
}

export type VerdictKind = 'verified' | 'first-use' | 'failed' | 'error' | 'not-found' | 'checking';

/** Sets a verdict box: a headline, and a reason below it. */
export function setVerdict(
  target: HTMLElement,
  kind: VerdictKind,
  headline: string,
  reason?: string,
): void {
  target.dataset['verdict'] = kind;
  target.replaceChildren(el('span', headline, 'headline'));
  if (reason !== undefined) target.append(el('span', reason, 'reason'));
}

/** Appends a term and its value to a `dl`. */
export function fact(list: HTMLElement, term: string, value: string, mono = false): void {
  list.append(el('dt', term));
  const dd = el('dd');
  dd.append(mono ? el('code', value) : document.createTextNode(value));
  list.append(dd);
}
