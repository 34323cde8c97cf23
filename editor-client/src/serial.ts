// A request made one at a time: a call while one runs is not sent beside it; the request runs once
// more when the running one ends, however many calls came meanwhile (the lists the sidebar asks
// for again on every update that may change them).
export function oneAtATime(run: () => Promise<void>): () => Promise<void> {
  let running = false;
  let again = false;
  return async () => {
    if (running) {
      again = true;
      return;
    }
    running = true;
    try {
      do {
        again = false;
        await run();
      } while (again);
    } finally {
      running = false;
    }
  };
}
