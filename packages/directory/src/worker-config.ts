/**
 * How a configuration crosses to a worker thread: by name (and domain label), since objects
 * with methods cannot. Only the two built-in configurations can, exactly: a subclass may
 * override any hash, and a worker rebuilding its parent would hash otherwise; work under any
 * other configuration stays on the calling thread.
 */

import {
  ExperimentalConfiguration,
  WhatsAppV1Configuration,
  type Configuration,
} from '@akd-ts/core';

/** How a worker rebuilds the configuration. */
export type ConfigDescription =
  { name: 'whatsapp_v1' } | { name: 'experimental'; domainLabel: Uint8Array };

/** The description of `config`, or undefined for a configuration workers cannot rebuild. */
export function describeConfig(config: Configuration): ConfigDescription | undefined {
  if (config.constructor === WhatsAppV1Configuration) return { name: 'whatsapp_v1' };
  if (config.constructor === ExperimentalConfiguration) {
    return { name: 'experimental', domainLabel: (config as ExperimentalConfiguration).domainLabel };
  }
  return undefined;
}

const built = new Map<string, Configuration>();

/** The configuration a description names (one instance per description and thread). */
export function configOf(config: ConfigDescription): Configuration {
  const key =
    config.name === 'whatsapp_v1' ? config.name : `experimental:${config.domainLabel.join(',')}`;
  let c = built.get(key);
  if (c === undefined) {
    c =
      config.name === 'whatsapp_v1'
        ? new WhatsAppV1Configuration()
        : new ExperimentalConfiguration(config.domainLabel);
    built.set(key, c);
  }
  return c;
}
