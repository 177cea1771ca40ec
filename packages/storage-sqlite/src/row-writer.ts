/**
 * A table's multi-row upserts with their parameters filled in place: one reused array per
 * statement size (`sql.chunks` gives a handful of sizes), each statement run as soon as its
 * rows are in. Building an array per chunk of records instead, grown row by row, was a third
 * of all the commit of 100,000 updates into 500,000 labels allocated (about 1 GB for its
 * 930,000 records).
 */

/** The reused parameter arrays of one table's statements, by length. */
export class ParamArrays {
  readonly #arrays = new Map<number, unknown[]>();

  /** The array of `length` parameters (its values are those of the last statement). */
  get(length: number): unknown[] {
    let params = this.#arrays.get(length);
    if (params === undefined) this.#arrays.set(length, (params = new Array<unknown>(length)));
    return params;
  }
}

/** Fills and runs one table's upserts: `add` each row in turn, `sizes` rows a statement. */
export class TableRows<R> {
  #statement = 0;
  #row = 0;
  #params: unknown[] | undefined;

  /**
   * @param width parameters per row
   * @param set writes a record's row into the parameters from an index (throws RangeError or
   * TypeError for a value the table cannot hold)
   * @param run runs the upsert of `rows` rows over `params`
   * @param sizes the statements' row counts (`sql.chunks` of the table's records, exact)
   */
  constructor(
    private readonly width: number,
    private readonly set: (out: unknown[], at: number, record: R) => void,
    private readonly arrays: ParamArrays,
    private readonly run: (rows: number, params: unknown[]) => void,
    private readonly sizes: readonly number[],
  ) {}

  /** Adds the next row; the statement runs once its last row is in. */
  add(record: R): void {
    const rows = this.sizes[this.#statement];
    if (rows === undefined) throw new RangeError('more rows than the statements were sized for');
    this.#params ??= this.arrays.get(rows * this.width);
    this.set(this.#params, this.#row * this.width, record);
    if (++this.#row < rows) return;
    this.run(rows, this.#params);
    this.#statement++;
    this.#row = 0;
    this.#params = undefined;
  }
}
