/** Runs `check` until it stops throwing, or throws its last error once `ms` have passed. */
export async function eventually(check: () => void | Promise<void>, ms = 10_000): Promise<void> {
  const until = Date.now() + ms;
  for (;;) {
    try {
      return await check();
    } catch (error) {
      if (Date.now() > until) throw error;
      await new Promise((resolve) => setTimeout(resolve, 25));
    }
  }
}
