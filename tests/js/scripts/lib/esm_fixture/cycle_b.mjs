import { fromA } from './cycle_a.mjs';
export function fromB() { return 'b' + fromA; }
