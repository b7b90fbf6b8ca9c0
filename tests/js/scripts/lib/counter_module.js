// Module state proves caching: every require() gets the same instance.
let count = 0;
module.exports = {
  next: () => ++count,
  filename: __filename,
  dirname: __dirname,
  isMain: require.main === module,
};
