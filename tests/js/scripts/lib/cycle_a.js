// Half of a require() cycle: a sees b's partial exports and vice versa.
exports.name = 'a';
const b = require('./cycle_b');
exports.seenB = b.name;
exports.bSawA = b.sawA;
exports.loaded = true;
