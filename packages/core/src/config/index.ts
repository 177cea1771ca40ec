/** Configuration lookup by name, as the CLI and the server take it. */

import type { Configuration, ConfigurationName } from './configuration.js';
import { EXAMPLE_DOMAIN_LABEL, ExperimentalConfiguration } from './experimental.js';
import { WhatsAppV1Configuration } from './whatsapp-v1.js';

/** The configuration names accepted by {@link configurationByName}. */
export const CONFIGURATION_NAMES: readonly ConfigurationName[] = ['whatsapp_v1', 'experimental'];

/**
 * The configuration called `name`; `domainLabel` applies to `experimental` only.
 *
 * @example configurationByName('experimental', 'ExampleLabel')
 * @throws RangeError for an unknown name.
 */
export function configurationByName(
  name: string,
  domainLabel: string = EXAMPLE_DOMAIN_LABEL,
): Configuration {
  if (name === 'whatsapp_v1') return new WhatsAppV1Configuration();
  if (name === 'experimental') return new ExperimentalConfiguration(domainLabel);
  throw new RangeError(`unknown configuration '${name}' (expected whatsapp_v1 or experimental)`);
}
