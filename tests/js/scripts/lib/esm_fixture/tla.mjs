// Top-level await: importers wait for it.
export const value = await new Promise((resolve) => setTimeout(() => resolve('awaited'), 5));
