// When the server stops by itself, whether and when it is started again: after a wait that doubles
// with each stop (1 s, 2 s, 4 s, …), at most a few times within a few minutes; a server that keeps
// stopping is left stopped, and the user is told. No `vscode`, no timers: the clock is given.

export interface RestartPolicy {
  /** the wait before the restart after the 1st, 2nd, … stop within `windowMs`; one stop more and it gives up */
  delaysMs: number[];
  windowMs: number;
}

/** 1, 2, 4, 8 and 16 s: five restarts within 3 minutes, then no more. */
export const RESTARTS: RestartPolicy = { delaysMs: [1000, 2000, 4000, 8000, 16000], windowMs: 3 * 60_000 };

/** The restart a stop brings: the `attempt`th of at most `of` within the window, after `delayMs`. */
export interface Restart {
  attempt: number;
  of: number;
  delayMs: number;
}

export class Restarts {
  /** when the server stopped by itself, within the window */
  private stops: number[] = [];

  constructor(
    readonly policy: RestartPolicy = RESTARTS,
    private readonly now: () => number = Date.now,
  ) {}

  /** The server stopped by itself now: the restart to make, or null when it stopped too often. */
  stopped(): Restart | null {
    const now = this.now();
    this.stops = [...this.stops.filter((t) => now - t < this.policy.windowMs), now];
    const attempt = this.stops.length;
    const of = this.policy.delaysMs.length;
    return attempt <= of ? { attempt, of, delayMs: this.policy.delaysMs[attempt - 1] } : null;
  }

  /** The user started the server: the stops before count no more. */
  reset(): void {
    this.stops = [];
  }

  /** "3 minutes", "90 seconds": the window, in words. */
  window(): string {
    const s = Math.round(this.policy.windowMs / 1000);
    return s % 60 === 0 ? `${s / 60} minute${s === 60 ? '' : 's'}` : `${s} seconds`;
  }
}
