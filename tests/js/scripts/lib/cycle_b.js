exports.name = 'b';
const a = require('./cycle_a.js');
exports.sawA = { name: a.name, loaded: a.loaded === true };
