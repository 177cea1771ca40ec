/**
 * Limits on what a publish accepts. Upstream has none (spec 12.2); a service needs them, and
 * empty values are refused by default because a history verifier cannot tell them from
 * tombstones (spec 21, open question 6).
 */

export interface PublishLimits {
  /** Largest label, bytes (default 256, the width upstream's SQL example gives usernames). */
  maxLabelBytes: number;
  /** Largest value, bytes (default 65,536). */
  maxValueBytes: number;
  /** Most updates in one publish (default unlimited). */
  maxUpdates: number;
  /** Accept empty values (default false: they look like tombstones to a verifier). */
  allowEmptyValues: boolean;
}

export const DEFAULT_LIMITS: PublishLimits = {
  maxLabelBytes: 256,
  maxValueBytes: 65_536,
  maxUpdates: Number.POSITIVE_INFINITY,
  allowEmptyValues: false,
};
