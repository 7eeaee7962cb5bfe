// What a build keeps between its steps and across an interruption: the contract of the work directory, on disk or in memory.
/** Durable state between the steps of a build (plan, build-shard, finalize) and across an interruption (resume). */
export interface WorkDir {
  /** Directory for spilled unit records, or undefined for a memory-only twin. */
  readonly root: string | undefined;
  writeJson(rel: string, value: unknown): void;
  readJson<T>(rel: string): T | undefined;
  /** Writes the parts one after the other as one file, atomically. */
  writeBytes(rel: string, parts: readonly Uint8Array[]): void;
  readBytes(rel: string): Uint8Array | undefined;
  /**
   * Appends the parts to a file (made with its folder when missing); a kill may leave the last append cut short. The
   * file stays open for the next append until `close`, `removeFolder` or `destroy`.
   */
  append(rel: string, parts: readonly Uint8Array[]): void;
  /** Closes the files kept open for appending (a later append opens them again). */
  close(): void;
  /** This process's step ended: the records it made (`own`, `claimOwner`) say so to other machines, and are no longer kept fresh. */
  release(): void;
  /** `length` bytes at `offset`, or undefined when the file is missing or shorter. */
  readRange(rel: string, offset: number, length: number): Uint8Array | undefined;
  exists(rel: string): boolean;
  /** Names of the entries of a folder, sorted; [] when it does not exist. */
  list(rel: string): string[];
  /** Removes a folder and all it holds, or a single file. */
  removeFolder(rel: string): void;
  /** Removes the whole work directory. */
  destroy(): void;
  /** Bytes of a file, or undefined when it is missing. */
  size(rel: string): number | undefined;
  /**
   * Why what is at the work directory's place is not a build's state (a file, a link, a folder of other files), so
   * that neither --force removes it nor a build takes it for another's; undefined when it is one, or nothing is there.
   */
  foreign(): string | undefined;
  /**
   * Makes the work directory for a new build, which must not find one (an interrupted, running or sharded build's
   * state): a WorkStateError then, with nothing touched. Two builds started into one output cannot both claim it.
   * `command` (`build`, `plan`) is recorded with its owner, so a step finding no plan there yet can say whose it is.
   */
  claim(command?: string): void;
  /**
   * Whether the work directory is a build's that ended before it had a plan (killed while reading), or a `plan`'s
   * for shards that ended before its end: its owner is recorded and no longer runs, and there is nothing to continue.
   * A new build may replace it without --force.
   */
  abandoned(): boolean;
  /**
   * Removes the work directory of a build that has ended (`--force`, or `abandoned`), moved aside first so that no
   * process removes one another has claimed since it looked: then a WorkStateError, and it stays.
   */
  retire(): void;
  /**
   * Removes what a claim or a removal of this work directory killed part-way left beside it (`NAME.retiring-TAG`,
   * `NAME.claiming-TAG`) when it holds only a build's state, but a claim under way and state a `retire` is about to
   * put back (their owner runs); never anything else.
   */
  sweep(): void;
  /**
   * Records this process as the build working here (a build after `claim`, a resumed build taking it over, a plan
   * while it reads: it removes the record once the plan is written, as shards work in what it leaves).
   */
  own(as?: string): void;
  /**
   * A process recorded as working here (a build, or a shard in `owners/`; `only`: the one that file records) when it
   * is another one still running: "pid N" (and its machine) and the file that records it. On this machine known by
   * its pid and start (a pid reused is not it); on another one, sharing the volume, by its record kept fresh (LEASE_MS).
   */
  liveOwner(only?: string): { who: string; file: string } | undefined;
  /**
   * Records this process in `as` unless another one running is recorded there (then it, as
   * `liveOwner` says, and nothing is written): two processes claiming at once cannot both get it, the file made by an
   * exclusive link, and one left by a process that ended replaced only as it was seen (under a lock beside it).
   */
  claimOwner(as: string): { who: string; file: string } | undefined;
}
