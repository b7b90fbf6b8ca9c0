module.exports = () => require('./tla.mjs');
