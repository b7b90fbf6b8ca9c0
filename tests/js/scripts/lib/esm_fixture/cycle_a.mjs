// Half of an import cycle: a's binding is live in b once a has run.
import { fromB } from './cycle_b.mjs';
export const fromA = 'a';
export function both() { return fromA + fromB(); }
