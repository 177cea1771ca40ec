/**
 * How a cost grows with the directory: a least-squares fit of the measured points against
 * three models, y = a (constant), y = a + b ln n (log) and y = a + b n (linear), and a
 * decision between them.
 *
 * The rule: the cost is "constant" when the better of the two growing fits changes by less
 * than `flat` (10%) across the measured range; otherwise it is "log" or "linear", whichever
 * fit leaves the smaller sum of squared residuals (both have two parameters), where linear
 * must leave at most `LINEAR_MARGIN` (3/4) of log's: on noisy figures two fits within a few
 * percent of each other do not show a linear term, and the slower growth is kept. A cost
 * whose fits both fall (the cost shrinks with the directory) is reported as constant: nothing
 * grows. The log-log slope (y ~ n^k) is reported beside it: about 0 for constant, 1 for
 * linear, small and falling for log.
 */

export type Growth = 'constant' | 'log' | 'linear';

/** How much smaller linear's squared residuals must be than log's for linear to be chosen. */
export const LINEAR_MARGIN = 0.75;

export interface GrowthFit {
  growth: Growth;
  /** Fitted value at the largest n over the fitted value at the smallest, for the chosen model. */
  rangeRatio: number;
  /** Measured value at the largest n over the measured value at the smallest. */
  measuredRatio: number;
  /** Exponent k of a fit y = c n^k (least squares on ln y against ln n). */
  powerExponent: number;
  /** Root mean square residuals of each model, in the cost's unit. */
  rms: { constant: number; log: number; linear: number };
}

/** Least squares y = a + b x: [a, b, sum of squared residuals]. */
function line(xs: number[], ys: number[]): [number, number, number] {
  const n = xs.length;
  const mx = xs.reduce((s, x) => s + x, 0) / n;
  const my = ys.reduce((s, y) => s + y, 0) / n;
  let sxy = 0;
  let sxx = 0;
  for (let i = 0; i < n; i++) {
    sxy += (xs[i]! - mx) * (ys[i]! - my);
    sxx += (xs[i]! - mx) ** 2;
  }
  const b = sxx === 0 ? 0 : sxy / sxx;
  const a = my - b * mx;
  let ss = 0;
  for (let i = 0; i < n; i++) ss += (ys[i]! - a - b * xs[i]!) ** 2;
  return [a, b, ss];
}

/**
 * Classifies the growth of `ys` measured at directory sizes `ns` (at least 3 points, n > 0).
 * @param flat the relative change across the range below which a cost counts as constant
 */
export function classifyGrowth(ns: number[], ys: number[], flat = 0.1): GrowthFit {
  if (ns.length !== ys.length || ns.length < 3) {
    throw new RangeError('classifyGrowth needs at least 3 points, as many sizes as costs');
  }
  const mean = ys.reduce((s, y) => s + y, 0) / ys.length;
  const ssConst = ys.reduce((s, y) => s + (y - mean) ** 2, 0);
  const logs = ns.map((n) => Math.log(n));
  const [la, lb, ssLog] = line(logs, ys);
  const [na, nb, ssLin] = line(ns, ys);
  const lo = Math.min(...ns);
  const hi = Math.max(...ns);
  const logRatio = (la + lb * Math.log(hi)) / (la + lb * Math.log(lo));
  const linRatio = (na + nb * hi) / (na + nb * lo);
  const positive = ys.every((y) => y > 0);
  const powerExponent = positive ? line(logs, ys.map(Math.log))[1] : Number.NaN;
  const rms = {
    constant: Math.sqrt(ssConst / ys.length),
    log: Math.sqrt(ssLog / ys.length),
    linear: Math.sqrt(ssLin / ys.length),
  };
  const better: Growth = ssLin < LINEAR_MARGIN * ssLog ? 'linear' : 'log';
  const betterRatio = better === 'linear' ? linRatio : logRatio;
  const growth: Growth =
    Math.abs(betterRatio - 1) < flat || (lb <= 0 && nb <= 0) ? 'constant' : better;
  return {
    growth,
    rangeRatio: betterRatio,
    measuredRatio: ys[ns.indexOf(hi)]! / ys[ns.indexOf(lo)]!,
    powerExponent,
    rms,
  };
}
