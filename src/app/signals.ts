/** The stop signals a service (or the cluster primary) obeys. */

/** Where stop signals come from: the process's own, or a test's. */
export interface SignalSource {
  once(handler: (signal: string) => void): void;
}

export const processSignals: SignalSource = {
  once(handler) {
    let fired = false;
    const on = (signal: NodeJS.Signals): void => {
      if (fired) return;
      fired = true;
      handler(signal);
    };
    process.on('SIGTERM', on);
    process.on('SIGINT', on);
  },
};
