// import() from a CommonJS module.
module.exports = () => import('./typed/util.js').then((m) => m.twice(21));
