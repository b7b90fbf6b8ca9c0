// Imports of a package beside this file (node_modules/dual): "exports"
// under the "import" condition, and a subpath.
export { flavour } from 'dual';
export { default as extra } from 'dual/extra';
